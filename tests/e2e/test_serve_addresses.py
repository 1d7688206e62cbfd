"""`sabot serve` says where to go as it starts: the address to open and the organiser
console's, on standard output, both answering once it runs (a real process on a free port)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.commands.serve import addresses
from tests.client import CLIENT
from tests.e2e.test_api import KEY, free_port

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]


def test_sabot_serve_prints_the_addresses_to_open(postgres_url: str, tmp_path: Path) -> None:
    port = free_port()
    with (tmp_path / "serve.log").open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--no-worker",
             "--database", postgres_url], cwd=ROOT, stdout=subprocess.PIPE, stderr=log,
            text=True, env={**os.environ, "SABOT_SECRET_KEY": KEY.hex()})
        try:
            assert server.stdout is not None
            lines = [server.stdout.readline(), server.stdout.readline()]
            base = f"http://127.0.0.1:{port}"
            assert lines == [f"sabot serve: open {base}/\n",
                             f"sabot serve: the organiser console is {base}/organiser\n"]
            deadline = time.monotonic() + 20
            while True:
                try:
                    console = CLIENT.get(f"{base}/organiser", timeout=1)
                    break
                except httpx.TransportError:
                    assert server.poll() is None and time.monotonic() < deadline, \
                        (tmp_path / "serve.log").read_text()
                    time.sleep(0.1)
            assert console.status_code == 200 and "Organiser" in console.text
            assert CLIENT.get(f"{base}/", timeout=5).status_code == 200
        finally:
            server.terminate()
            server.wait(timeout=10)


def test_on_every_interface_the_address_is_this_machine_s() -> None:
    assert addresses("0.0.0.0", 8000).splitlines()[0].startswith(
        "sabot serve: open http://127.0.0.1:8000/ (on this machine; from another, http://")
    assert addresses("::1", 9000).splitlines() == [
        "sabot serve: open http://[::1]:9000/",
        "sabot serve: the organiser console is http://[::1]:9000/organiser"]
