"""Migration 7: the anchoring each writing process reports (`infra.store.anchorings`).

A checkpoint failing in one process (the embedded worker of `sabot serve`, a director, another
replica) was seen only by that process's own `/ready` and metrics; the installation reads this
table instead, so the failure shows wherever one asks.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 7
TITLE = "the anchoring each writing process reports, read by /ready, /metrics and audit status"


# IF NOT EXISTS: the tests that rebuild an older store drop only the tables they know.
def apply(database: Database, cursor: Any) -> None:
    database.execute(
        cursor, "CREATE TABLE IF NOT EXISTS {anchorings} (process TEXT NOT NULL,"
        " store TEXT NOT NULL, failures BIGINT NOT NULL, failing TEXT, age DOUBLE PRECISION,"
        " reported_ms BIGINT NOT NULL, PRIMARY KEY (process, store))")
