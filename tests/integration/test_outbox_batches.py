"""Marks in batches (`Dispatcher.mark_batch`, the director's): the effects a busy sender sent
are marked in one transaction every so many commands, not one each; an effect sent but not
yet marked when its process dies is sent again by the next relay, never lost."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

import pytest

from domain.table import commands as c
from infra.store.outbox import Effect, Wake
from tests.integration.test_outbox import a_service, a_table, outbox


def seat(service: Any, table_id: uuid.UUID, n: int) -> None:
    service.execute(table_id, c.SeatPlayer(command_id=f"{table_id}:seat{n}", player=f"q{n}",
                                           chips=100))


def test_marks_wait_for_the_batch_and_a_dead_sender_s_are_relayed(postgres_url: str) -> None:
    with a_service(postgres_url) as busy:
        sent: list[Effect] = []
        busy.effects.on(Wake, sent.append)
        busy.effects.mark_batch = 3
        table_id = a_table(busy, f"batch-{uuid.uuid4().hex[:8]}")  # a seat: one wake-up
        seat(busy, table_id, 1)
        assert len(sent) == 2 and len(outbox(busy, pending=True)) == 2  # sent, not marked
        seat(busy, table_id, 2)  # the third command's: the batch is marked
        assert len(sent) == 3 and outbox(busy, pending=True) == []
        seat(busy, table_id, 3)
        # the process dies now, its fourth wake-up sent but not marked
        [unmarked] = outbox(busy, pending=True)
        assert unmarked["effect"] == sent[-1] == Wake(table_id, busy.table(table_id).version)

    with a_service(postgres_url) as successor:
        relayed: list[Effect] = []
        successor.effects.on(Wake, relayed.append)
        assert successor.effects.relay() == 1
        assert relayed == [unmarked["effect"]]  # sent again: its consumer takes a duplicate
        assert outbox(successor, pending=True) == []


def test_a_flush_marks_every_effect_sent_in_one_transaction(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with a_service(postgres_url) as busy:
        busy.effects.on(Wake, lambda _: None)
        busy.effects.mark_batch = 100
        table_id = a_table(busy, f"flush-{uuid.uuid4().hex[:8]}")
        for n in range(1, 10):
            seat(busy, table_id, n)
        assert len(outbox(busy, pending=True)) == 10
        database, writes = busy.database, []
        transaction = database.transaction

        def counted(*, write: bool) -> Any:
            writes.append(write)
            return transaction(write=write)

        monkeypatch.setattr(database, "transaction", counted)
        busy.effects.flush()
        assert writes == [True]  # one transaction for the ten
        busy.effects.flush()  # nothing left to mark: no transaction
        assert writes == [True]
        monkeypatch.undo()
        assert outbox(busy, pending=True) == []


def test_a_timed_batch_is_marked_within_its_seconds_and_at_close(postgres_url: str) -> None:
    with a_service(postgres_url) as busy:  # the API's marks (`Dispatcher.batch_marks`)
        busy.effects.on(Wake, lambda _: None)
        busy.effects.batch_marks(100, 0.2)
        table_id = a_table(busy, f"timed-{uuid.uuid4().hex[:8]}")
        seat(busy, table_id, 1)
        assert len(outbox(busy, pending=True)) == 2  # sent, not marked: no transaction each
        deadline = time.monotonic() + 10
        while outbox(busy, pending=True) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert outbox(busy, pending=True) == []  # the timer marked them
        busy.effects.batch_marks(100, 3600.0)
        seat(busy, table_id, 2)
        assert len(outbox(busy, pending=True)) == 1
        busy.effects.close()  # the process stops: what it sent is marked
        assert outbox(busy, pending=True) == []


def test_a_close_waits_for_the_timer_s_marks_in_flight(postgres_url: str) -> None:
    """The timer marks on its own thread: a close from another thread found nothing left to
    mark and let the store close under the timer's transaction."""
    with a_service(postgres_url) as busy, a_service(postgres_url) as other:
        busy.effects.on(Wake, lambda _: None)
        busy.effects.batch_marks(100, 0.05)
        table_id = a_table(busy, f"closing-{uuid.uuid4().hex[:8]}")
        database = other.database
        with database.transaction(write=True) as cursor:  # the rows locked by another
            database.execute(cursor, "SELECT id FROM {outbox} FOR UPDATE").fetchall()
            seat(busy, table_id, 1)
            time.sleep(0.3)  # the timer's marks wait for the lock
            closing = threading.Thread(target=busy.effects.close)
            closing.start()
            closing.join(0.5)
            assert closing.is_alive()  # waiting for the timer's marks
        closing.join(30)
        assert not closing.is_alive()
        assert outbox(busy, pending=True) == []
