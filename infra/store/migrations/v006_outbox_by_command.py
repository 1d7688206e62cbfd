"""Migration 6: the outbox indexed by command id.

A command's effects are marked dispatched by their command id (`infra.store.outbox`,
`Dispatcher`: `UPDATE outbox ... WHERE command_id = ...`). Without an index that UPDATE read the
whole outbox, which holds a day of dispatched effects (`SABOT_OUTBOX_RETENTION`): PostgreSQL's
CPU for each command grew with the outbox, milliseconds an event on a busy installation
(issue 30). With it, a mark reads the command's own rows.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 6
TITLE = "the outbox indexed by command id: a command's effects marked without reading them all"


def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE INDEX IF NOT EXISTS outbox_command ON {outbox} (command_id)")
