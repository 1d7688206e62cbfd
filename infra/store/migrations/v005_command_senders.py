"""Migration 5: the command log records who sent each command, sealed.

`command_log` gains `sender` (`infra.store.senders`: `player:<name>`, `<role>:<token id>` or
`house`), and `seal`/`seal_key`: the store's signing key's Ed25519 signature of the command's
row (`infra.store.signing.command_message`) and that key's id. Rows recorded before have none
of them: `sabot audit verify` reports their commands as unattributed, not as discrepancies.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database
from infra.store.migrations.v001_initial import add_column

VERSION = 5
TITLE = "command senders: who sent each command, sealed with the signing key"

COLUMNS = {"sqlite": ("sender TEXT", "seal BLOB", "seal_key TEXT"),
           "postgres": ("sender text", "seal bytea", "seal_key text")}


# Added only when missing: the tests that rebuild an older store drop only what they know.
def apply(database: Database, cursor: Any) -> None:
    for column in COLUMNS[database.dialect]:
        add_column(database, cursor, "command_log", column)
