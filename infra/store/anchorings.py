"""What every writing process says of its anchoring, where the whole installation reads it.

A writer's checkpointer (`infra.store.checkpointer.Checkpointer`) records after each attempt to
checkpoint how its store's checkpoints fare in its process (`Anchoring`): a row of the store's
`anchorings` table (migration 7) for each process and store. `/ready`, `/metrics` and `sabot
audit status` read the installation's anchoring (`infra.store.checkpointer.anchoring(database)`):
this process's own writers, as they are now, and what the other processes reported within
`FRESH_SECONDS` (a writer that keeps failing reports at every retry, every
`SABOT_CHECKPOINT_SECONDS`). So a checkpoint failing in the embedded worker of `sabot serve`, a
director or another replica shows in every process's answers within one checkpoint interval;
before, only the failing process's own `/ready` and metrics said so.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable
from typing import NamedTuple

from infra.store.database import Database

FRESH_SECONDS = 120.0
"""A report older than this is a process gone (or one that has written nothing since)."""


class Anchoring(NamedTuple):
    """How a store's checkpoints fare in a process: the store (its checkpoint file's name),
    the attempts that wrote none, why the last one failed (None: it did not), and the seconds
    since the file's latest checkpoint was signed (None: none yet)."""

    database: str
    failures: int
    failing: str | None
    age: float | None


def process_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def report(database: Database, state: Anchoring) -> None:
    """Record `state` as this process's anchoring of its store."""
    with database.transaction(write=True) as cursor:
        database.execute(
            cursor, "INSERT INTO {anchorings} (process, store, failures, failing, age,"
            " reported_ms) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (process, store) DO UPDATE SET"
            " failures = excluded.failures, failing = excluded.failing, age = excluded.age,"
            " reported_ms = excluded.reported_ms",
            (process_name(), state.database, state.failures, state.failing, state.age,
             int(time.time() * 1000)))


def reported(database: Database) -> list[Anchoring]:
    """What the other processes reported within `FRESH_SECONDS`, each report's age added to
    the checkpoint's."""
    now = time.time()
    rows = database.read_all(
        "SELECT store, failures, failing, age, reported_ms FROM {anchorings}"
        " WHERE process <> ? AND reported_ms >= ?",
        (process_name(), int((now - FRESH_SECONDS) * 1000)))
    return [Anchoring(row["store"], int(row["failures"]), row["failing"],
                      None if row["age"] is None
                      else float(row["age"]) + max(0.0, now - row["reported_ms"] / 1000))
            for row in rows]


def merged(states: Iterable[Anchoring]) -> list[Anchoring]:
    """One `Anchoring` a store: failures added, the reason of any failing, the youngest
    checkpoint's age."""
    stores: dict[str, Anchoring] = {}
    for state in sorted(states, key=lambda a: a.database):
        seen = stores.get(state.database)
        stores[state.database] = state if seen is None else Anchoring(
            state.database, seen.failures + state.failures, seen.failing or state.failing,
            min((a for a in (seen.age, state.age) if a is not None), default=None))
    return list(stores.values())
