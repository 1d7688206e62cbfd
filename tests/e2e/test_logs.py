"""Logs and request ids for real: a `sabot serve` subprocess and a `sabot worker` subprocess on
the embedded broker share one PostgreSQL store (its URL carrying a password). One command
sent over HTTP with an `X-Request-ID` leaves the table awaiting a timed decision: the API
answers that id and logs its `http.request` line with it, and the worker, playing the
deadline that command's outbox sent, logs its task's lines with the same id. No token,
`Authorization` header or password appears in either process's log."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.tokens import Grant, Role, TokenStore
from infra.services.tables import TableService
from tests.client import CLIENT
from tests.e2e.test_api import free_port
from tests.e2e.test_api_deadlines import deal_to_the_naturals
from tests.integration.test_workers import ROOT, Worker

pytestmark = pytest.mark.postgres

KEY = bytes(range(32)).hex()
PASSWORD = "pw-never-logged-7f3a"


class Served:
    """A `sabot serve --no-worker` subprocess, its standard error kept in a file."""

    def __init__(self, cwd: Path, database_url: str) -> None:
        self.log = cwd / "serve.log"
        self.url = f"http://127.0.0.1:{free_port()}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_BROKER_URL": "",
               "SABOT_DATABASE_URL": database_url, "SABOT_SECRET_KEY": KEY}
        with self.log.open("w") as stderr:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "api.cli", "serve", "--no-worker", "--host", "127.0.0.1",
                 "--port", self.url.rsplit(":", 1)[1]],
                cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        deadline = time.monotonic() + 30
        while True:
            try:
                if CLIENT.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "sabot serve never answered /health"
            time.sleep(0.1)

    def lines(self) -> list[dict[str, Any]]:
        text = self.log.read_text()
        assert all(line.startswith("{") for line in text.splitlines()), text  # JSON only
        return [json.loads(line) for line in text.splitlines()]

    def logged(self, request_id: str) -> list[dict[str, Any]]:
        """Every line, once the request `request_id` is logged (just after its answer)."""
        deadline = time.monotonic() + 10
        while not any(line.get("request_id") == request_id for line in self.lines()):
            assert time.monotonic() < deadline, f"{request_id} never logged"
            time.sleep(0.05)
        return self.lines()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def topology(postgres_url: str, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Served, Worker, str]]:
    """The API and a worker on one store whose URL has a password (trust ignores it), and an
    organiser's token."""
    database_url = postgres_url.replace("postgres@", f"postgres:{PASSWORD}@", 1)
    assert PASSWORD in database_url
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY)
    with TableService(url=database_url, secret_key=bytes.fromhex(KEY)) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
    served = Served(tmp_path, database_url)
    try:
        worker = Worker(tmp_path, "--database", database_url, "--no-director")
        try:
            yield served, worker, token
        finally:
            worker.stop()
    finally:
        served.stop()


def test_one_request_id_from_the_api_into_the_worker(
        topology: tuple[Served, Worker, str]) -> None:
    served, worker, token = topology
    headers = {"Authorization": f"Bearer {token}"}

    def send(kind: str, request_id: str | None = None, command_id: str | None = None,
             **fields: Any) -> httpx.Response:
        traced = {"X-Request-ID": request_id} if request_id else {}
        response = CLIENT.post(f"{served.url}/tables/timed/commands",
                               headers={**headers, **traced}, timeout=10,
                               json={"kind": kind, "command_id": command_id or uuid.uuid4().hex,
                                     **fields})
        assert response.status_code == 200, response.text
        return response

    opened = CLIENT.post(f"{served.url}/tables", headers=headers, timeout=10, json={
        "name": "timed", "variant": "punto-banco", "settings": {"decision_seconds": 1}})
    assert opened.status_code == 201, opened.text
    assert re.fullmatch("[0-9a-f]{32}", opened.headers["X-Request-ID"])  # none given: made
    deal_to_the_naturals(send)
    request_id = f"e2e-{uuid.uuid4().hex}"
    command_id = f"naturals-{uuid.uuid4().hex}"
    answered = send("show-naturals", request_id, command_id)  # the punter must now decide
    assert answered.headers["X-Request-ID"] == request_id

    played = worker.wait_for(lambda line: line.get("request_id") == request_id
                             and line["event"] == "deadline.played")
    assert played[0]["task"] == "sabot.expire_decision"
    assert played[0]["caused_by"].endswith("/" + command_id)  # scoped to the caller
    assert played[0]["table"] == answered.json()["table_id"]
    worker.wait_for(lambda line: line.get("request_id") == request_id
                    and " succeeded in " in line["event"])

    unknown = CLIENT.get(f"{served.url}/nowhere", headers={"X-Request-ID": "bad id!"}, timeout=5)
    assert unknown.status_code == 404
    assert re.fullmatch("[0-9a-f]{32}", unknown.headers["X-Request-ID"])  # invalid: replaced

    lines = served.logged(unknown.headers["X-Request-ID"])
    requests = [line for line in lines if line["event"] == "http.request"]
    mine = [line for line in requests if line["request_id"] == request_id]
    assert len(mine) == 1, requests[-3:]
    assert {k: mine[0][k] for k in ("method", "path", "status", "level")} == {
        "method": "POST", "path": "/tables/{table}/commands", "status": 200,
        "level": "info"}
    assert mine[0]["duration_ms"] > 0
    assert any(line["request_id"] == unknown.headers["X-Request-ID"] and line["status"] == 404
               and line["path"] is None for line in requests)
    assert len(requests) >= 14  # every request, one line each
    assert not any(line["event"].startswith('127.0.0.1:') for line in lines)  # no access log

    logged = served.log.read_text() + "".join(json.dumps(line) + "\n" for line in worker.lines)
    logged += "".join(worker.other)
    for secret in (token, "Bearer", "Authorization", PASSWORD):
        assert secret not in logged
