"""Commands to one aggregate from two services (two processes, say) on one PostgreSQL store
queue on the aggregate's lock in the database (`infra.store.aggregate_locks`) instead of
racing: a command that lost once is not refused, whatever the contention."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from domain.game.settings import Variant
from domain.table import commands as c
from infra.errors import SettingsError
from infra.services import tables
from infra.settings import DEFAULT_LOCK_WAIT, lock_wait
from infra.store.aggregate_locks import AggregateBusy, AggregateLocks
from tests.integration.test_table_service import a_service, open_table

pytestmark = pytest.mark.postgres

WRITERS = 8  # threads a service
COMMANDS = 60  # a thread


def test_racing_services_queue_instead_of_conflicting(postgres_url: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # one optimistic attempt, one reload: without the lock, a second lost race is a Conflict
    monkeypatch.setattr(tables, "RETRIES", 2)
    with a_service(postgres_url) as first, a_service(postgres_url) as second:
        table_id = open_table(first, "queued", Variant.PUNTO_BANCO, players=1, chips=100)
        player = first.state(table_id).players()[0]
        second.table(table_id)

        def adjust(n: int) -> None:
            service = (first, second)[n % 2]
            service.execute(table_id, c.AdjustChips(command_id=f"adjust-{n}", player=player,
                                                    delta=1, reason="queue"))

        with ThreadPoolExecutor(2 * WRITERS) as pool:
            list(pool.map(adjust, range(2 * WRITERS * COMMANDS)))
        [seat] = first.state(table_id).seats
        assert seat.chips == 100 + 2 * WRITERS * COMMANDS
        assert all(first.recorded_command(f"adjust-{n}") is not None
                   for n in range(2 * WRITERS * COMMANDS))
        assert first.locks.granted + second.locks.granted > 0  # the queued path was taken


def test_a_lock_held_too_long_is_busy(postgres_url: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABOT_LOCK_WAIT_SECONDS", "0.5")
    with a_service(postgres_url) as first, a_service(postgres_url) as second:
        table_id = open_table(first, "held", Variant.PUNTO_BANCO, players=1, chips=100)
        holder, waiter = AggregateLocks(), AggregateLocks()
        try:
            with holder.hold(first.database, table_id), \
                    pytest.raises(AggregateBusy, match="another process"), \
                    waiter.hold(second.database, table_id):
                pass
            with waiter.hold(second.database, table_id):  # released with the holder's block
                assert waiter.granted == 1
        finally:
            holder.close()
            waiter.close()


def test_sqlite_holds_nothing(sqlite_url: str) -> None:
    with a_service(sqlite_url) as service:
        locks = AggregateLocks()
        assert not locks.held(service.database)
        done = threading.Event()
        with locks.hold(service.database, uuid.uuid4()):
            done.set()
        assert done.is_set() and locks.granted == 0


def test_the_wait_is_a_setting_with_a_clear_refusal() -> None:
    assert lock_wait({}) == DEFAULT_LOCK_WAIT
    assert lock_wait({"SABOT_LOCK_WAIT_SECONDS": "2.5"}) == 2.5
    with pytest.raises(SettingsError, match="SABOT_LOCK_WAIT_SECONDS must be seconds"):
        lock_wait({"SABOT_LOCK_WAIT_SECONDS": "soon"})
