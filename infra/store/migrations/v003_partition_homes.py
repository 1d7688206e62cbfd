"""Migration 3: the directory of where each partition of the log lives (`infra.store.homes`).

Empty, and never read, in an installation of one database; with `SABOT_PARTITION_DATABASES`
set, the main database's directory records each partition's home at its first write.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 3
TITLE = "the directory of partitions' homes, for tournaments spread over several databases"


def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE TABLE {partition_homes} ("
                     " partition TEXT PRIMARY KEY, home TEXT NOT NULL)")
