"""The ledger tables written next to the stored events, in the same transaction.

* `event_chain`: one row per stored event, its stream and partition digests (`infra.store.chain`)
  and its partition (`infra.store.partitions`). The `global_digest` column chains the events of
  one partition, in notification order; a store chained before partitions has one, `MAIN`
  (the column was added with that default: such stores read and verify as before).
* `command_log`: one row per applied command id (`infra.store.command_log`: its claims and
  their seals).
* `chain_signatures`: one row per partition a transaction wrote, at its last notification id
  there, and one at the last event of each command a run of them logs (`append_chain`): the
  Ed25519 signature of the partition's digest there
  (`infra.store.signing.head_message`) and the key's id.
* `signing_keys`: the public keys that signed (by key id), recorded by each writer: data,
  checked against the keys trusted outside the database (`infra.store.trust`), never a root.
* `merkle_tree`: one row, the Merkle tree of all the events so far as a frontier
  (`infra.store.merkle.Frontier`: size, last notification id, subtree roots), so that a checkpoint
  is one read away.

Their schema is the migrations' (`infra.store.migrations`). The recorders (`infra.store.recorders`)
call `ask_versions` (the streams a decision read, which must not have moved since: `ReadAt`)
and `command_log.claim_commands` before inserting the events, then `ask_heads` and
`append_chain`, inside their insert transaction and while they hold the write lock (SQLite
`BEGIN IMMEDIATE`, PostgreSQL the partitions' advisory locks, `lock_partitions`): the chain's
head they read cannot move before they commit.

A stream's head is its chain row of highest version: the new events' versions are higher,
or their insert fails on the stored events' primary key. A partition's head is its chain row
of highest notification id (index `event_chain_partition`), read with the streams' heads.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent

from infra.errors import ChainError, WritersInFlight
from infra.settings import writers_wait
from infra.store.chain import GENESIS, ChainLink, canonical_bytes, digest_canonical, global_digest
from infra.store.command_log import Claim
from infra.store.database import Database, PostgresDatabase
from infra.store.merkle import Frontier, event_leaf
from infra.store.partitions import MAIN, Partition
from infra.store.signing import Signer, head_message, signature_valid
from infra.store.trust import recorded_key_problems

log = logging.getLogger("sabot.ledger")

CHAIN_COLUMNS = (("notification_id", "bigint"), ("originator_id", "uuid"),
                 ("originator_version", "bigint"), ("stream_digest", "bytea"),
                 ("global_digest", "bytea"), ("partition_key", "text"))
SIGNATURE_COLUMNS = (("notification_id", "bigint"), ("key_id", "text"), ("signature", "bytea"))


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


class ReadAt(NamedTuple):
    """A stream another stream's decision read, at its version then: the decision's events
    are written only if the stream is still there (e.g. a table's command decided in its
    tournament's room, not paused: a pause recorded in between decides it again)."""

    originator_id: UUID
    version: int


class StreamMoved(IntegrityError):
    """A stream a decision read was written since (a version conflict: decide again)."""


def _versions_query(database: Database, ids: Collection[UUID]) -> tuple[str, list[Any]]:
    """The read of the version each stream of `ids` is at (a stream with no event left out),
    and its parameters: each stream's last version found at the end of its index, one seek a
    stream (`MAX ... GROUP BY` read every event of every stream asked: a director's look at
    its tables grew with their coups, 16 % of PostgreSQL's CPU in the topology benchmark).
    On PostgreSQL the ids are one array (in binary, as `Database.insert_rows` sends them), so
    that the statement's text is always the same."""
    db_ids = [database.to_db_id(i) for i in ids]
    if database.dialect == "postgres":
        return ("SELECT latest.originator_id, latest.originator_version AS version"
                " FROM unnest(%b::uuid[]) AS ids(id), LATERAL (SELECT originator_id,"
                " originator_version FROM {stored_events} WHERE originator_id = ids.id"
                " ORDER BY originator_version DESC LIMIT 1) AS latest", [db_ids])
    return ("WITH ids(id) AS (VALUES " + ", ".join("(?)" for _ in db_ids) + ")"
            " SELECT id AS originator_id, version FROM (SELECT id, (SELECT"
            " MAX(originator_version) FROM {stored_events} WHERE originator_id = ids.id)"
            " AS version FROM ids) WHERE version IS NOT NULL", db_ids)


def ask_versions(database: Database, cursor: Any, read: Sequence[ReadAt]) -> None:
    """Query the versions of the streams a decision read, inside the insert's transaction
    once it holds the partitions' locks (the writers of those streams hold them too, so
    nothing moves them until this transaction ends); `check_versions` reads the rows."""
    database.execute(cursor, *_versions_query(database, [r.originator_id for r in read]))


def stream_versions(database: Database, ids: Collection[UUID]) -> dict[UUID, int]:
    """The version each stream of `ids` is at in the store now (a stream with no event is
    left out), in one read."""
    if not ids:
        return {}
    rows = database.read_all(*_versions_query(database, ids))
    return {database.from_db_id(row["originator_id"]): row["version"] for row in rows}


def check_versions(database: Database, rows: Sequence[Any], read: Sequence[ReadAt]) -> None:
    """Raise `StreamMoved` if a stream `read` names is past the version read."""
    now = {database.from_db_id(row["originator_id"]): row["version"] for row in rows}
    moved = [r for r in read if now.get(r.originator_id) != r.version]
    if moved:
        raise StreamMoved(f"stream {moved[0].originator_id} moved past version "
                          f"{moved[0].version} since the decision read it")


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


def resolve_partitions(database: Database, cursor: Any, stored_events: Sequence[StoredEvent],
                       given: Mapping[UUID, Partition] | None) -> dict[UUID, str]:
    """The partition of each stream about to grow: the key `given` for it, or the partition
    of the stream `given` names (read from its chain: a stream never changes partition), or
    `MAIN`."""
    resolved: dict[UUID, str] = {}
    for oid in dict.fromkeys(_uuid(s.originator_id) for s in stored_events):
        spec = (given or {}).get(oid, MAIN)
        if isinstance(spec, UUID):
            row = database.execute(
                cursor, "SELECT partition_key FROM {event_chain} WHERE originator_id = ?"
                " ORDER BY originator_version DESC LIMIT 1", (database.to_db_id(spec),),
            ).fetchone()
            spec = MAIN if row is None else row["partition_key"]
        resolved[oid] = spec
    return resolved


LOCK_CLASS = 0x5AB0  # pg_advisory_xact_lock(LOCK_CLASS, hashtext(schema)): shared by writers
PARTITION_LOCK_CLASS = 0x5AB1  # (PARTITION_LOCK_CLASS, hashtext(schema/key)): one writer


def lock_partitions(database: Database, cursor: Any, keys: Iterable[str]) -> None:
    """PostgreSQL: take, until the transaction ends, the writers' shared lock (so that
    `committed_head` can wait for the writers in flight) and each partition's own lock, in
    key order. Writers to different partitions never wait on each other."""
    assert isinstance(database, PostgresDatabase)
    schema = database.datastore.schema
    sorted_keys = sorted(set(keys))
    database.execute(
        cursor,
        "SELECT pg_advisory_xact_lock_shared(?, hashtext(?))"
        + "".join(", pg_advisory_xact_lock(?, hashtext(?))" for _ in sorted_keys),
        [LOCK_CLASS, schema,
         *(value for key in sorted_keys for value in (PARTITION_LOCK_CLASS, f"{schema}/{key}"))],
    )


def committed_head(database: Database, wait: float | None = None) -> int:
    """The highest notification id at or below which every event is committed: what a
    reader that follows notification order (projections, the Merkle tree) may read up to.

    SQLite has one writer at a time: the last event. PostgreSQL's writers of different
    partitions commit in any order, so the ids below the last one may still be in flight:
    read the last id, then wait for the writers that held the writers' lock then (any id
    below it was drawn by one of them, or is committed or abandoned). Each look is one
    statement on its own (no transaction around it: a round trip each, where a read
    transaction took five). The caller reads in a transaction begun after this returns.

    The wait is bounded (`wait`, else `SABOT_WRITERS_WAIT_SECONDS`): a writer stuck in its
    transaction must not freeze every checkpoint and every view. Past it, the writers still
    in flight are logged (their server process ids) and `WritersInFlight` is raised: the
    checkpoint or the catch-up tries again later; PostgreSQL ends a session left idle in its
    transaction (`SABOT_IDLE_IN_TRANSACTION_SECONDS`).
    """
    head = database.last_notification_id()
    if not isinstance(database, PostgresDatabase):
        return head
    bound = writers_wait() if wait is None else wait
    deadline = time.monotonic() + bound
    schema = database.datastore.schema
    in_flight = (
        "SELECT virtualtransaction, pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
        " AND classid = ?::oid AND objid = hashtext(?)::oid AND objsubid = 2"
        " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    writers = {r["virtualtransaction"]: r["pid"]
               for r in database.read_all(in_flight, (LOCK_CLASS, schema))}
    pause = 0.0005
    while writers:
        if time.monotonic() >= deadline:
            pids = ", ".join(str(pid) for pid in sorted(writers.values()))
            log.warning("gave up after %.1f s waiting for %d writer(s) in flight below "
                        "notification %d in schema %s (server pids %s): trying again later",
                        bound, len(writers), head, schema, pids)
            raise WritersInFlight(
                f"{len(writers)} writer(s) (server pids {pids}) still in flight below "
                f"notification {head} after {bound:.1f} s (SABOT_WRITERS_WAIT_SECONDS)")
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.01)
        writers = {r["virtualtransaction"]: r["pid"] for r in database.read_all(
            in_flight + " AND virtualtransaction = ANY(?)", (LOCK_CLASS, schema, list(writers)))}
    return head


def ask_heads(database: Database, cursor: Any, stored_events: Sequence[StoredEvent],
              partitions: Mapping[UUID, str]) -> None:
    """Query the heads of the streams about to grow and of their partitions (`partitions`,
    resolved, by stream id), in one statement; each head is one row by an index (the
    stream's last version, the partition's last notification id), never a scan.

    The rows are read by `append_chain`; in between, a PostgreSQL pipeline can carry the
    events' insert and this query in one round trip.
    """
    ids = dict.fromkeys(_uuid(s.originator_id) for s in stored_events)
    keys = list(dict.fromkeys(partitions[oid] for oid in ids))
    last_of_stream = (
        "SELECT * FROM (SELECT 's' AS kind, notification_id, originator_id,"
        " stream_digest AS digest, partition_key FROM {event_chain} WHERE originator_id = ?"
        " ORDER BY originator_version DESC LIMIT 1) AS s{i}"
    )
    last_of_partition = (
        "SELECT * FROM (SELECT 'g' AS kind, notification_id, originator_id,"
        " global_digest AS digest, partition_key FROM {event_chain} WHERE partition_key = ?"
        " ORDER BY notification_id DESC LIMIT 1) AS g{i}"
    )
    database.execute(
        cursor,
        " UNION ALL ".join([last_of_stream.replace("{i}", str(i)) for i in range(len(ids))]
                           + [last_of_partition.replace("{i}", str(i))
                              for i in range(len(keys))]),
        [*(database.to_db_id(oid) for oid in ids), *keys],
    )


def append_chain(
    database: Database,
    cursor: Any,
    heads: Sequence[Any],
    stored_events: Sequence[StoredEvent],
    notification_ids: Sequence[int],
    signer: Signer,
    partitions: Mapping[UUID, str],
    claims: Sequence[Claim] = (),
) -> None:
    """Digest the events just inserted, append their links to `event_chain` (each chained in
    its stream and its partition) and sign each new partition head, and the partition's
    digest at the last event of each command `claims` logs: a command's first event follows
    a signed one, so that `sabot audit verify` tells a signature row deleted from a run of
    commands saved at once (`Claim`) as from a command saved alone.

    `heads` are the rows of `ask_heads` (given the same `partitions`), read under the
    partitions' write locks.
    """
    if not stored_events:
        return
    previous: dict[str, bytes] = {}
    stream_heads: dict[UUID, bytes] = {}
    for row in heads:
        if row["kind"] == "g":
            if row["notification_id"] >= min(notification_ids):
                raise ChainError(
                    f"event_chain already holds notification {row['notification_id']} in "
                    f"partition {row['partition_key']!r}, at or after the new event "
                    f"{min(notification_ids)}: the store was altered; run `sabot audit verify`"
                )
            previous[row["partition_key"]] = bytes(row["digest"])
        else:
            stream_heads[database.from_db_id(row["originator_id"])] = bytes(row["digest"])
    rows = []
    last: dict[str, tuple[int, bytes]] = {}
    ends = {(claim.originator_id, claim.last_version) for claim in claims}
    signed: dict[int, bytes] = {}
    for stored, notification_id in zip(stored_events, notification_ids, strict=True):
        oid = _uuid(stored.originator_id)
        key = partitions[oid]
        version = stored.originator_version
        stream = digest_canonical(stream_heads.get(oid, GENESIS),
                                  canonical_bytes(oid, version, stored.topic, stored.state))
        chained = previous[key] = global_digest(previous.get(key, GENESIS), notification_id,
                                                stream)
        stream_heads[oid] = stream
        last[key] = (notification_id, chained)
        if (oid, version) in ends:
            signed[notification_id] = chained
        rows.append((notification_id, database.to_db_id(oid), version, stream, chained, key))
    # Rows inserted by statements, not executemany: in a PostgreSQL pipeline they travel with
    # the COMMIT.
    database.insert_rows(cursor, "event_chain", CHAIN_COLUMNS, rows)
    signed.update(last.values())
    database.insert_rows(cursor, "chain_signatures", SIGNATURE_COLUMNS,
                         [(head, signer.key_id, signer.sign_head(head, digest))
                          for head, digest in sorted(signed.items())])

PartitionHeads = dict[str, tuple[int, int, str]]
"""By partition: its size (events), last notification id and digest there (hex)."""


def advance_tree(database: Database, trusted: Mapping[str, bytes]
                 ) -> tuple[Frontier, int, bytes, PartitionHeads]:
    """Fold the events committed since into the Merkle tree (`merkle_tree`), out of the
    writers' way, and return it: the tree, its last notification id and the partition digest
    there (b"" for an empty store), and the head of each partition then.

    Only what the writers vouched for is folded: each event must give the stream and
    partition digests its chain row holds, and each partition head its signature by one of the
    `trusted` keys (by key id: `infra.store.trust`; never the keys the store records, which are
    checked against them), or `ChainError` names the notification, or the recorded key, and
    nothing is folded: a store altered since the write is never signed into a checkpoint.
    """
    horizon = committed_head(database)
    lock = " FOR UPDATE" if database.dialect == "postgres" else ""
    with database.transaction(write=True) as cursor:
        row = database.execute(
            cursor, "SELECT size, head, frontier, partitions FROM {merkle_tree} WHERE id = 1"
            + lock,
        ).fetchone()
        if row is None:
            raise ChainError("merkle_tree has no row: open the store once with table creation")
        try:
            tree = Frontier.from_bytes(row["size"], bytes(row["frontier"]))
        except ValueError as error:
            raise ChainError(f"merkle_tree is malformed ({error}): the store was altered; "
                             "run `sabot audit verify`") from None
        head = row["head"]
        fold = _Fold(database, cursor, head, _partition_heads(database, cursor, row), trusted)
        while head < horizon:
            events = [e for e in select_events(database, cursor, head, FOLD_PAGE)
                      if e.notification_id <= horizon]
            if not events:
                break
            links = select_links(database, cursor, head, len(events))
            for event, link in zip(events, links + [None] * (len(events) - len(links)),
                                   strict=True):
                tree.append(fold.vouched(event, link))
            head = events[-1].notification_id
        fold.all_signed()
        if head != row["head"]:
            database.execute(
                cursor, "UPDATE {merkle_tree} SET size = ?, head = ?, frontier = ?,"
                " partitions = ? WHERE id = 1",
                (tree.size, head, tree.to_bytes(), json.dumps(fold.heads, sort_keys=True)))
        chain = database.execute(
            cursor, "SELECT global_digest FROM {event_chain} WHERE notification_id = ?",
            (head,)).fetchone()
    return tree, head, b"" if chain is None else bytes(chain["global_digest"]), fold.heads


def _partition_heads(database: Database, cursor: Any, row: Any) -> PartitionHeads:
    """The partition heads the tree row records; a tree folded before partitions is all
    `MAIN`."""
    if row["partitions"]:
        return {key: (size, head, chain)
                for key, (size, head, chain) in json.loads(row["partitions"]).items()}
    if not row["size"]:
        return {}
    chain = database.execute(
        cursor, "SELECT global_digest FROM {event_chain} WHERE notification_id = ?",
        (row["head"],)).fetchone()
    return {MAIN: (row["size"], row["head"], "" if chain is None
                   else bytes(chain["global_digest"]).hex())}


FOLD_PAGE = 5000


class _Fold:
    """Checks each event folded into the tree against its chain row and the signatures (by
    the trusted keys), after checking the keys the store records against them.

    Of a partition's signatures, the fold verifies the last (`all_signed`): it signs the
    partition's digest, which chains every event before it, so it vouches for them all, and
    the tree a checkpoint signs holds the events, not the signature rows. The others' keys
    must be trusted; their Ed25519 verification (31 a coup, more CPU than the fold's hashing)
    is `sabot audit verify`'s, which checks every signature no witnessed checkpoint covers."""

    def __init__(self, database: Database, cursor: Any, after: int,
                 heads: PartitionHeads, trusted: Mapping[str, bytes]) -> None:
        self.database, self.cursor, self.after, self.heads = database, cursor, after, heads
        self.streams: dict[UUID, bytes] = {}
        self.partitions: dict[str, bytes] = {}
        self.unsigned: dict[str, int] = {}  # partition: its first event not yet signed
        self.last_signed: dict[str, tuple[int, bytes, bytes, bytes]] = {}  # partition: its
        # last signed head (notification id, digest), the trusted key and the signature
        problems = recorded_key_problems(database, cursor, trusted)
        if problems:
            raise ChainError(f"no checkpoint: {problems[0][1]}; the store's signing keys "
                             "were altered: run `sabot audit verify`")
        self.keys = dict(trusted)
        self.signatures = {r["notification_id"]: (r["key_id"], bytes(r["signature"]))
                           for r in database.execute(
            cursor, "SELECT notification_id, key_id, signature FROM {chain_signatures}"
            " WHERE notification_id > ?", (after,)).fetchall()}

    def vouched(self, event: StoredRow, link: ChainLink | None) -> bytes:
        """The event's Merkle leaf, once its chain row and digests hold."""
        n = event.notification_id
        if link is None or (link.notification_id, link.originator_id, link.originator_version
                            ) != (n, event.originator_id, event.originator_version):
            raise self._altered(n, "its chain row is not the event's")
        canonical = event.canonical()
        stream = digest_canonical(self._stream(event), canonical)
        chained = global_digest(self._partition(link.partition), n, stream)
        if (stream, chained) != (link.stream_digest, link.global_digest):
            raise self._altered(n, "it does not give the digests chained when it was written")
        self.streams[event.originator_id] = stream
        self.partitions[link.partition] = chained
        size = self.heads.get(link.partition, (0, 0, ""))[0]
        self.heads[link.partition] = (size + 1, n, chained.hex())
        self.unsigned.setdefault(link.partition, n)
        signed = self.signatures.get(n)
        if signed is not None:
            key_id, signature = signed
            public = self.keys.get(key_id)
            if public is None:
                raise self._altered(n, f"it is signed by key {key_id}, which is not trusted")
            self.last_signed[link.partition] = (n, chained, public, signature)
            del self.unsigned[link.partition]
        return event_leaf(n, canonical)

    def all_signed(self) -> None:
        """Every event folded is covered by its partition's last signature, which holds."""
        if self.unsigned:
            raise self._altered(min(self.unsigned.values()), "no signature covers it")
        for n, chained, public, signature in self.last_signed.values():
            if not signature_valid(public, head_message(n, chained), signature):
                raise self._altered(n, "its signature does not hold by the trusted key")

    def _stream(self, event: StoredRow) -> bytes:
        known = self.streams.get(event.originator_id)
        if known is not None or event.originator_version == 1:
            return known or GENESIS
        row = self.database.execute(
            self.cursor, "SELECT stream_digest FROM {event_chain} WHERE originator_id = ?"
            " AND originator_version < ? ORDER BY originator_version DESC LIMIT 1",
            (self.database.to_db_id(event.originator_id), event.originator_version)).fetchone()
        return GENESIS if row is None else bytes(row["stream_digest"])

    def _partition(self, key: str) -> bytes:
        known = self.partitions.get(key)
        if known is not None:
            return known
        if key in self.heads:
            return bytes.fromhex(self.heads[key][2])
        row = self.database.execute(
            self.cursor, "SELECT global_digest FROM {event_chain} WHERE partition_key = ?"
            " AND notification_id <= ? ORDER BY notification_id DESC LIMIT 1",
            (key, self.after)).fetchone()
        return GENESIS if row is None else bytes(row["global_digest"])

    @staticmethod
    def _altered(n: int, why: str) -> ChainError:
        return ChainError(f"the event at notification {n} is not folded into the Merkle tree: "
                          f"{why}; the store was altered since it was written: run "
                          "`sabot audit verify`")


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
        " global_digest, partition_key FROM {event_chain} WHERE notification_id > ?"
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
            partition=row["partition_key"],
        )
        for row in rows
    ]


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
