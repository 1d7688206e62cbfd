"""Migration 10: who checkpoints the store (`infra.store.checkpoint_lease`).

Every writing process folded the store's new events and signed a checkpoint of its own every
interval; one row now says which process does it for all, until when, and whether it is a
worker's (the lease's home).
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 10
TITLE = "one process checkpoints the store for all its writers, by lease"


# IF NOT EXISTS: the tests that rebuild an older store drop only the tables they know.
def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE TABLE IF NOT EXISTS {checkpoint_lease} (id INTEGER PRIMARY"
                     " KEY, holder TEXT NOT NULL, home INTEGER NOT NULL,"
                     " expires DOUBLE PRECISION NOT NULL)")
