"""Migration 2: the tokens' generation, one row that every issue and revocation moves on.

An API process keeps the tokens it looked up in memory, with the generation it read them at,
and reads this one row per request: a token revoked (or issued) through any process changes
it, and every process drops its cached tokens on its next request (`api.tokens`).
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 2
TITLE = "the tokens' generation, so that a revocation reaches every API process at once"


def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE TABLE {api_token_generation} ("
                     " id INTEGER PRIMARY KEY CHECK (id = 1), generation BIGINT NOT NULL)")
    database.execute(cursor, "INSERT INTO {api_token_generation} (id, generation) VALUES (1, 0)")
