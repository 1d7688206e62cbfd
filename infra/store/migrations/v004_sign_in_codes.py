"""Migration 4: sign-in codes, the links and PINs on the organiser's sign-in slips.

One row a slip: the SHA-256 of its link's code (the key) and of its PIN with the player's
name, the player and tournament it signs in, when it expires, when it was used (each slip
signs in once) and when it was revoked (a new slip for the same player revokes the old one).
Neither the code nor the PIN is kept (`api.sign_in`).
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 4
TITLE = "sign-in codes: the links and PINs of the players' sign-in slips, kept hashed"


# IF NOT EXISTS: the tests that rebuild an older store drop only the tables they know.
def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE TABLE IF NOT EXISTS {sign_in_codes} ("
                     " code_hash TEXT PRIMARY KEY, pin_hash TEXT NOT NULL,"
                     " player TEXT NOT NULL, tournament TEXT NOT NULL,"
                     " created_at TEXT NOT NULL, expires_at TEXT NOT NULL,"
                     " used_at TEXT, revoked_at TEXT)")
    database.execute(cursor, "CREATE INDEX IF NOT EXISTS sign_in_codes_pin"
                     " ON {sign_in_codes} (pin_hash)")
