"""The ledger tables written next to the stored events, in the same transaction.

* `event_chain`: one row per stored event, its stream and global digests (`infra.chain`).
* `command_log`: one row per applied command id: the stream and versions it produced.

The recorders (`infra.recorders`) call `claim_command` before inserting the events, then
`ask_heads` and `append_chain`, inside their insert transaction and while they hold the write
lock (SQLite `BEGIN IMMEDIATE`, PostgreSQL's `LOCK TABLE stored_events IN EXCLUSIVE MODE`):
the chain's head they read cannot move before they commit.

A stream's head is its chain row of highest version: the new events' versions are higher,
or their insert fails on the stored events' primary key.
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


CHAIN_ROWS_PER_INSERT = 1000  # 5000 parameters: under SQLite's limit of 32766


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


def ask_heads(database: Database, cursor: Any, stored_events: Sequence[StoredEvent]) -> None:
    """Query the chain's head and the heads of the streams about to grow, in one statement.

    The rows are read by `append_chain`; in between, a PostgreSQL pipeline can carry the
    events' insert and this query in one round trip.
    """
    ids = dict.fromkeys(_uuid(s.originator_id) for s in stored_events)
    originators = [database.to_db_id(oid) for oid in ids]
    marks = ", ".join("?" * len(originators))
    database.execute(
        cursor,
        "SELECT notification_id, NULL AS originator_id, global_digest AS digest"
        " FROM {event_chain} WHERE notification_id = (SELECT MAX(notification_id)"
        " FROM {event_chain})"
        " UNION ALL"
        " SELECT c.notification_id, c.originator_id, c.stream_digest FROM {event_chain} c"
        f" WHERE c.originator_id IN ({marks}) AND c.originator_version ="
        " (SELECT MAX(originator_version) FROM {event_chain} d"
        " WHERE d.originator_id = c.originator_id)",
        originators,
    )


def append_chain(
    database: Database,
    cursor: Any,
    heads: Sequence[Any],
    stored_events: Sequence[StoredEvent],
    notification_ids: Sequence[int],
) -> None:
    """Digest the events just inserted and append their links to `event_chain`.

    `heads` are the rows of `ask_heads`, read under the same write lock.
    """
    if not stored_events:
        return
    previous_global = GENESIS
    stream_heads: dict[UUID, bytes] = {}
    for row in heads:
        if row["originator_id"] is None:
            if row["notification_id"] >= min(notification_ids):
                raise ChainError(
                    f"event_chain already holds notification {row['notification_id']}, at or "
                    f"after the new event {min(notification_ids)}: the store was altered; "
                    "run `sabot audit verify`"
                )
            previous_global = bytes(row["digest"])
        else:
            stream_heads[database.from_db_id(row["originator_id"])] = bytes(row["digest"])
    rows = []
    for stored, notification_id in zip(stored_events, notification_ids, strict=True):
        oid = _uuid(stored.originator_id)
        version = stored.originator_version
        previous_stream = stream_heads.get(oid, GENESIS)
        stream = stream_digest(previous_stream, oid, version, stored.topic, stored.state)
        previous_global = global_digest(previous_global, notification_id, stream)
        stream_heads[oid] = stream
        rows.append((notification_id, database.to_db_id(oid), version, stream, previous_global))
    # Multi-row INSERTs, not executemany: in a PostgreSQL pipeline they travel with COMMIT.
    for start in range(0, len(rows), CHAIN_ROWS_PER_INSERT):
        chunk = rows[start : start + CHAIN_ROWS_PER_INSERT]
        database.execute(
            cursor,
            "INSERT INTO {event_chain} (notification_id, originator_id, originator_version,"
            " stream_digest, global_digest) VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * len(chunk)),
            [value for row in chunk for value in row],
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


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
