"""One process checkpoints a store for all its writers, by lease (issue 36: every writer folded
and signed the whole store's events every interval, an API replica's CPU growing with the
director's writes). The holder checkpoints whoever wrote; the others' writes are covered
without their folding anything; a worker's process takes the lease from a replica; a holder
killed outright (SIGKILL) leaves its lease to run out, and the next writer takes it over.
On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from domain.game.settings import Variant
from infra.services.tables import TableService
from infra.store.checkpoint_lease import TURNS, CheckpointLease
from infra.store.checkpointer import Checkpointer, begin_checkpoints
from infra.store.checkpoints import Checkpoint, checkpoint_path, last_checkpoint
from infra.store.database import Database
from tests.integration.test_shared_checkpoints import two_writers
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table, play

SECONDS = 1.0  # a lease of 3 s: a turn late under the suite's load still renews it
ROOT = Path(__file__).resolve().parents[2]

# A writer of its own process: a worker's (the lease's home); it writes once, then idles.
KILLED = """
import sys, time
from domain.game.settings import Variant
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table, play
service = a_service(sys.argv[1])
play(service, open_table(service, "killed", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE), 1,
     prefix="killed")
print("written", flush=True)
time.sleep(600)
"""


@pytest.fixture
def writers(database_url: str, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[tuple[TableService, TableService]]:
    yield from two_writers(database_url, monkeypatch, SECONDS)


def folds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The lease holder of each writer whose turn wrote a checkpoint, in order."""
    written: list[str] = []
    write = Checkpointer._write

    def recorded(self: Checkpointer, force: bool) -> Checkpoint | None:
        checkpoint = write(self, force)
        if checkpoint is not None:
            written.append(self.lease.holder)
        return checkpoint

    monkeypatch.setattr(Checkpointer, "_write", recorded)
    return written


def holder(database: Database) -> str | None:
    """Who holds the store's checkpoint lease now (`host:pid/writer`), if anyone."""
    row = database.read_one("SELECT holder FROM {checkpoint_lease} WHERE expires > ?",
                            (time.time(),))
    return None if row is None else str(row["holder"])


def covered(database: Database, seconds: float) -> Checkpoint:
    """The file's last checkpoint once it covers every event of the store (else fails)."""
    path = checkpoint_path(database)
    assert path is not None
    head = database.last_notification_id()
    deadline = time.monotonic() + seconds
    while (latest := last_checkpoint(path)) is None or latest.head < head:
        assert time.monotonic() < deadline, (latest, head)
        time.sleep(0.05)
    return latest


def until(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_one_writer_folds_and_signs_the_checkpoints_of_both(
        writers: tuple[TableService, TableService], monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = writers
    written = folds(monkeypatch)
    for n in range(3):
        for service, name in ((first, "first"), (second, "second")):
            play(service, open_table(service, f"{name}-{n}", Variant.PUNTO_BANCO, players=2,
                                     **SMALL_SHOE), 1, prefix=f"{name}-{n}")
        time.sleep(SECONDS)
    database = first.recorder.database
    covered(database, 5 * SECONDS + 2)
    assert len(written) >= 2, written  # the holder's turns went on while both wrote
    assert set(written) == {holder(database)}, written  # and no one else folded


def test_a_worker_takes_the_lease_from_a_replica_and_one_run_out_is_taken(
        writers: tuple[TableService, TableService]) -> None:
    database = writers[0].recorder.database
    replica, other = CheckpointLease(database, 1.0, home=False), CheckpointLease(database, 1.0)
    worker = CheckpointLease(database, 1.0, home=True)
    now = time.time() + 3600  # past any lease the fixture's writers hold
    assert replica.hold(now)
    assert not other.hold(now + 1)
    assert worker.hold(now + 1)  # a worker's process is the lease's home
    assert not replica.hold(now + 2)
    assert worker.hold(now + 2)  # renewed by its holder
    assert not other.hold(now + 2 + TURNS - 0.1)  # not run out yet
    assert other.hold(now + 2 + TURNS + 0.1)  # run out: its holder is gone
    other.release()  # a clean exit lets it go: taken at once
    assert replica.hold(now + 2 + TURNS + 0.2)


def test_a_worker_s_process_takes_the_lease_at_its_start_so_no_replica_folds(
        writers: tuple[TableService, TableService], database_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    replica, _ = writers
    written = folds(monkeypatch)
    monkeypatch.setenv("SABOT_CHECKPOINT_HOME", "1")  # as `sabot worker` sets it
    worker = a_service(database_url)
    try:
        checkpointer = worker.recorder.checkpointer()
        assert checkpointer is not None and checkpointer.lease.home
        begin_checkpoints(worker)  # no write of the worker's: it has yet to take a task
        database = replica.recorder.database
        until(lambda: holder(database) == checkpointer.lease.holder, 5 * SECONDS + 5,
              "the worker's process took the lease at its start")
        play(replica, open_table(replica, "replica", Variant.PUNTO_BANCO, players=2,
                                 **SMALL_SHOE), 1, prefix="replica")
        covered(database, 5 * SECONDS + 2)
        assert written and set(written) == {checkpointer.lease.holder}, written
    finally:
        worker.close()


def test_a_holder_killed_outright_leaves_the_lease_to_the_next_writer(
        writers: tuple[TableService, TableService], database_url: str) -> None:
    first, _ = writers
    database = first.recorder.database
    env = {**os.environ, "SABOT_CHECKPOINT_HOME": "1", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-c", KILLED, database_url], env=env,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline() == "written\n"
        mark = f"{socket.gethostname()}:{process.pid}/"
        until(lambda: (holder(database) or "").startswith(mark), 5 * SECONDS + 5,
              "the worker's process took the lease")
        covered(database, 5 * SECONDS + 2)
        process.send_signal(signal.SIGKILL)
        process.wait()
    finally:
        process.kill()
        process.wait()
    play(first, open_table(first, "after", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE), 1,
         prefix="after")
    covered(database, (TURNS + 3) * SECONDS + 3)
    assert not (holder(database) or mark).startswith(mark)


def test_a_close_waits_for_the_turn_in_flight_before_the_store_is_closed(
        writers: tuple[TableService, TableService], monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn runs on its timer's thread: a close from another thread while the turn uses the
    store (its lease's statement waiting on a lock) closed the store under it; on SQLite the
    process died of a segmentation fault (CI, 2026-11-29)."""
    first, second = writers
    checkpointer = first.recorder.checkpointer()
    assert checkpointer is not None
    events: list[str] = []
    holds = Checkpointer._holds

    def recorded(self: Checkpointer) -> bool:
        held = holds(self)
        if self is checkpointer:  # not the other writer's turns
            events.append("turn")
        return held

    monkeypatch.setattr(Checkpointer, "_holds", recorded)
    blocker = second.recorder.database
    CheckpointLease(blocker, SECONDS).hold(0.0)  # the lease's row, run out long ago
    with blocker.transaction(write=True) as cursor:  # the lease's row locked by another
        blocker.execute(cursor, "UPDATE {checkpoint_lease} SET expires = 0 WHERE id = 1")
        checkpointer.begin()
        until(lambda: checkpointer._writer is not None, 5, "the turn began")
        closing = threading.Thread(target=checkpointer.close,
                                   kwargs={"then": lambda: events.append("closed")})
        closing.start()
        closing.join(0.5)
        assert closing.is_alive() and "closed" not in events, events  # waiting for the turn
    closing.join(30)
    assert not closing.is_alive()
    assert events[-2:] == ["turn", "closed"] and events.count("closed") == 1, events
