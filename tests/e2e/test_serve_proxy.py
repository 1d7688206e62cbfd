"""`sabot serve` behind a proxy and over TLS (real processes on free ports): a trusted proxy's
`X-Forwarded-For` gives each client its own PIN tries, an untrusted one's is ignored, and a
browser signed in over TLS gets a `Secure` session cookie."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from api.sign_in import SignInCodes
from api.tokens import TokenStore
from tests.e2e.test_api import KEY, a_service, free_port

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
PROXY = "127.0.0.2"


@contextmanager
def sabot_serve(postgres_url: str, tmp_path: Path, *options: str,
                scheme: str = "http") -> Iterator[str]:
    with serve_process(postgres_url, tmp_path, *options, scheme=scheme) as (_, base):
        yield base


@contextmanager
def serve_process(postgres_url: str, tmp_path: Path, *options: str, scheme: str = "http",
                  env: dict[str, str] | None = None
                  ) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """`sabot serve --no-worker` on a free port, once it answers: the process and its URL;
    its log in `tmp_path/serve.log`."""
    port = free_port()
    base = f"{scheme}://127.0.0.1:{port}"
    with (tmp_path / "serve.log").open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--no-worker",
             "--database", postgres_url, *options], cwd=ROOT, stdout=subprocess.DEVNULL,
            stderr=log, env={**os.environ, "SABOT_SECRET_KEY": KEY.hex(), **(env or {})})
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    httpx.get(f"{base}/health", timeout=1, verify=False)
                    break
                except httpx.TransportError:
                    assert server.poll() is None and time.monotonic() < deadline, \
                        (tmp_path / "serve.log").read_text()
                    time.sleep(0.1)
            yield server, base
        finally:
            server.terminate()
            server.wait(timeout=10)


def from_address(address: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=5)


def pin_try(client: httpx.Client, base: str, forwarded_for: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    return client.post(f"{base}/sign-in/pin", json={"player": "nobody", "pin": "000000"},
                       headers=headers).status_code


def test_each_client_behind_a_trusted_proxy_has_its_own_pin_tries(
        postgres_url: str, tmp_path: Path) -> None:
    with sabot_serve(postgres_url, tmp_path, "--forwarded-allow-ips", PROXY) as base, \
            from_address(PROXY) as proxy, from_address("127.0.0.5") as stranger:
        assert [pin_try(proxy, base, "127.0.0.3") for _ in range(6)] == [401] * 5 + [429]
        assert pin_try(proxy, base, "127.0.0.4") == 401  # another client: its own tries
        # an address that is not the proxy names whom it likes: its own address is counted
        assert [pin_try(stranger, base, "127.0.0.4") for _ in range(6)] == [401] * 5 + [429]
        assert [pin_try(proxy, base, "127.0.0.4") for _ in range(4)] == [401] * 4


def self_signed(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                   .sign(key, hashes.SHA256()))
    cert, pem = folder / "cert.pem", folder / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    pem.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()))
    return cert, pem


def test_over_tls_the_session_cookie_is_secure(postgres_url: str, tmp_path: Path) -> None:
    cert, pem = self_signed(tmp_path)
    with sabot_serve(postgres_url, tmp_path, "--ssl-certfile", str(cert), "--ssl-keyfile",
                     str(pem), scheme="https") as base:
        service = a_service(postgres_url)
        try:
            codes = SignInCodes(service.database, TokenStore(service.database), KEY)
            code, _, _ = codes.issue(str(uuid.uuid4()), "ann")
        finally:
            service.close()
        opened = httpx.get(f"{base}/sign-in?code={code}", verify=False, timeout=5)
        assert opened.status_code == 303, opened.text
        cookie = opened.headers["set-cookie"]
        assert cookie.startswith("sabot_session=") and "Secure" in cookie, cookie


def test_tls_files_go_together(postgres_url: str) -> None:
    lone = subprocess.run([sys.executable, "-m", "api.cli", "serve", "--ssl-certfile",
                           "cert.pem", "--database", postgres_url], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert lone.returncode != 0 and "--ssl-keyfile" in lone.stderr, lone.stderr
    assert "Traceback" not in lone.stderr
