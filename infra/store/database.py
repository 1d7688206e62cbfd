"""Plain SQL on either database, through eventsourcing's own datastores (and their pools).

The ledger (hash chain, command log), the vault and the audit run their own statements next
to eventsourcing's. `Database` gives them one way to do it on SQLite and on PostgreSQL:

* `sql(template)`: `{name}` becomes the (schema-qualified) table name, `{nid}` the column that
  holds notification ids (`rowid` on SQLite), and `?` the driver's placeholder;
* `transaction(write=...)`: a cursor inside one transaction, committed if `write`, else rolled
  back. Writing takes the write lock at once (SQLite `BEGIN IMMEDIATE`), so a read made in a
  write transaction is still true when the transaction commits; reading sees one consistent
  snapshot (SQLite WAL read transaction, PostgreSQL `REPEATABLE READ READ ONLY`).
* `snapshot()`: until the block ends, every read transaction this thread opens on this
  database reuses one read transaction (PostgreSQL: each in a savepoint of it), so that a
  reader spread over many transactions (`verify` and its checks) sees one consistent state
  while writers write;
* `read_one(template)` / `read_all(template)`: the first row / the rows of one read, in as
  few round trips as the database allows (PostgreSQL: one statement on an autocommit
  connection, no transaction around it);
* `pipelined(cursor)`: until the block ends, the statements sent on `cursor` do not wait for
  each other's answers, they travel together until one is read (PostgreSQL: psycopg's
  pipeline mode; an error comes out at that read or at the block's end);
* `to_db_id` / `from_db_id`: UUIDs as each database stores them (hex text / `uuid`).

Rows are read by column name (`sqlite3.Row` and psycopg's `dict_row` both allow it).
Driver errors come out as eventsourcing's `PersistenceError` subclasses.
"""

from __future__ import annotations

import sqlite3
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any, ClassVar, cast
from uuid import UUID

import psycopg
from eventsourcing import persistence
from eventsourcing.postgres import PostgresDatastore
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTransaction

SCHEMA_LOCK = 0x5AB075C4E  # the advisory lock key that serialises schema creation
_SCHEMA_LOCKED: ContextVar[bool] = ContextVar("schema_locked", default=False)
SQLITE_VARIABLES = 32766  # the most `?` one SQLite statement takes


_SCHEMA_THREADS = threading.Lock()


@contextmanager
def schema_lock(connect: Callable[[], AbstractContextManager[Any]]) -> Iterator[None]:
    """Hold PostgreSQL's schema lock for a whole block of schema creation spread over several
    transactions (eventsourcing's), on a connection from `connect`; `Database.execute` takes
    no lock of its own in that block, which would wait for this one. Threads queue here first,
    so that waiting threads do not hold the pool's connections the holder needs."""
    with _SCHEMA_THREADS, connect() as connection:
        connection.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
        token = _SCHEMA_LOCKED.set(True)
        try:
            yield
        finally:
            _SCHEMA_LOCKED.reset(token)
            connection.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


class _Names(dict[str, str]):
    def __init__(self, database: Database) -> None:
        super().__init__(nid=database.notification_column)
        self.database = database

    def __missing__(self, key: str) -> str:
        return self.database.table(key)


def values_insert(table: str, columns: Sequence[tuple[str, str]], count: int) -> str:
    """`INSERT INTO {table} (columns) VALUES` and `count` rows of placeholders."""
    names = ", ".join(name for name, _ in columns)
    return (f"INSERT INTO {{{table}}} ({names}) VALUES "
            + ", ".join([f"({', '.join('?' * len(columns))})"] * count))


class Database(ABC):
    dialect: ClassVar[str]
    notification_column: ClassVar[str]
    placeholder: ClassVar[str]

    def sql(self, template: str) -> str:
        return template.replace("?", self.placeholder).format_map(_Names(self))

    @abstractmethod
    def table(self, name: str) -> str:
        """The name to write in a statement for the table `name`."""

    @abstractmethod
    def transaction(self, *, write: bool) -> AbstractContextManager[Any]:
        """A cursor in a transaction, committed on exit if `write`, else rolled back."""

    def pipelined(self, cursor: Any) -> AbstractContextManager[Any]:
        """The statements sent on `cursor` in the block travel without waiting for each
        other's answers (SQLite runs in this process: nothing to wait for)."""
        return nullcontext()

    _pinned: dict[int, Any]  # by thread: the connection of the snapshot it holds

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read transaction of this thread in the block sees the same snapshot."""
        thread = threading.get_ident()
        if thread in self._pinned:
            yield  # already inside one
            return
        with self._connection(write=False) as connection:
            self._pinned[thread] = connection
            try:
                yield
            finally:
                del self._pinned[thread]

    def _pinned_connection(self, write: bool) -> Any:
        """The snapshot's connection, for a read of the thread holding it; else None."""
        return None if write else self._pinned.get(threading.get_ident())

    @abstractmethod
    def _connection(self, *, write: bool) -> AbstractContextManager[Any]:
        """A pooled connection inside a transaction (begun; committed on exit if `write`,
        else rolled back)."""

    @abstractmethod
    def to_db_id(self, originator_id: UUID) -> Any: ...

    @abstractmethod
    def from_db_id(self, value: Any) -> UUID: ...

    @abstractmethod
    def read_one(self, template: str, params: Any = ()) -> Any:
        """The first row (or None) of one read statement, on its own."""

    @abstractmethod
    def read_all(self, template: str, params: Any = ()) -> list[Any]:
        """The rows of one read statement, on its own."""

    def last_notification_id(self) -> int:
        """The store's last notification id (0 when empty), read on its own: one round trip
        (on PostgreSQL, ids below it may still be in flight: `infra.store.ledger.committed_head`
        waits for them)."""
        row = self.read_one("SELECT MAX({nid}) AS head FROM {stored_events}")
        return int(row["head"] or 0)

    def write_one(self, template: str, params: Any = ()) -> Any:
        """The first row (or None) of one write statement, committed on its own."""
        with self.transaction(write=True) as cursor:
            return self.execute(cursor, template, params).fetchone()

    def execute(self, cursor: Any, template: str, params: Any = ()) -> Any:
        if template.lstrip().upper().startswith("CREATE "):
            self.lock_schema_once(cursor)
        cursor.execute(self.sql(template), params)
        return cursor

    def insert_rows(self, cursor: Any, table: str, columns: Sequence[tuple[str, str]],
                    rows: Sequence[Sequence[Any]]) -> None:
        """Insert `rows` into `{table}`, their values in the order of `columns` (each a name
        and its PostgreSQL type): in multi-row statements of as many rows as SQLite takes."""
        per_insert = SQLITE_VARIABLES // len(columns)
        for start in range(0, len(rows), per_insert):
            chunk = rows[start:start + per_insert]
            self.execute(cursor, values_insert(table, columns, len(chunk)),
                         [value for row in chunk for value in row])

    def lock_schema_once(self, cursor: Any) -> None:
        """`lock_schema`, unless this thread holds the schema lock for a whole block
        (`schema_lock`), which this transaction's lock would wait for."""
        if not _SCHEMA_LOCKED.get():
            self.lock_schema(cursor)

    @abstractmethod
    def lock_schema(self, cursor: Any) -> None:
        """Serialise schema creation until the transaction ends (PostgreSQL's concurrent
        CREATE ... IF NOT EXISTS fail with duplicate catalog rows)."""


class _SQLiteTransaction(SQLiteTransaction):
    def __enter__(self) -> SQLiteCursor:
        cursor = self.connection.cursor()
        cursor.execute("BEGIN IMMEDIATE" if self.commit else "BEGIN")
        return cursor


class SQLiteDatabase(Database):
    dialect = "sqlite"
    notification_column = "rowid"
    placeholder = "?"

    def lock_schema(self, cursor: Any) -> None:
        """Nothing to do: a SQLite write transaction already holds the database."""

    def __init__(self, datastore: SQLiteDatastore) -> None:
        self.datastore = datastore
        self._pinned = {}

    def table(self, name: str) -> str:
        return f'"{name}"'

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[SQLiteCursor]:
        pinned = self._pinned_connection(write)
        if pinned is not None:
            with _persistence_errors(), pinned.cursor() as cursor:
                yield cursor  # SQLite keeps the transaction after an error
            return
        with (
            self.datastore.get_connection(commit=write) as connection,
            _SQLiteTransaction(connection, commit=write) as cursor,
            cursor,
        ):
            yield cursor

    @contextmanager
    def _connection(self, *, write: bool) -> Iterator[Any]:
        with (
            self.datastore.get_connection(commit=write) as connection,
            _SQLiteTransaction(connection, commit=write) as cursor,
            cursor,
        ):
            cursor.execute("SELECT 1 FROM sqlite_master LIMIT 1")  # the snapshot starts here
            yield connection

    def read_one(self, template: str, params: Any = ()) -> Any:
        with self.transaction(write=False) as cursor:
            return self.execute(cursor, template, params).fetchone()

    def read_all(self, template: str, params: Any = ()) -> list[Any]:
        with self.transaction(write=False) as cursor:
            return list(self.execute(cursor, template, params).fetchall())

    def to_db_id(self, originator_id: UUID) -> str:
        return originator_id.hex

    def from_db_id(self, value: Any) -> UUID:
        return UUID(value)


class PostgresDatabase(Database):
    dialect = "postgres"
    notification_column = "notification_id"
    placeholder = "%s"

    def lock_schema(self, cursor: Any) -> None:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))

    def __init__(self, datastore: PostgresDatastore) -> None:
        self.datastore = datastore
        self._pinned = {}

    def table(self, name: str) -> str:
        return f"{quote_identifier(self.datastore.schema)}.{quote_identifier(name)}"

    @contextmanager
    def transaction(self, *, write: bool) -> Iterator[Any]:
        pinned = self._pinned_connection(write)
        if pinned is not None:
            with (_persistence_errors(), pinned.transaction(force_rollback=True),
                  pinned.cursor() as cursor):
                yield cursor  # a savepoint: an error rolls back to it, not the snapshot
            return
        with self._connection(write=write) as connection, connection.cursor() as cursor:
            yield cursor

    @contextmanager
    def _connection(self, *, write: bool) -> Iterator[Any]:
        with (
            self.datastore.get_connection() as connection,
            connection.transaction(force_rollback=not write),
        ):
            if not write:
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                connection.execute("SELECT 1")  # the snapshot is taken at the first query
            yield connection

    def pipelined(self, cursor: Any) -> AbstractContextManager[Any]:
        return cast(AbstractContextManager[Any], cursor.connection.pipeline())

    def insert_rows(self, cursor: Any, table: str, columns: Sequence[tuple[str, str]],
                    rows: Sequence[Sequence[Any]]) -> None:
        """One statement whatever the number of rows: each column's values as an array,
        unnested, so that its text is always the same (psycopg prepares it once, and
        PostgreSQL plans it once); a multi-row VALUES of too many values to cache was
        converted and parsed again every time. The arrays are sent in binary (`%b`): psycopg
        writes a list as text element by element in Python, escaping each byte string in
        hex (185 µs for four arrays of 20 values, 38 µs in binary)."""
        names = ", ".join(name for name, _ in columns)
        arrays = ", ".join(f"%b::{kind}[]" for _, kind in columns)
        if rows:
            self.execute(cursor, f"INSERT INTO {{{table}}} ({names}) SELECT * FROM unnest"
                         f"({arrays})", [list(values) for values in zip(*rows, strict=True)])

    def read_one(self, template: str, params: Any = ()) -> Any:
        with self.datastore.get_connection() as connection:  # autocommit: no BEGIN, no ROLLBACK
            return connection.execute(self.sql(template), params).fetchone()

    def read_all(self, template: str, params: Any = ()) -> list[Any]:
        with self.datastore.get_connection() as connection:  # autocommit: no BEGIN, no ROLLBACK
            return connection.execute(self.sql(template), params).fetchall()

    def write_one(self, template: str, params: Any = ()) -> Any:
        with self.datastore.get_connection() as connection:  # autocommit: one round trip
            return connection.execute(self.sql(template), params).fetchone()

    def to_db_id(self, originator_id: UUID) -> UUID:
        return originator_id

    def from_db_id(self, value: Any) -> UUID:
        return value if isinstance(value, UUID) else UUID(str(value))


_DRIVER_ERRORS = tuple(
    (getattr(driver, name), getattr(persistence, name))
    for driver in (psycopg, sqlite3)
    for name in ("InterfaceError", "OperationalError", "DataError", "IntegrityError",
                 "InternalError", "ProgrammingError", "NotSupportedError", "DatabaseError")
)


@contextmanager
def _persistence_errors() -> Iterator[None]:
    """The drivers' errors as eventsourcing's, as its datastores' `get_connection` raise
    them (a snapshot's reads run inside the connection it holds)."""
    try:
        yield
    except (psycopg.Error, sqlite3.Error) as error:
        kind = next((ours for theirs, ours in _DRIVER_ERRORS if isinstance(error, theirs)),
                    persistence.PersistenceError)
        raise kind(str(error)) from error


def quote_identifier(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def database_of(datastore: SQLiteDatastore | PostgresDatastore) -> Database:
    if isinstance(datastore, SQLiteDatastore):
        return SQLiteDatabase(datastore)
    return PostgresDatabase(datastore)
