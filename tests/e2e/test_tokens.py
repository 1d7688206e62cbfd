"""Tokens over real HTTP and the real CLI: they expire, they are revoked by themselves or by
their listed id (at once in the process that revokes, and in every other API process from its
next request), `token list` never shows one, and a croupier token for a table that is not open
is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from api.cli import main
from api.tokens import GENERATION_FRESH_SECONDS, Grant, Role
from tests.client import CLIENT
from tests.e2e.test_api import Api
from tests.e2e.test_deploy import KEY, ROOT, free_port

pytestmark = pytest.mark.postgres


def status(api: Api, token: str) -> tuple[int, str | None]:
    response = api.call("GET", "/tables/nowhere", token)
    return response.status_code, response.json().get("rule")


def test_revoked_by_id_or_by_itself(api: Api, postgres_url: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--database", postgres_url]
    first, second = api.token(Role.AUDITOR), api.token(Role.PLAYER, player="ann")
    assert status(api, first) == status(api, second) == (404, "unknown-table")
    assert main(["token", "list", "--json", *db]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed) == 2 and first not in str(listed) and second not in str(listed)
    auditor = next(t for t in listed if t["grant"]["role"] == "auditor")
    assert main(["token", "revoke", auditor["id"], *db]) == 0
    assert main(["token", "revoke", second, *db]) == 0
    capsys.readouterr()
    api.store.revoke(auditor["id"])  # the API's process forgets its cached grant at once
    api.store.revoke(second)
    assert status(api, first) == (401, "token-revoked")
    assert status(api, second) == (401, "token-revoked")
    assert main(["token", "list", "--json", *db]) == 0
    assert all(t["revoked_at"] for t in json.loads(capsys.readouterr().out))
    assert main(["token", "list", *db]) == 0
    assert auditor["id"] in capsys.readouterr().out
    assert main(["token", "revoke", "0123456789ab", *db]) == 1
    assert main(["token", "revoke", "not-an-id", *db]) == 1


def test_a_token_expires(api: Api) -> None:
    token = api.store.issue(Grant(role=Role.AUDITOR), timedelta(seconds=1))
    assert status(api, token) == (404, "unknown-table")
    time.sleep(1.1)  # the cached grant keeps its expiry
    assert status(api, token) == (401, "token-expired")


def test_a_croupier_of_an_unknown_table_is_refused(api: Api, postgres_url: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["token", "create", "--role", "croupier", "--table", "nope",
                 "--database", postgres_url]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "no table 'nope'" in err
    assert api.store.issued() == []
    with pytest.raises(SystemExit) as usage:
        main(["token", "create", "--role", "auditor", "--expires-in", "soon",
              "--database", postgres_url])
    assert usage.value.code == 2 and "not a duration" in capsys.readouterr().err


@contextmanager
def two_servers(postgres_url: str, tmp_path: Path, token: str) -> Iterator[list[str]]:
    """Two `sabot serve` processes, each with `token` cached: the URL each answers it at."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_SECRET_KEY": KEY}
    ports = [free_port(), free_port()]
    servers: list[subprocess.Popen[bytes]] = []
    for port in ports:
        with (tmp_path / f"serve-{port}.log").open("w") as log:  # the server keeps its own copy
            servers.append(subprocess.Popen(
                [sys.executable, "-m", "api.cli", "serve", "--no-worker", "--port", str(port),
                 "--database", postgres_url],
                cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=log))
    try:
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        headers = {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 60
        for url in urls:
            while True:
                try:
                    answer = CLIENT.get(url + "/tables/nowhere", headers=headers, timeout=5)
                    break
                except httpx.TransportError:
                    assert time.monotonic() < deadline, f"{url} never answered"
                    time.sleep(0.3)
            assert answer.json()["rule"] == "unknown-table"  # the token opens; now cached
        yield urls
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=20)


def refusal(url: str, token: str) -> tuple[int, str]:
    answer = CLIENT.get(url + "/tables/nowhere", headers={"Authorization": f"Bearer {token}"},
                        timeout=5)
    return answer.status_code, answer.json()["rule"]


def test_a_revocation_reaches_every_api_process_on_its_next_request(
        postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two `sabot serve` processes have the token cached; `sabot token revoke` (a third
    process) revokes it; each refuses it on its next request."""
    assert main(["token", "create", "--role", "auditor", "--database", postgres_url]) == 0
    token = capsys.readouterr().out.strip()
    with two_servers(postgres_url, tmp_path, token) as urls:
        assert main(["token", "revoke", token, "--database", postgres_url]) == 0
        for url in urls:
            assert refusal(url, token) == (401, "token-revoked")


def test_a_revocation_through_one_replica_reaches_the_other_within_a_second(
        postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The API keeps the tokens' generation `GENERATION_FRESH_SECONDS` (no round trip for a
    token), yet a token revoked through one replica (its sign-out) is refused by the other
    within a second: the revocation's notice, not the staleness, made it forget."""
    assert GENERATION_FRESH_SECONDS >= 1
    assert main(["token", "create", "--role", "auditor", "--database", postgres_url]) == 0
    token = capsys.readouterr().out.strip()
    with two_servers(postgres_url, tmp_path, token) as (one, other):
        assert refusal(other, token) == (404, "unknown-table")  # cached, generation fresh
        out = CLIENT.post(one + "/sign-out", timeout=5, headers={
            "Cookie": f"sabot_session={token}", "X-Requested-With": "sabot"})
        assert out.status_code == 200
        revoked = time.monotonic()
        assert refusal(one, token) == (401, "token-revoked")
        while refusal(other, token) != (401, "token-revoked"):
            assert time.monotonic() - revoked < 1.0, "the other replica still takes the token"
            time.sleep(0.05)
