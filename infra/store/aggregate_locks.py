"""One aggregate's writers in different processes queue on a lock in the database, instead of
racing until one gives up (issue 36).

A command decides on the aggregate it loaded, then saves; another process saving the same
aggregate in between takes the version, and the command decides again (`TableService._apply`).
Once that happened, the command holds its aggregate's lock for its next attempts: a session
advisory lock on PostgreSQL (`hold`), held from the reload to the commit, on a connection of
a small pool of its own (the save takes its connection from the store's pool, which waiters
never hold). Every other save of that aggregate takes the same lock, shared, in its own
transaction, before the partitions' locks (`share`): a save decided without the lock waits
for the holder to commit, then fails on the version and queues in turn; the holder's own save
(`save(..., locked=True)`) does not take it. A lock not granted within
`SABOT_LOCK_WAIT_SECONDS` is `AggregateBusy`: the API answers 503 with `Retry-After`, nothing
was written.

SQLite has one writer at a time (`BEGIN IMMEDIATE`): `hold` holds nothing there, and a race
lost to another process is decided again after a short, jittered wait, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import OperationalError
from psycopg_pool import ConnectionPool, PoolTimeout

from infra.settings import lock_wait
from infra.store.database import Database, PostgresDatabase

AGGREGATE_LOCK_CLASS = 0x5AB2  # (AGGREGATE_LOCK_CLASS, hashtext(schema/aggregate id))
POOL_SIZE = 8
"""Aggregates one process may hold or wait for at once (each on its own connection)."""


class AggregateBusy(OperationalError):
    """Another process held the aggregate's lock longer than `SABOT_LOCK_WAIT_SECONDS`."""


def _key(database: PostgresDatabase, aggregate_id: UUID | str) -> str:
    return f"{database.datastore.schema}/{aggregate_id}"


def share(database: Database, cursor: Any, aggregate_ids: Iterable[UUID | str]) -> None:
    """PostgreSQL, in a save's transaction before its other locks: wait for the process that
    holds one of these aggregates' lock (`hold`), if any, to commit."""
    if not isinstance(database, PostgresDatabase):
        return
    keys = sorted({_key(database, aggregate_id) for aggregate_id in aggregate_ids})
    if keys:  # the wait bounded as the holder's (a hung holder fails the save, retried)
        cursor.execute("SELECT set_config('lock_timeout', %s, true), " + ", ".join(
            "pg_advisory_xact_lock_shared(%s, hashtext(%s))" for _ in keys),
            [f"{int(lock_wait() * 1000)}",
             *(value for key in keys for value in (AGGREGATE_LOCK_CLASS, key))])


class AggregateLocks:
    """The aggregates' locks of a service's databases (its homes), for this process's writers."""

    def __init__(self) -> None:
        self._pools: dict[int, ConnectionPool[Any]] = {}
        self._opening = threading.Lock()
        self.granted = 0
        """How many times `hold` was granted a lock (the queued path taken)."""

    @staticmethod
    def held(database: Database) -> bool:
        """Whether `hold` holds anything on `database` (PostgreSQL)."""
        return isinstance(database, PostgresDatabase)

    @contextmanager
    def hold(self, database: Database, aggregate_id: UUID) -> Iterator[None]:
        """The aggregate's lock until the block ends (PostgreSQL; nothing on SQLite), or
        `AggregateBusy` after `SABOT_LOCK_WAIT_SECONDS`."""
        if not isinstance(database, PostgresDatabase):
            yield
            return
        wait = lock_wait()
        params = (AGGREGATE_LOCK_CLASS, _key(database, aggregate_id))
        try:
            with self._connections(database).connection(timeout=wait) as connection:
                try:
                    connection.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", params)
                except psycopg.errors.LockNotAvailable:
                    raise AggregateBusy(f"aggregate {aggregate_id} is being written by another "
                                        f"process for more than {wait:.0f} s") from None
                self.granted += 1
                try:
                    yield
                finally:
                    connection.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", params)
        except PoolTimeout:
            raise AggregateBusy(f"{POOL_SIZE} aggregates of this process are being written "
                                f"for more than {wait:.0f} s") from None

    def close(self) -> None:
        with self._opening:
            for pool in self._pools.values():
                pool.close()
            self._pools.clear()

    def _connections(self, database: PostgresDatabase) -> ConnectionPool[Any]:
        with self._opening:
            pool = self._pools.get(id(database))
            if pool is None:
                kwargs = database.datastore.pool.kwargs
                given = kwargs() if callable(kwargs) else kwargs or {}
                wait_ms = int(lock_wait() * 1000)

                def configure(connection: psycopg.Connection[Any]) -> None:
                    connection.execute(f"SET lock_timeout = {wait_ms}")

                pool = self._pools[id(database)] = ConnectionPool(
                    kwargs={**{k: v for k, v in given.items() if k != "row_factory"},
                            "autocommit": True},
                    min_size=0, max_size=POOL_SIZE, configure=configure, open=True,
                    name="sabot-aggregate-locks")
            return pool
