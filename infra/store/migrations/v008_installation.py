"""Migration 8: what the installation says of itself (`infra.store.installation`).

`sabot serve` records there the address people open (its public URL), so that `sabot tournament
sign-in` prints slips that lead to it, whatever port it listens on.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 8
TITLE = "what the installation says of itself: the public URL sabot serve answers on"


# IF NOT EXISTS: the tests that rebuild an older store drop only the tables they know.
def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE TABLE IF NOT EXISTS {installation} (name TEXT PRIMARY KEY,"
                     " value TEXT NOT NULL)")
