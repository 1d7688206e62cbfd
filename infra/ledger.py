"""The ledger tables written next to the stored events, in the same transaction.

* `event_chain`: one row per stored event, its stream and partition digests (`infra.chain`)
  and its partition (`infra.partitions`). The `global_digest` column chains the events of
  one partition, in notification order; a store chained before partitions has one, `MAIN`
  (the column was added with that default: such stores read and verify as before).
* `command_log`: one row per applied command id: the stream and versions it produced.
* `chain_signatures`: one row per partition a transaction wrote, at its last notification id
  there: the Ed25519 signature of the partition's digest there
  (`infra.signing.head_message`) and the key's id.
* `signing_keys`: the public keys that signed (by key id), recorded by each writer.
* `merkle_tree`: one row, the Merkle tree of all the events so far as a frontier
  (`infra.merkle.Frontier`: size, last notification id, subtree roots), so that a checkpoint
  is one read away.

The recorders (`infra.recorders`) call `claim_command` before inserting the events, then
`ask_heads` and `append_chain`, inside their insert transaction and while they hold the write
lock (SQLite `BEGIN IMMEDIATE`, PostgreSQL's `LOCK TABLE stored_events IN EXCLUSIVE MODE`):
the chain's head they read cannot move before they commit.

A stream's head is its chain row of highest version: the new events' versions are higher,
or their insert fails on the stored events' primary key. A partition's head is its chain row
of highest notification id (index `event_chain_partition`), read with the streams' heads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from eventsourcing.persistence import PersistenceError, StoredEvent

from infra.chain import GENESIS, ChainLink, canonical_bytes, digest_canonical, global_digest
from infra.database import Database
from infra.errors import ChainError, DuplicateCommand, RecordedCommand
from infra.merkle import Frontier, event_leaf
from infra.partitions import MAIN, Partition
from infra.signing import Signer

SCHEMA: dict[str, tuple[str, ...]] = {
    "sqlite": (
        "CREATE TABLE IF NOT EXISTS {event_chain} ("
        " notification_id INTEGER PRIMARY KEY,"
        " originator_id TEXT NOT NULL,"
        " originator_version INTEGER NOT NULL,"
        " stream_digest BLOB NOT NULL,"
        " global_digest BLOB NOT NULL,"
        " partition_key TEXT NOT NULL DEFAULT '',"
        " UNIQUE (originator_id, originator_version))",
        "CREATE TABLE IF NOT EXISTS {command_log} ("
        " command_id TEXT PRIMARY KEY,"
        " originator_id TEXT NOT NULL,"
        " first_version INTEGER NOT NULL,"
        " last_version INTEGER NOT NULL,"
        " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        "CREATE TABLE IF NOT EXISTS {chain_signatures} ("
        " notification_id INTEGER PRIMARY KEY,"
        " key_id TEXT NOT NULL,"
        " signature BLOB NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {signing_keys} ("
        " key_id TEXT PRIMARY KEY,"
        " public_key BLOB NOT NULL,"
        " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        "CREATE TABLE IF NOT EXISTS {merkle_tree} ("
        " id INTEGER PRIMARY KEY CHECK (id = 1),"
        " size INTEGER NOT NULL,"
        " head INTEGER NOT NULL,"
        " frontier BLOB NOT NULL)",
    ),
    "postgres": (
        "CREATE TABLE IF NOT EXISTS {event_chain} ("
        " notification_id bigint PRIMARY KEY,"
        " originator_id uuid NOT NULL,"
        " originator_version bigint NOT NULL,"
        " stream_digest bytea NOT NULL,"
        " global_digest bytea NOT NULL,"
        " partition_key TEXT NOT NULL DEFAULT '',"
        " UNIQUE (originator_id, originator_version))",
        "CREATE TABLE IF NOT EXISTS {command_log} ("
        " command_id text PRIMARY KEY,"
        " originator_id uuid NOT NULL,"
        " first_version bigint NOT NULL,"
        " last_version bigint NOT NULL,"
        " recorded_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE IF NOT EXISTS {chain_signatures} ("
        " notification_id bigint PRIMARY KEY,"
        " key_id text NOT NULL,"
        " signature bytea NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {signing_keys} ("
        " key_id text PRIMARY KEY,"
        " public_key bytea NOT NULL,"
        " recorded_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE IF NOT EXISTS {merkle_tree} ("
        " id integer PRIMARY KEY CHECK (id = 1),"
        " size bigint NOT NULL,"
        " head bigint NOT NULL,"
        " frontier bytea NOT NULL)",
    ),
}


CHAIN_ROWS_PER_INSERT = 1000  # 5000 parameters: under SQLite's limit of 32766


PARTITION_COLUMN = {  # added to a store chained before partitions (SQLite has no IF NOT EXISTS)
    "sqlite": "ALTER TABLE {event_chain} ADD COLUMN partition_key TEXT NOT NULL DEFAULT ''",
    "postgres": "ALTER TABLE {event_chain} ADD COLUMN IF NOT EXISTS partition_key TEXT NOT NULL"
                " DEFAULT ''",
}
PARTITION_INDEX = ("CREATE INDEX IF NOT EXISTS event_chain_partition"
                   " ON {event_chain} (partition_key, notification_id)")


def create_tables(database: Database) -> None:
    """Create the ledger's tables; a store chained before the Merkle tree existed gets its
    tree built from its events, once; one chained before partitions gets the partition
    column (every row in `MAIN`)."""
    with database.transaction(write=True) as cursor:
        for statement in SCHEMA[database.dialect]:
            database.execute(cursor, statement)
        if database.dialect == "postgres" or not database.execute(
            cursor, "SELECT 1 FROM pragma_table_info('event_chain')"
            " WHERE name = 'partition_key'").fetchone():
            database.execute(cursor, PARTITION_COLUMN[database.dialect])
        database.execute(cursor, PARTITION_INDEX)
        if database.execute(cursor, "SELECT 1 FROM {merkle_tree}").fetchone() is None:
            tree, head = Frontier(), 0
            for event in select_events(database, cursor, 0, None):
                tree.append(event_leaf(event.notification_id, event.canonical()))
                head = event.notification_id
            database.execute(
                cursor,
                "INSERT INTO {merkle_tree} (id, size, head, frontier) VALUES (1, ?, ?, ?)"
                " ON CONFLICT (id) DO NOTHING",
                (tree.size, head, tree.to_bytes()),
            )


class StoredRow(NamedTuple):
    """A stored event as the ledger digests it."""

    notification_id: int
    originator_id: UUID
    originator_version: int
    topic: str
    state: bytes

    def canonical(self) -> bytes:
        return canonical_bytes(self.originator_id, self.originator_version, self.topic,
                               self.state)


def select_events(
    database: Database, cursor: Any, after: int, limit: int | None
) -> list[StoredRow]:
    """Stored events with notification ids greater than `after`, in order."""
    rows = database.execute(
        cursor,
        "SELECT {nid} AS notification_id, originator_id, originator_version, topic, state"
        " FROM {stored_events} WHERE {nid} > ? ORDER BY {nid}"
        + (" LIMIT ?" if limit is not None else ""),
        (after, limit) if limit is not None else (after,),
    ).fetchall()
    from_db_id = database.from_db_id
    return [
        StoredRow(row["notification_id"], from_db_id(row["originator_id"]),
                  row["originator_version"], row["topic"], bytes(row["state"]))
        for row in rows
    ]


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


def ask_heads(database: Database, cursor: Any, stored_events: Sequence[StoredEvent],
              partitions: Mapping[UUID, Partition] | None = None) -> None:
    """Query the Merkle frontier and the heads of the streams about to grow and of their
    partitions (`partitions`: by stream id, default `MAIN`), in one statement; each head is
    one row by an index (the stream's last version, the partition's last notification id),
    never a scan.

    The rows are read by `append_chain`; in between, a PostgreSQL pipeline can carry the
    events' insert and this query in one round trip.
    """
    ids = dict.fromkeys(_uuid(s.originator_id) for s in stored_events)
    specs = _specs(ids, partitions)
    last_of_stream = (
        "SELECT * FROM (SELECT 's' AS kind, notification_id, originator_id,"
        " stream_digest AS digest, partition_key FROM {event_chain} WHERE originator_id = ?"
        " ORDER BY originator_version DESC LIMIT 1) AS s{i}"
    )
    last_of_partition = (
        "SELECT * FROM (SELECT 'g{i}' AS kind, notification_id, originator_id,"
        " global_digest AS digest, partition_key FROM {event_chain} WHERE partition_key = {key}"
        " ORDER BY notification_id DESC LIMIT 1) AS g{i}"
    )
    stream_of = ("COALESCE((SELECT partition_key FROM {event_chain} WHERE originator_id = ?"
                 " ORDER BY originator_version DESC LIMIT 1), '')")
    params: list[Any] = [database.to_db_id(oid) for oid in ids]
    for spec in specs:
        params.append(database.to_db_id(spec) if isinstance(spec, UUID) else spec)
    database.execute(
        cursor,
        " UNION ALL ".join(
            [last_of_stream.replace("{i}", str(i)) for i in range(len(ids))]
            + [last_of_partition.replace("{i}", str(i)).replace(
                "{key}", stream_of if isinstance(spec, UUID) else "?")
               for i, spec in enumerate(specs)])
        + " UNION ALL"
        " SELECT 'm', size, NULL, frontier, NULL FROM {merkle_tree} WHERE id = 1",
        params,
    )


def _specs(ids: Iterable[UUID], partitions: Mapping[UUID, Partition] | None) -> list[Partition]:
    """The distinct partitions (keys, or streams whose partition to take) of the streams."""
    given = partitions or {}
    return list(dict.fromkeys(given.get(oid, MAIN) for oid in ids))


def append_chain(
    database: Database,
    cursor: Any,
    heads: Sequence[Any],
    stored_events: Sequence[StoredEvent],
    notification_ids: Sequence[int],
    signer: Signer,
    partitions: Mapping[UUID, Partition] | None = None,
) -> None:
    """Digest the events just inserted, append their links to `event_chain` (each chained in
    its stream and its partition) and their leaves to `merkle_tree`, and sign each new
    partition head.

    `heads` are the rows of `ask_heads` (given the same `partitions`), read under the same
    write lock.
    """
    if not stored_events:
        return
    specs = _specs((_uuid(s.originator_id) for s in stored_events), partitions)
    keys: list[str] = [spec if isinstance(spec, str) else MAIN for spec in specs]
    found: dict[int, tuple[int, bytes]] = {}
    stream_heads: dict[UUID, bytes] = {}
    tree: Frontier | None = None
    for row in heads:
        kind = row["kind"]
        if kind == "m":
            try:
                tree = Frontier.from_bytes(row["notification_id"], bytes(row["digest"]))
            except ValueError as error:
                raise ChainError(f"merkle_tree is malformed ({error}): the store was altered; "
                                 "run `sabot audit verify`") from None
        elif kind.startswith("g"):
            index = int(kind[1:])
            keys[index] = row["partition_key"]
            found[index] = (row["notification_id"], bytes(row["digest"]))
        else:
            stream_heads[database.from_db_id(row["originator_id"])] = bytes(row["digest"])
    if tree is None:
        raise ChainError("merkle_tree has no row: open the store once with table creation")
    previous: dict[str, bytes] = {}
    for index, (head_id, digest) in found.items():
        if head_id >= min(notification_ids):
            raise ChainError(
                f"event_chain already holds notification {head_id} in partition "
                f"{keys[index]!r}, at or after the new event {min(notification_ids)}: the "
                "store was altered; run `sabot audit verify`"
            )
        previous[keys[index]] = digest
    key_of = dict(zip(specs, keys, strict=True))
    given = partitions or {}
    rows = []
    last: dict[str, tuple[int, bytes]] = {}
    for stored, notification_id in zip(stored_events, notification_ids, strict=True):
        oid = _uuid(stored.originator_id)
        key = key_of[given.get(oid, MAIN)]
        version = stored.originator_version
        canonical = canonical_bytes(oid, version, stored.topic, stored.state)
        stream = digest_canonical(stream_heads.get(oid, GENESIS), canonical)
        chained = previous[key] = global_digest(previous.get(key, GENESIS), notification_id,
                                                stream)
        stream_heads[oid] = stream
        last[key] = (notification_id, chained)
        tree.append(event_leaf(notification_id, canonical))
        rows.append((notification_id, database.to_db_id(oid), version, stream, chained, key))
    # Multi-row INSERTs, not executemany: in a PostgreSQL pipeline they travel with COMMIT.
    for start in range(0, len(rows), CHAIN_ROWS_PER_INSERT):
        chunk = rows[start : start + CHAIN_ROWS_PER_INSERT]
        database.execute(
            cursor,
            "INSERT INTO {event_chain} (notification_id, originator_id, originator_version,"
            " stream_digest, global_digest, partition_key) VALUES "
            + ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk)),
            [value for row in chunk for value in row],
        )
    database.execute(
        cursor,
        "UPDATE {merkle_tree} SET size = ?, head = ?, frontier = ? WHERE id = 1",
        (tree.size, notification_ids[-1], tree.to_bytes()),
    )
    signed = sorted(last.values())
    database.execute(
        cursor,
        "INSERT INTO {chain_signatures} (notification_id, key_id, signature) VALUES "
        + ", ".join(["(?, ?, ?)"] * len(signed)),
        [value for head, digest in signed
         for value in (head, signer.key_id, signer.sign_head(head, digest))],
    )


def recorded_keys(database: Database) -> list[str]:
    """The ids of the keys that signed this store, first recorded first."""
    try:
        with database.transaction(write=False) as cursor:
            rows = database.execute(
                cursor, "SELECT key_id FROM {signing_keys} ORDER BY recorded_at").fetchall()
    except PersistenceError:
        return []
    return [row["key_id"] for row in rows]


def record_key(database: Database, cursor: Any, signer: Signer) -> None:
    """Record the signer's public key in the store (once per key)."""
    database.execute(
        cursor,
        "INSERT INTO {signing_keys} (key_id, public_key) VALUES (?, ?)"
        " ON CONFLICT (key_id) DO NOTHING",
        (signer.key_id, signer.public_key),
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
