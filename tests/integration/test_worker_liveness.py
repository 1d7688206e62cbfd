"""Workers that fail loudly: `/ready` says "no worker alive" within `ALIVE_SECONDS` of the last
one dying (SIGKILL, no goodbye), naming what waits; and a worker whose vault key does not
open the seeds of its store refuses to start, saying why."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from litestar.testing import TestClient

from api.app import create_app
from infra.services.tables import TableService
from infra.store.vault import SeedVault
from tests.integration.test_workers import ROOT, Worker
from workers.heartbeat import ALIVE_SECONDS, BEAT_SECONDS, WAITING

KEY = bytes(range(32))


def test_ready_reports_no_worker_alive_after_the_last_dies(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = TableService(url=postgres_url, secret_key=KEY)
    with TestClient(create_app(service=service, broker_url="")) as client:
        assert "workers" not in client.get("/ready").json()  # no worker ever: an API alone
        monkeypatch.setenv("SABOT_SECRET_KEY", KEY.hex())
        worker = Worker(tmp_path, "--database", postgres_url, "--queue",
                        f"live-{uuid.uuid4().hex[:8]}")
        ready = client.get("/ready").json()
        assert ready["status"] == "ready" and ready["workers"]["alive"] == 1, ready
        os.kill(worker.process.pid, signal.SIGKILL)
        killed = time.monotonic()
        while (ready := client.get("/ready").json())["workers"]["alive"]:
            assert time.monotonic() - killed < ALIVE_SECONDS + BEAT_SECONDS + 1, ready
            time.sleep(0.2)
        assert ready["status"] == "degraded" and ready["workers"]["waiting"] == WAITING
        worker.process.wait()


def test_a_worker_with_another_vault_key_refuses_to_start(postgres_url: str,
                                                          tmp_path: Path) -> None:
    service = TableService(url=postgres_url, secret_key=KEY)
    SeedVault(service.database, KEY).store("a-shoe", bytes(32))
    service.close()
    other = bytes(reversed(range(32))).hex()
    done = subprocess.run([sys.executable, "-m", "api.cli", "worker", "--database",
                           postgres_url], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT),
                                           "SABOT_SECRET_KEY": other, "SABOT_BROKER_URL": ""})
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]  # after a note that a signing key was made
    assert "vault key of this worker does not open the seeds" in line and other not in line
    assert "Traceback" not in done.stderr
