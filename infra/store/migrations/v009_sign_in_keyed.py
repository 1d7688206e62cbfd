"""Migration 9: sign-in slips keyed and counted.

The codes and PINs are now kept as HMAC-SHA-256 under the installation's secret key
(`api.sign_in`), so a copy of the database alone recovers none; the slips made before, kept as
plain SHA-256 (a PIN fell to a million hashes), are revoked: the organiser prints new ones.
`failed_pins` counts the wrong PINs typed against a slip; at `SABOT_PIN_TRIES` it is locked.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from infra.store.database import Database
from infra.store.migrations.v001_initial import add_column

VERSION = 9
TITLE = "sign-in slips keyed (HMAC under the secret key) and locked after wrong PINs"


def apply(database: Database, cursor: Any) -> None:
    add_column(database, cursor, "sign_in_codes", "failed_pins INTEGER NOT NULL DEFAULT 0")
    database.execute(cursor, "UPDATE {sign_in_codes} SET revoked_at = ?"
                     " WHERE used_at IS NULL AND revoked_at IS NULL",
                     (datetime.now(UTC).isoformat(),))
