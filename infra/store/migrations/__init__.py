"""Versioned schema migrations: Sabot's own tables, created and changed by numbered steps, each
applied once per store, in order, under a lock.

A store records the steps it has in `schema_version` (version, title, applied_at); its version
is the highest there, and `LATEST` is this code's. The first process that opens a store to
write upgrades it (the chained recorders' `create_table`: every `SabotApplication`, `sabot
serve`, `worker`, `play`...): `upgrade` reads the version (one read when it is the latest),
else takes the schema lock (SQLite `BEGIN IMMEDIATE`, PostgreSQL the advisory lock
`infra.store.database.SCHEMA_LOCK`), reads it again and applies the missing steps, with their rows,
in that one transaction. A process that waited for the lock finds them applied.
`sabot db upgrade` does the same and says what it did; `sabot db status` only reads.

A store newer than this code (a version above `LATEST`) is refused by every process, readers
too (`SchemaTooNew`): this Sabot would misread or break tables it does not know.

A store with Sabot's tables but no `schema_version` was written before versions were
recorded: it is version 1, unversioned. Migration 1 is idempotent and adopts it (completes its
tables as they were by then), and the next upgrade records it.

Not here: eventsourcing's own tables (`stored_events`, `stored_snapshots`,
`notification_tracking`), which its recorders create as they always did, just before; and the
views' tables (`view_*`, `view_tracking`, `view_failures`), derived data that the projections
create and rebuild (`projections.runner`): a view whose tables change is rebuilt from the
events, not migrated.

To add a migration: a module `vNNN_what.py` in this package with `VERSION` (the next number),
`TITLE` and `apply(database, cursor)`, which changes the schema of both databases
(`database.dialect`) with `database.execute` in the transaction of `cursor`; then append it to
`STEPS`. It runs once per store, so it needs no `IF NOT EXISTS`.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any, Protocol

import msgspec

from infra.errors import StoreError
from infra.store.database import Database
from infra.store.migrations import (
    v001_initial,
    v002_token_generation,
    v003_partition_homes,
    v004_sign_in_codes,
    v005_command_senders,
    v006_outbox_by_command,
    v007_anchorings,
    v008_installation,
    v009_sign_in_keyed,
    v010_checkpoint_lease,
    v011_created_streams,
)


class Step(Protocol):
    VERSION: int
    TITLE: str

    def apply(self, database: Database, cursor: Any) -> None: ...


STEPS: tuple[Step, ...] = (v001_initial, v002_token_generation, v003_partition_homes,
                          v004_sign_in_codes, v005_command_senders,
                          v006_outbox_by_command, v007_anchorings,
                          v008_installation, v009_sign_in_keyed,
                          v010_checkpoint_lease, v011_created_streams)
LATEST = STEPS[-1].VERSION

VERSION_TABLE = ("CREATE TABLE IF NOT EXISTS {schema_version} (version INTEGER PRIMARY KEY,"
                 " title TEXT NOT NULL, applied_at TEXT NOT NULL)")
ADOPTED = "event_chain"  # a table every store written before versions has

log = logging.getLogger("sabot.migrations")


class SchemaTooNew(StoreError):
    """The store was upgraded by a newer Sabot than this one."""

    def __init__(self, version: int) -> None:
        super().__init__(f"store schema {version} is newer than this Sabot ({LATEST}): "
                         "upgrade Sabot")
        self.version = version


class Pending(msgspec.Struct, frozen=True):
    version: int
    title: str


class Status(msgspec.Struct, frozen=True):
    """A store's schema: its `version` (0: a database Sabot never wrote), this Sabot's
    `latest`, whether it predates recorded versions, and the steps an upgrade applies."""

    version: int
    latest: int
    unversioned: bool
    pending: list[Pending]


class Upgrade(msgspec.Struct, frozen=True):
    """What `upgrade` did: the version it found and left, and the steps it applied (none when
    the store was up to date, or another process upgraded it while this one waited)."""

    before: int
    after: int
    applied: list[int]


def status(database: Database) -> Status:
    """The store's schema, read."""
    with database.transaction(write=False) as cursor:
        version, unversioned = _version(database, cursor)
    first = 0 if unversioned else version  # an unversioned store's step 1 is applied again
    pending = [Pending(step.VERSION, step.TITLE) for step in STEPS[first:]]
    return Status(version=version, latest=LATEST, unversioned=unversioned, pending=pending)


def check(database: Database) -> Status:
    """The store's schema; `SchemaTooNew` if a newer Sabot upgraded it."""
    found = status(database)
    if found.version > LATEST:
        raise SchemaTooNew(found.version)
    return found


def upgrade(database: Database) -> Upgrade:
    """Bring the store to `LATEST`, under the schema lock; `SchemaTooNew` if it is newer."""
    found = check(database)
    if not found.pending:
        return Upgrade(before=found.version, after=found.version, applied=[])
    with database.transaction(write=True) as cursor:
        database.lock_schema_once(cursor)
        version, unversioned = _version(database, cursor)
        if version > LATEST:
            raise SchemaTooNew(version)
        database.execute(cursor, VERSION_TABLE)
        applied: list[int] = []
        for step in STEPS[0 if unversioned else version:]:
            step.apply(database, cursor)
            database.execute(cursor, "INSERT INTO {schema_version} (version, title, applied_at)"
                             " VALUES (?, ?, ?)",
                             (step.VERSION, step.TITLE, datetime.now(UTC).isoformat()))
            applied.append(step.VERSION)
    if applied:
        log.info("store schema upgraded from %d to %d", version, LATEST)
    return Upgrade(before=version, after=LATEST, applied=applied)


def _version(database: Database, cursor: Any) -> tuple[int, bool]:
    """The store's version, and whether it is an unversioned store of version 1."""
    if _exists(database, cursor, "schema_version"):
        row = database.execute(cursor, "SELECT MAX(version) AS version"
                               " FROM {schema_version}").fetchone()
        return int(row["version"] or 0), False
    if _exists(database, cursor, ADOPTED):
        return 1, True
    return 0, False


def _exists(database: Database, cursor: Any, table: str) -> bool:
    if database.dialect == "postgres":
        row = database.execute(cursor, "SELECT to_regclass(?) IS NOT NULL AS found",
                               (database.table(table),)).fetchone()
        return bool(row["found"])
    row = database.execute(cursor, "SELECT 1 FROM sqlite_master WHERE type = 'table'"
                           " AND name = ?", (table,)).fetchone()
    return row is not None
