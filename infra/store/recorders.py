"""eventsourcing's application and process recorders, with the ledger in the same transaction.

Each insert of stored events, in one transaction:

0. checks that the streams the decision read (`save(..., unchanged=[ReadAt, ...])`) have not
   moved since (`ledger.StreamMoved`, an `IntegrityError`: decide again), under the lock that
   their writers take too: a table's command decided before its tournament's pause is written
   before the pause or decided again after it, never written after it;
1. records the command id, if `Application.save(..., command_id=...)` gave one (eventsourcing
   passes `save()`'s keyword arguments down to `insert_events`), or each of a run's command
   ids with its versions (`save(..., claims=[command_log.Claim, ...])`: a house table's bot steps):
   an id already recorded raises `DuplicateCommand` and nothing is written;
2. inserts the events (a version already taken raises eventsourcing's `IntegrityError`);
3. appends one `event_chain` row per event (stream and partition digests, `infra.store.chain`;
   the partitions `save(..., partitions=...)` gives, `infra.store.partitions`) and signs each new
   partition head (`chain_signatures`) with the store's signing key (`infra.store.signing`);
4. keeps the command's answer, if `save(..., answer=...)` gave one (`infra.store.answers`).

After the commit, the writer's `Checkpointer` (`infra.store.checkpoints`) is told: a signed tree
head covers the commit within `SABOT_CHECKPOINT_SECONDS` (written by the process that holds the
store's checkpoint lease, `infra.store.checkpoint_lease`), or when the store is closed
(explicitly: one the garbage collector takes writes nothing) and at exit. A writer (a
recorder whose tables are created) loads its signing key when it starts, and refuses to
start without it; a reader (e.g. `sabot audit verify`) never needs it.

The write lock is taken before the chains' heads are read: SQLite `BEGIN IMMEDIATE` (one
writer at a time); PostgreSQL one advisory lock per partition written
(`ledger.lock_partitions`), instead of eventsourcing's `LOCK TABLE stored_events IN
EXCLUSIVE MODE`: writers to different partitions never wait on each other, and may commit
out of notification order, so that readers in that order read up to `ledger.committed_head`.
The Merkle tree is folded by the checkpoints (`ledger.advance_tree`), off the write path.
A save first waits, on PostgreSQL, for another process holding one of its aggregates' lock
(`infra.store.aggregate_locks`; not taken again by the holder's own save, `locked=True`).
The command id is claimed after the lock (SQLite `INSERT ... ON CONFLICT DO NOTHING`;
PostgreSQL a plain INSERT, whose unique violation fails the transaction: its answer is not
waited for before the events' insert is sent): a racing duplicate waits for the first to
commit or roll back, then knows.

On PostgreSQL the insert is one psycopg pipeline in psycopg's own transaction (the pooled
connection leaves autocommit for it: psycopg begins with the first statement, `commit()` sends
COMMIT with the chain's rows): two round trips (three when an auction's or a dispute's
partition is first read from its table's chain), against five for eventsourcing's own insert;
without eventsourcing's NOTIFY in the transaction (`_notify_channel`): the readers are woken
after the commit (`_published`, `infra.store.notices`).
Never BEGIN, COMMIT or ROLLBACK as SQL text: psycopg prepares a statement the fifth time it
runs, and in a pipeline that fails (an insert that lost the race for a version or for a
command id) the server
skips the statements queued after the failure, their PREPARE included; psycopg's `rollback()`
forgets the statements it believes prepared, a ROLLBACK sent as text does not, and the next
insert on that connection failed with `prepared statement "_pg3_N" does not exist` (a 500
under concurrent replicas, issue 30).

The process recorders (for event-processing applications and projections that write events)
add eventsourcing's tracking row in the same transaction too. PostgreSQL's
`POSTGRES_ENABLE_DB_FUNCTIONS` path (a stored procedure that inserts events) is not used: it
would bypass the chain.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import (
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresProcessRecorder,
)
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore, SQLiteProcessRecorder
from eventsourcing.utils import retry
from psycopg.pq import TransactionStatus
from psycopg.sql import SQL, Identifier

from infra.errors import DuplicateCommand, RecordedCommand, StoreError
from infra.store import aggregate_locks, command_log, ledger, migrations, notices
from infra.store.answers import KeptAnswer
from infra.store.checkpointer import Checkpointer
from infra.store.checkpoints import Checkpoint, checkpoint_path, interval
from infra.store.database import Database, PostgresDatabase, SQLiteDatabase
from infra.store.signing import Signer, SigningKeyError, key_env, key_path, signer_for
from infra.store.witness_push import Pusher, configured

__all__ = [
    "ChainedPostgresApplicationRecorder",
    "ChainedPostgresProcessRecorder",
    "ChainedSQLiteApplicationRecorder",
    "ChainedSQLiteProcessRecorder",
    "DuplicateCommand",
    "RecordedCommand",
]


def claims(stored_events: Sequence[StoredEvent], kwargs: dict[str, Any]) -> list[command_log.Claim]:
    """The command ids a save claims: `save(..., claims=[...])`'s, else `command_id`'s."""
    given: list[command_log.Claim] | None = kwargs.get("claims")
    return given if given else command_log.claims_of(kwargs.get("command_id"), stored_events)


class _Ledgered:
    """What the chained recorders add to eventsourcing's: the ledger tables and lookups, the
    signing key and the checkpoints."""

    database: Database
    _signer: Signer | None = None
    _checkpointer: Checkpointer | None = None
    _key_recorded = False
    schema_upgrade: migrations.Upgrade | None = None  # what opening this writer upgraded

    def recorded_command(self, command_id: str | UUID) -> RecordedCommand | None:
        """The stream and versions a command produced, or None if it was never applied."""
        with self.database.transaction(write=False) as cursor:
            return command_log.recorded_command(self.database, cursor, command_id)

    def upgrade_schema(self) -> None:
        """Upgrade the store's schema (`infra.store.migrations`: the ledger's tables are in it),
        then check this writer's key and checkpoints."""
        self.schema_upgrade = migrations.upgrade(self.database)
        self.checkpointer()  # a writer refuses to start without its key, or misconfigured
        self.signer()

    def signer(self) -> Signer:
        """The store's signer. The default key beside a SQLite store is created for a new
        store only: a store that was signed before and lost its key file refuses, rather than
        start a new key. (PostgreSQL's default key is per working directory: each process
        makes its own; set SABOT_SIGNING_KEY for one key.)"""
        if self._signer is None:
            env = key_env(self.database)
            path = key_path(env)
            beside = "SQLITE_DBNAME" in env and not env["SABOT_SIGNING_KEY"]
            if path is not None and beside and not path.exists():
                recorded = ledger.recorded_keys(self.database)
                if recorded:
                    raise SigningKeyError(
                        f"the store was signed with key {recorded[0]} but its key file {path} "
                        "is missing: restore it, or set SABOT_SIGNING_KEY")
            self._signer = signer_for(env)
        return self._signer

    def checkpointer(self) -> Checkpointer | None:
        """The checkpoints this writer writes (None: an in-memory store)."""
        if self._checkpointer is None:
            path = checkpoint_path(self.database)
            if path is None:
                return None
            to = configured()
            self._checkpointer = Checkpointer(
                self.database, path, self.signer(), interval(),
                Pusher(self.database, path, to) if to else None)
        return self._checkpointer

    def close_checkpoints(self) -> None:
        """The last checkpoint, the timer stopped: when the factory that built this writer is
        closed, explicitly (`infra.store.factories`), never by the garbage collector."""
        if self._checkpointer is not None:
            self._checkpointer.close()

    def begin_checkpoints(self) -> None:
        """This writer's first checkpoint turn, now (`Checkpointer.begin`)."""
        checkpointer = self.checkpointer()
        if checkpointer is not None:
            checkpointer.begin()

    def write_checkpoint(self) -> Checkpoint | None:
        """A checkpoint written now (None: an in-memory store, or nothing new to sign)."""
        checkpointer = self.checkpointer()
        return None if checkpointer is None else checkpointer.write()

    def _published(self, notification_ids: Sequence[int]) -> None:
        """After the commit: the readers woken (`notices.COMMITS`, this process's at once,
        the others' through the database)."""
        if notification_ids:
            notices.positions(self.database, notices.COMMITS).publish(max(notification_ids))

    def _sign(self, cursor: Any) -> Signer:
        """The signer, its public key recorded in the store by this writer's first insert."""
        signer = self.signer()
        if not self._key_recorded:
            ledger.record_key(self.database, cursor, signer)
        return signer

    def _committed(self, answer: KeptAnswer[Sequence[int]] | None, kept: bool,
                   notification_ids: Sequence[int]) -> None:
        if answer is not None:
            answer.committed(kept)
        self._key_recorded = True
        checkpointer = self.checkpointer()
        if checkpointer is not None:
            checkpointer.noted(max(notification_ids, default=0))


class ChainedSQLiteApplicationRecorder(_Ledgered, SQLiteApplicationRecorder):
    def __init__(self, datastore: SQLiteDatastore, events_table_name: str = "stored_events"):
        super().__init__(datastore, events_table_name=events_table_name)
        self.database = SQLiteDatabase(datastore)

    def create_table(self) -> None:
        super().create_table()
        self.upgrade_schema()

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int]:
        answer: KeptAnswer[Sequence[int]] | None = kwargs.get("answer") if stored_events else None
        kept = False
        with self.database.transaction(write=True) as cursor:
            read = kwargs.get("unchanged", ())
            if read and stored_events:
                ledger.ask_versions(self.database, cursor, read)
                ledger.check_versions(self.database, cursor.fetchall(), read)
            claimed = claims(stored_events, kwargs)
            command_log.claim_commands(self.database, cursor, claimed, self.signer())
            notification_ids = list(self._insert_events(cursor, stored_events, **kwargs) or ())
            if stored_events:
                partitions = ledger.resolve_partitions(self.database, cursor, stored_events,
                                                       kwargs.get("partitions"))
                ledger.ask_heads(self.database, cursor, stored_events, partitions)
                heads = cursor.fetchall()
                ledger.append_chain(self.database, cursor, heads, stored_events, notification_ids,
                                    self._sign(cursor), partitions, claimed)
                if answer is not None:
                    kept = self.database.execute(
                        cursor, *answer.statement(notification_ids)).fetchone() is not None
        if stored_events:
            self._committed(answer, kept, notification_ids)
            self._published(notification_ids)
        return notification_ids


class ChainedSQLiteProcessRecorder(ChainedSQLiteApplicationRecorder, SQLiteProcessRecorder):
    def __init__(self, datastore: SQLiteDatastore, *, events_table_name: str = "stored_events"):
        super().__init__(datastore, events_table_name=events_table_name)


class ChainedPostgresApplicationRecorder(_Ledgered, PostgresApplicationRecorder):
    def __init__(
        self,
        datastore: PostgresDatastore,
        *,
        events_table_name: str = "stored_events",
        **kwargs: Any,
    ):
        super().__init__(datastore, events_table_name=events_table_name, **kwargs)
        self.database = PostgresDatabase(datastore)
        # eventsourcing's statement with the events' array sent in binary (`%b`): as text,
        # psycopg writes each event in Python, its state hex-escaped (20 events of 300 bytes:
        # 296 µs as text, 52 µs in binary)
        self.insert_events_statement = SQL(
            "INSERT INTO {schema}.{table} AS t (originator_id, originator_version, topic, state)"
            " SELECT originator_id, originator_version, topic, state"
            " FROM unnest(%b::{schema}.{stored_event_type}[]) RETURNING notification_id"
        ).format(schema=Identifier(datastore.schema), table=Identifier(self.events_table_name),
                 stored_event_type=Identifier(self.stored_event_type_name))

    def create_table(self) -> None:
        super().create_table()
        self.upgrade_schema()

    def _lock_table(self, curs: Any) -> None:
        """No table lock: the partitions' locks (`ledger.lock_partitions`) order the writers
        of a partition, and readers in notification order wait for the writers in flight
        (`ledger.committed_head`)."""

    def _notify_channel(self, curs: Any) -> None:
        """No NOTIFY in the transaction (the readers are woken after it, `_published`): at
        commit a NOTIFY takes a lock shared by every notifying transaction of the
        server, held through the commit's WAL flush: writers to different partitions committed
        one at a time, and each paid the notification queue's work."""

    def subscribe(self, gt: int | None = None, topics: Sequence[str] = ()) -> Any:
        """Refused: eventsourcing's subscription waits for the NOTIFY Sabot does not send, and
        reads in notification order without waiting for the writers in flight
        (`ledger.committed_head`); follow the store as `projections.follower` does."""
        raise StoreError("subscribe() is not served by Sabot's PostgreSQL recorder: "
                         "follow the store's committed head (projections.follower)")

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int]:
        notification_ids: Sequence[int] = []
        failure: BaseException | None = None
        answer: KeptAnswer[Sequence[int]] | None = kwargs.get("answer") if stored_events else None
        kept = False
        with self.datastore.get_connection() as connection:
            with connection.cursor() as cursor:  # before the locks: a stream never moves
                partitions = ledger.resolve_partitions(self.database, cursor, stored_events,
                                                       kwargs.pop("partitions", None))
            connection.autocommit = False  # psycopg's own transaction (see the docstring)
            try:
                with connection.pipeline() as pipeline, connection.cursor() as keeping:
                    try:
                        notification_ids = self._insert_chained(
                            connection, pipeline, stored_events, partitions, **kwargs
                        )
                        if answer is not None:  # with the chain's rows and the COMMIT
                            self.database.execute(keeping, *answer.statement(notification_ids))
                        connection.commit()
                        kept = answer is not None and keeping.fetchone() is not None
                    except BaseException as error:
                        failure = error  # raised once out of the pipeline, as eventsourcing does
                        with contextlib.suppress(psycopg.Error):
                            pipeline.sync()  # the answers to what was sent before the failure
            finally:
                if not (connection.broken or connection.closed):  # else the pool drops it
                    if connection.info.transaction_status != TransactionStatus.IDLE:
                        connection.rollback()
                    connection.autocommit = True
            if failure is not None and not command_log.claimed_before(failure):
                raise failure
        if failure is not None:  # the command log holds an id: committed before, read now
            with self.database.transaction(write=False) as cursor:
                raise command_log.first_claimed(self.database, cursor,
                                                claims(stored_events, kwargs))
        if stored_events:
            self._committed(answer, kept, notification_ids)
            self._published(notification_ids)
        return notification_ids

    def _insert_chained(
        self,
        connection: psycopg.Connection[Any],
        pipeline: psycopg.Pipeline,
        stored_events: Sequence[StoredEvent],
        partitions: dict[UUID, str],
        **kwargs: Any,
    ) -> Sequence[int]:
        """The transaction's statements, in two round trips: the partitions' locks, the
        versions of the streams the decision read (`save(..., unchanged=[ReadAt])`), the
        command's claim, the events' insert and the chain's heads; then the chain's rows, sent
        with the COMMIT (the caller's `commit()`)."""
        read = kwargs.get("unchanged", ()) if stored_events else ()
        with (connection.cursor() as cursor, connection.cursor() as insert,
              connection.cursor() as versions):
            if stored_events:
                if not kwargs.get("locked"):
                    aggregate_locks.share(self.database, cursor,
                                          {e.originator_id for e in stored_events})
                ledger.lock_partitions(self.database, cursor, partitions.values())
            if read:
                ledger.ask_versions(self.database, versions, read)
            claimed = claims(stored_events, kwargs)
            command_log.claim_commands(self.database, cursor, claimed, self.signer())
            self._insert_events(cursor, stored_events, **kwargs)
            notification_ids: list[int] = []
            if stored_events:
                self._insert_stored_events(insert, stored_events, **kwargs)
                ledger.ask_heads(self.database, cursor, stored_events, partitions)
                pipeline.sync()
                if read:
                    ledger.check_versions(self.database, versions.fetchall(), read)
                notification_ids = list(
                    self._fetch_ids_after_insert_events(insert, stored_events, **kwargs) or ()
                )
                heads = cursor.fetchall()
                ledger.append_chain(self.database, cursor, heads, stored_events, notification_ids,
                                    self._sign(cursor), partitions, claimed)
        return notification_ids


class ChainedPostgresProcessRecorder(ChainedPostgresApplicationRecorder, PostgresProcessRecorder):
    def __init__(
        self,
        datastore: PostgresDatastore,
        *,
        events_table_name: str = "stored_events",
        tracking_table_name: str = "notification_tracking",
    ):
        super().__init__(
            datastore, events_table_name=events_table_name, tracking_table_name=tracking_table_name
        )
