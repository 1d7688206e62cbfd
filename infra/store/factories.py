"""eventsourcing infrastructure factories that build the chained recorders, one per database.

An `Application` finds them through `PERSISTENCE_MODULE` (set by `infra.store.urls.store_env`).
They differ from eventsourcing's own factories in two ways:

* the application and process recorders are always the chained ones (`infra.store.recorders`),
  the application's writing a command's follow-up effects with it (`infra.store.outbox`);
  `APPLICATION_RECORDER_TOPIC` and `PROCESS_RECORDER_TOPIC` are ignored, since another
  recorder would write events outside the chain;
* on PostgreSQL, table names do not depend on the application's name: every application of
  one database shares `stored_events` and `stored_snapshots` (as on SQLite), so the store is
  one sequence of events and one chain, whatever service wrote them. The schema named by
  `POSTGRES_SCHEMA` is created if missing.

Closing a factory (explicitly: an application's `close()`, a store's) first writes the last
checkpoint of each chained recorder it built (`infra.store.checkpoints`); nothing is written
when one is merely garbage collected.

Snapshots go through the application's mapper (so they are typed, see `infra.store.mapper`) into a
plain aggregate recorder: they are not chained. A snapshot is derived data: it can be deleted
at any time and the aggregate is then rebuilt from its chained events.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from eventsourcing.persistence import AggregateRecorder, ApplicationRecorder, ProcessRecorder
from eventsourcing.postgres import PostgresAggregateRecorder, PostgresFactory
from eventsourcing.sqlite import SQLiteFactory
from eventsourcing.utils import Environment, EnvType

from infra.store.database import quote_identifier, schema_lock
from infra.store.outbox import OutboxPostgresRecorder, OutboxSQLiteRecorder
from infra.store.recorders import (
    ChainedPostgresProcessRecorder,
    ChainedSQLiteApplicationRecorder,
    ChainedSQLiteProcessRecorder,
)

EVENTS_TABLE = "stored_events"
R = TypeVar("R", bound=AggregateRecorder)


class Writers:
    """The chained recorders a factory built, whose last checkpoints its `close()` writes."""

    def __init__(self) -> None:
        self.recorders: list[Any] = []

    def built(self, recorder: R) -> R:
        self.recorders.append(recorder)
        return recorder

    def close(self) -> None:
        for recorder in self.recorders:
            recorder.close_checkpoints()


class SabotSQLiteFactory(SQLiteFactory):
    application_recorder_class = OutboxSQLiteRecorder
    process_recorder_class = ChainedSQLiteProcessRecorder

    def __init__(self, env: Environment | EnvType | None):
        super().__init__(env)
        self.writers = Writers()

    def application_recorder(self) -> ChainedSQLiteApplicationRecorder:
        recorder = self.writers.built(OutboxSQLiteRecorder(self.datastore))
        if self.env_create_table():
            recorder.create_table()
        return recorder

    def process_recorder(self) -> ProcessRecorder:
        recorder = self.writers.built(ChainedSQLiteProcessRecorder(self.datastore))
        if self.env_create_table():
            recorder.create_table()
        return recorder

    def close(self) -> None:
        self.writers.close()
        super().close()


class SabotPostgresFactory(PostgresFactory):
    application_recorder_class = OutboxPostgresRecorder
    process_recorder_class = ChainedPostgresProcessRecorder

    def __init__(self, env: Environment | EnvType | None):
        super().__init__(env)
        self.writers = Writers()
        if self.env_create_table():
            with self.schema_lock():
                self._create_schema()

    def close(self) -> None:
        self.writers.close()
        super().close()

    @contextmanager
    def schema_lock(self) -> Iterator[None]:
        """Serialise schema creation across threads and processes: PostgreSQL refuses
        concurrent catalog updates ("tuple concurrently updated"), and every worker thread
        and process creates (if not exists) the same tables and functions when it starts."""
        with schema_lock(self.datastore.get_connection):
            yield

    def aggregate_recorder(self, purpose: str = "events") -> AggregateRecorder:
        recorder = PostgresAggregateRecorder(self.datastore, events_table_name=f"stored_{purpose}")
        return self._created(recorder)

    def application_recorder(self) -> ApplicationRecorder:
        recorder = OutboxPostgresRecorder(
            self.datastore, events_table_name=EVENTS_TABLE
        )
        return self._created(self.writers.built(recorder))

    def process_recorder(self) -> ProcessRecorder:
        recorder = ChainedPostgresProcessRecorder(self.datastore, events_table_name=EVENTS_TABLE)
        return self._created(self.writers.built(recorder))

    def _created(self, recorder: R) -> R:
        if self.env_create_table():
            with self.schema_lock():
                recorder.create_table()  # type: ignore[attr-defined]
        return recorder

    def _create_schema(self) -> None:
        schema = self.datastore.schema
        with self.datastore.get_connection() as connection:
            found = connection.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
            ).fetchone()
            if found is None:
                connection.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_identifier(schema)}")
