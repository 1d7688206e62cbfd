"""Every command that writes events leaves, at its exit, a checkpoint covering them: `sabot
serve` and `sabot worker` stopped by SIGTERM, `sabot dispute open` (replayed here, or by a
worker), and `sabot token create/revoke` (which write no event, and leave the store as
anchored as they found it). Each runs as the process it is on a fresh SQLite store, with a
checkpoint timer an hour away, so that only the checkpoint written at exit can cover the
events; then `sabot audit verify` finds the store anchored (exit 0, not 3). `sabot play`,
`sabot demo` and the tournament commands are `tests/integration/test_exit_checkpoints.py`'s.
"""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import pytest

from api.cli import main
from api.tokens import Grant, Role, TokenStore
from infra.services.tables import TableService
from infra.store.checkpoints import last_checkpoint
from tests.client import CLIENT
from tests.e2e.test_logs import KEY, Served
from tests.integration.test_audit import sql
from tests.integration.test_exit_checkpoints import covered_at_exit, sabot
from tests.integration.test_workers import Worker

HOUR = "3600"  # SABOT_CHECKPOINT_SECONDS: no timer fires, only the exit's checkpoint counts


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)  # the embedded broker: .sabot/broker here
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", HOUR)
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY)
    monkeypatch.delenv("SABOT_BROKER_URL", raising=False)
    return f"sqlite:///{tmp_path}/store.db"


def uncovered(url: str) -> int:
    """The events the checkpoint file does not cover."""
    ((events,),) = sql(url, "SELECT COUNT(*) FROM stored_events")
    last = last_checkpoint(Path(url.removeprefix("sqlite:///") + ".checkpoints"))
    return int(events) - (0 if last is None else last.size)


def test_sabot_serve_checkpoints_at_sigterm(store: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with TableService(url=store, secret_key=bytes.fromhex(KEY)) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
    served = Served(tmp_path, store)
    try:
        opened = CLIENT.post(f"{served.url}/tables", timeout=10,
                             headers={"Authorization": f"Bearer {token}"},
                             json={"name": "served", "variant": "punto-banco"})
        assert opened.status_code == 201, opened.text
        assert uncovered(store) > 0  # written, not yet checkpointed
        served.process.send_signal(signal.SIGTERM)
        served.process.wait(timeout=30)
    finally:
        served.stop()
    assert "no checkpoint written" not in served.log.read_text()
    covered_at_exit(store, capsys)


def test_sabot_worker_checkpoints_at_sigterm(store: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    sabot("play", "--coups", "3", "--seed", "5e", "--table", "disputed", "--json",
          "--database", store, cwd=tmp_path)
    assert uncovered(store) == 0
    worker = Worker(tmp_path, "--database", store, "--no-director")  # prefork, the default
    try:
        sabot("dispute", "open", "disputed", "2", "--reason", "a card seen",
              "--database", store, cwd=tmp_path)  # anchored at its exit; the replay is not
        worker.wait_for(lambda line: "sabot.replay_dispute" in line["event"]
                        and " succeeded in " in line["event"])
        assert uncovered(store) > 0  # the verdict, written by the worker
        worker.stop()
        assert worker.process.returncode == 0, worker.other[-20:]
    finally:
        worker.stop()
    assert not [line for line in worker.lines if "no checkpoint written" in line["event"]]
    covered_at_exit(store, capsys)


def test_sabot_dispute_open_here_checkpoints_at_exit(store: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    sabot("play", "--coups", "3", "--seed", "5f", "--table", "disputed", "--json",
          "--database", store, cwd=tmp_path)
    ((before,),) = sql(store, "SELECT COUNT(*) FROM stored_events")
    sabot("dispute", "open", "disputed", "2", "--reason", "a card seen", "--here",
          "--database", store, cwd=tmp_path)
    ((after,),) = sql(store, "SELECT COUNT(*) FROM stored_events")
    assert after > before  # the dispute and its verdict: written, then checkpointed
    covered_at_exit(store, capsys)


def test_sabot_token_commands_leave_the_store_anchored(store: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    sabot("play", "--coups", "2", "--seed", "60", "--json", "--database", store, cwd=tmp_path)
    ((before,),) = sql(store, "SELECT COUNT(*) FROM stored_events")
    token = sabot("token", "create", "--role", "auditor", "--database", store,
                  cwd=tmp_path).stdout.strip()
    sabot("token", "revoke", token, "--database", store, cwd=tmp_path)
    assert sql(store, "SELECT COUNT(*) FROM stored_events") == [(before,)]  # no event written
    covered_at_exit(store, capsys)


def test_a_director_dealing_on_postgresql_with_redis_checkpoints_at_sigterm(
        postgres_url: str, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`sabot worker --pool solo` on PostgreSQL and Redis, its director dealing a bots'
    tournament, stopped by SIGTERM: the director's turn ends and its store closes before the
    worker exits, so the exit's checkpoint covers every event (its daemon thread dealt on
    after it: 720 events left unanchored, `sabot audit verify` exit 3)."""
    monkeypatch.chdir(tmp_path)  # PostgreSQL's key and checkpoints: .sabot/ here
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", HOUR)
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY)
    db = ["--database", postgres_url]
    assert main(["tournament", "create", "--preset", "chemin-de-fer-freeze-out", "--name",
                 "sigterm", "--set", "starting_chips=100000", *db]) == 0
    for n in range(6):
        assert main(["tournament", "register", "sigterm", f"bot-{n}", "--bot", *db]) == 0
    assert main(["tournament", "start", "sigterm", *db]) == 0
    capsys.readouterr()
    ((before,),) = sql(postgres_url, "SELECT COUNT(*) FROM stored_events")
    worker = Worker(tmp_path, "--broker", redis_url, "--pool", "solo", "--queue",
                    f"sigterm-{uuid.uuid4().hex[:8]}", *db)
    try:
        worker.wait_for(lambda line: line["event"] == "director started")
        deadline = time.monotonic() + 60
        while sql(postgres_url, "SELECT COUNT(*) FROM stored_events")[0][0] < before + 200:
            assert time.monotonic() < deadline, "the director never dealt"
            time.sleep(0.2)
        worker.stop()  # SIGTERM while it deals
        assert worker.process.returncode == 0, worker.other[-20:]
    finally:
        worker.stop()
    assert not [line for line in worker.lines if "no checkpoint written" in line["event"]]
    assert [line for line in worker.lines if line["event"] == "director stopped"]  # not cut
    covered_at_exit(postgres_url, capsys)
