"""The ledger tables written next to the stored events, in the same transaction.

* `event_chain`: one row per stored event, its stream and global digests (`infra.chain`).
* `command_log`: one row per applied command id: the stream and versions it produced.

The recorders (`infra.recorders`) call `claim_command` before inserting the events and
`append_chain` after, inside their insert transaction, while they hold the write lock
(SQLite `BEGIN IMMEDIATE`, PostgreSQL's `LOCK TABLE stored_events IN EXCLUSIVE MODE`): reading
the chain's head there is safe, no other writer can extend it meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from eventsourcing.persistence import StoredEvent

from infra.chain import GENESIS, ChainLink, global_digest, stream_digest
from infra.database import Database
from infra.errors import ChainError, DuplicateCommand, RecordedCommand

SCHEMA: dict[str, tuple[str, ...]] = {
    "sqlite": (
        "CREATE TABLE IF NOT EXISTS {event_chain} ("
        " notification_id INTEGER PRIMARY KEY,"
        " originator_id TEXT NOT NULL,"
        " originator_version INTEGER NOT NULL,"
        " stream_digest BLOB NOT NULL,"
        " global_digest BLOB NOT NULL,"
        " UNIQUE (originator_id, originator_version))",
        "CREATE TABLE IF NOT EXISTS {command_log} ("
        " command_id TEXT PRIMARY KEY,"
        " originator_id TEXT NOT NULL,"
        " first_version INTEGER NOT NULL,"
        " last_version INTEGER NOT NULL,"
        " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
    ),
    "postgres": (
        "CREATE TABLE IF NOT EXISTS {event_chain} ("
        " notification_id bigint PRIMARY KEY,"
        " originator_id uuid NOT NULL,"
        " originator_version bigint NOT NULL,"
        " stream_digest bytea NOT NULL,"
        " global_digest bytea NOT NULL,"
        " UNIQUE (originator_id, originator_version))",
        "CREATE TABLE IF NOT EXISTS {command_log} ("
        " command_id text PRIMARY KEY,"
        " originator_id uuid NOT NULL,"
        " first_version bigint NOT NULL,"
        " last_version bigint NOT NULL,"
        " recorded_at timestamptz NOT NULL DEFAULT now())",
    ),
}


def create_tables(database: Database) -> None:
    with database.transaction(write=True) as cursor:
        for statement in SCHEMA[database.dialect]:
            database.execute(cursor, statement)


def claim_command(
    database: Database,
    cursor: Any,
    command_id: str | UUID | None,
    stored_events: Sequence[StoredEvent],
) -> None:
    """Record the command id, or raise `DuplicateCommand` (the transaction then rolls back).

    The command is recorded against the stream of its first event and that stream's versions
    in this batch. A command that records no event is not logged (replaying it is harmless).
    """
    if command_id is None or not stored_events:
        return
    first = stored_events[0]
    versions = [
        s.originator_version for s in stored_events if s.originator_id == first.originator_id
    ]
    database.execute(
        cursor,
        "INSERT INTO {command_log} (command_id, originator_id, first_version, last_version)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (command_id) DO NOTHING RETURNING command_id",
        (
            str(command_id),
            database.to_db_id(_uuid(first.originator_id)),
            min(versions),
            max(versions),
        ),
    )
    if cursor.fetchone() is None:
        raise DuplicateCommand(str(command_id), recorded_command(database, cursor, command_id))


def recorded_command(
    database: Database, cursor: Any, command_id: str | UUID
) -> RecordedCommand | None:
    row = database.execute(
        cursor,
        "SELECT originator_id, first_version, last_version FROM {command_log}"
        " WHERE command_id = ?",
        (str(command_id),),
    ).fetchone()
    if row is None:
        return None
    return RecordedCommand(
        database.from_db_id(row["originator_id"]), row["first_version"], row["last_version"]
    )


def append_chain(
    database: Database,
    cursor: Any,
    stored_events: Sequence[StoredEvent],
    notification_ids: Sequence[int],
) -> None:
    """Digest the events just inserted and append their links to `event_chain`."""
    if not stored_events:
        return
    head = database.execute(
        cursor,
        "SELECT notification_id, global_digest FROM {event_chain}"
        " ORDER BY notification_id DESC LIMIT 1",
    ).fetchone()
    if head is not None and head["notification_id"] >= min(notification_ids):
        raise ChainError(
            f"event_chain already holds notification {head['notification_id']}, at or after the "
            f"new event {min(notification_ids)}: the store was altered; run `sabot audit verify`"
        )
    previous_global = GENESIS if head is None else bytes(head["global_digest"])
    stream_heads: dict[UUID | str, bytes] = {}
    rows = []
    for stored, notification_id in zip(stored_events, notification_ids, strict=True):
        oid = stored.originator_id
        if oid not in stream_heads:
            stream_heads[oid] = _stream_head(database, cursor, oid, stored.originator_version)
        stream = stream_digest(
            stream_heads[oid], oid, stored.originator_version, stored.topic, stored.state
        )
        previous_global = global_digest(previous_global, notification_id, stream)
        stream_heads[oid] = stream
        rows.append(
            (
                notification_id,
                database.to_db_id(_uuid(oid)),
                stored.originator_version,
                stream,
                previous_global,
            )
        )
    cursor.executemany(
        database.sql(
            "INSERT INTO {event_chain} (notification_id, originator_id, originator_version,"
            " stream_digest, global_digest) VALUES (?, ?, ?, ?, ?)"
        ),
        rows,
    )


def select_links(database: Database, cursor: Any, after: int, limit: int) -> list[ChainLink]:
    """Chain rows with notification ids greater than `after`, in order."""
    rows = database.execute(
        cursor,
        "SELECT notification_id, originator_id, originator_version, stream_digest,"
        " global_digest FROM {event_chain} WHERE notification_id > ?"
        " ORDER BY notification_id LIMIT ?",
        (after, limit),
    ).fetchall()
    return [
        ChainLink(
            notification_id=row["notification_id"],
            originator_id=database.from_db_id(row["originator_id"]),
            originator_version=row["originator_version"],
            stream_digest=bytes(row["stream_digest"]),
            global_digest=bytes(row["global_digest"]),
        )
        for row in rows
    ]


def _stream_head(database: Database, cursor: Any, originator_id: UUID | str, version: int) -> bytes:
    row = database.execute(
        cursor,
        "SELECT stream_digest FROM {event_chain} WHERE originator_id = ?"
        " AND originator_version < ? ORDER BY originator_version DESC LIMIT 1",
        (database.to_db_id(_uuid(originator_id)), version),
    ).fetchone()
    return GENESIS if row is None else bytes(row["stream_digest"])


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
