"""A writer stuck in the middle of its transaction freezes nothing for ever: the readers in
notification order (checkpoints, the views' catch-up) give up waiting for it after
`SABOT_WRITERS_WAIT_SECONDS` and carry on, and PostgreSQL ends its session once it has sat
idle in its transaction for `SABOT_IDLE_IN_TRANSACTION_SECONDS`; then both go through.

The stuck writer takes a connection of the store's own pool (configured as every writer's)
and does what an insert does first: the writers' and its partition's locks, then an event
row, which draws a notification id; then it sleeps.
"""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path

import psycopg
import pytest

from domain.game.settings import Variant
from infra.errors import WritersInFlight
from infra.store import ledger
from infra.store.checkpointer import write_checkpoint
from projections.registry import VIEWS
from projections.runner import Runner
from tests.conftest import POSTGRES_URL
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table

# serial: a bound of seconds against the checkpointer's own retry (every 10 s), which a
# loaded machine can make write first (tests/conftest.py)
pytestmark = [pytest.mark.postgres, pytest.mark.serial]

WAIT = 1  # seconds the readers wait for writers in flight
IDLE = 8  # seconds before the server ends a session idle in its transaction
LOOSE = 20  # seconds: the bound of every poll here, so that the test fails, never hangs


def alive(pid: int) -> bool:
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        return admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s",
                             (pid,)).fetchone() is not None


def test_a_stuck_writer_delays_checkpoints_and_views_by_a_bound_until_its_session_ends(
        postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("SABOT_WRITERS_WAIT_SECONDS", str(WAIT))
    monkeypatch.setenv("SABOT_IDLE_IN_TRANSACTION_SECONDS", str(IDLE))
    monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "store.checkpoints"))
    with a_service(postgres_url) as service:
        open_table(service, "before", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
        runner = Runner(service, VIEWS)
        assert runner.catch_up("recall") > 0
        database = service.database
        datastore = service.recorder.datastore  # type: ignore[attr-defined]
        with datastore.get_connection() as stuck:
            pid = stuck.info.backend_pid
            stuck.autocommit = False  # a writer's transaction, left open
            cursor = stuck.cursor()
            ledger.lock_partitions(database, cursor, ["stuck"])
            cursor.execute(
                f"INSERT INTO {database.table('stored_events')} (originator_id,"
                " originator_version, topic, state) VALUES (%s, 1, 'stuck', 'x')",
                (uuid.uuid4(),))
            # others write on: another partition never waits for the stuck one
            open_table(service, "during", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)

            started = time.monotonic()
            with pytest.raises(WritersInFlight, match=str(pid)):
                ledger.committed_head(database)
            assert runner.catch_up("recall") == 0  # gave up, applied nothing, raised nothing
            with caplog.at_level(logging.WARNING):
                assert service.recorder.checkpointer().flush() is None  # type: ignore[attr-defined]
            assert time.monotonic() - started < IDLE  # each gave up after WAIT, not at IDLE
            assert alive(pid)  # ...while the stuck writer was still there
            assert f"server pids {pid}" in caplog.text and "trying again later" in caplog.text
            assert "no checkpoint written" in caplog.text

            deadline = time.monotonic() + IDLE + LOOSE
            while alive(pid):  # the server ends the stuck session
                assert time.monotonic() < deadline, f"session {pid} is still idle in transaction"
                time.sleep(0.2)
            with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):
                cursor.execute("SELECT 1")  # the stuck writer learns it was ended
        head = ledger.committed_head(database)  # nothing in flight now: at once
        assert runner.catch_up("recall") > 0  # the events written meanwhile, applied
        assert runner.lag("recall").position == head
        checkpoint = write_checkpoint(service)
        assert checkpoint is not None and checkpoint.head == head
