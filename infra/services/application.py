"""`SabotApplication`: the eventsourcing `Application` every Sabot service subclasses.

It runs on the store a database URL names (`infra.store.urls`): the msgspec mapper, the chained
recorders, one `stored_events` table whatever the service. A subclass declares its
aggregates' snapshotting as eventsourcing does (`snapshotting_intervals = {Table: 100}`) and
saves with a command id:

    class TableService(SabotApplication):
        snapshotting_intervals = {Table: 100}

    service = TableService(url="sqlite:///.sabot/sabot.db")
    service.save(table, command_id="c-42")      # DuplicateCommand if c-42 was applied
    service.recorded_command("c-42")           # RecordedCommand(id, first, last) | None

Which database: the `url` argument, else `SABOT_DATABASE_URL` in `env`, else in the process
environment, else the default (`infra.settings`). An explicit `url` wins over `env`;
otherwise `env` (e.g. from eventsourcing's projection runner) wins over the URL's settings.
"""

from __future__ import annotations

import logging
import os
from typing import Any, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate, DomainEventProtocol, MutableOrImmutableAggregate
from eventsourcing.persistence import (
    ApplicationRecorder,
    EventStore,
    InfrastructureFactory,
    Recording,
)
from eventsourcing.utils import Environment, EnvType

from domain.errors import NotFound
from domain.table.recording import fold
from infra.errors import RecordedCommand, StoreError
from infra.settings import load_settings, resolve_database_url
from infra.store.database import Database, database_of
from infra.store.homes import MAIN_HOME, homes_from
from infra.store.partitions import partition_key
from infra.store.reachability import check_database
from infra.store.recorders import (
    ChainedPostgresApplicationRecorder,
    ChainedSQLiteApplicationRecorder,
)
from infra.store.routing import ChainedRecorder, RoutedRecorder, RoutedSnapshots
from infra.store.urls import sqlite_path, store_env
from infra.store.vault import SeedVault

log = logging.getLogger("sabot.store")


class SabotApplication(Application[UUID]):
    def __init__(
        self,
        env: EnvType | None = None,
        *,
        url: str | None = None,
        secret_key: bytes | None = None,
    ) -> None:
        given = dict(env or {})
        if url is not None:
            merged = {**given, **store_env(url)}
        else:
            url = resolve_database_url(given.get("SABOT_DATABASE_URL"))
            merged = {**store_env(url), **given}
        self._home_factories: dict[str, InfrastructureFactory] = {}
        super().__init__(merged)
        if not isinstance(
            self.recorder,
            ChainedSQLiteApplicationRecorder | ChainedPostgresApplicationRecorder | RoutedRecorder,
        ):
            raise StoreError(
                f"{type(self).__name__} needs Sabot's chained recorders, got "
                f"{type(self.recorder).__name__} (check PERSISTENCE_MODULE)"
            )
        self.chained_recorder = self.recorder
        self.database_url = url
        self.database: Database = database_of(self.recorder.datastore)
        self._secret_key = secret_key
        self._vault: SeedVault | None = None

    def construct_recorder(self) -> ApplicationRecorder:
        """The main database's chained recorder; with `SABOT_PARTITION_DATABASES` set, a
        `RoutedRecorder` over it and one chained recorder per home (`infra.store.routing`)."""
        homes = homes_from(self.env)
        for url in (homes.urls if homes else {}).values():
            check_database(url)  # a home that does not let us in is named, before any write
        main = self.factory.application_recorder()
        if homes is None:
            return main
        assert isinstance(main, ChainedRecorder)
        recorders = {}
        for name, url in homes.urls.items():
            factory = InfrastructureFactory.construct(Environment("", store_env(url)))
            self._home_factories[name] = factory
            recorder = factory.application_recorder()
            assert isinstance(recorder, ChainedPostgresApplicationRecorder)
            recorders[name] = recorder
        return RoutedRecorder(main, homes, recorders)

    def construct_snapshot_store(self) -> EventStore[UUID]:
        """Snapshots beside their streams: in each one's home when partitions are spread."""
        store = super().construct_snapshot_store()
        if isinstance(self.recorder, RoutedRecorder):
            store.recorder = RoutedSnapshots(self.recorder, {
                MAIN_HOME: store.recorder,
                **{name: factory.aggregate_recorder(purpose="snapshots")
                   for name, factory in self._home_factories.items()}})
        return store

    def close(self) -> None:
        super().close()
        for factory in self._home_factories.values():
            factory.close()

    def __del__(self) -> None:
        """Nothing: closing is explicit (`close()`, `with`). eventsourcing's `__del__` closes,
        and closing writes the last checkpoint, which waits for the writers in flight: run by
        the garbage collector inside one of those writers' own threads, it waited for itself
        (issue 30). The datastore's pool is dropped with it."""

    def save(
        self,
        *objs: MutableOrImmutableAggregate[UUID] | DomainEventProtocol[UUID] | None,
        command_id: str | UUID | None = None,
        **kwargs: Any,
    ) -> list[Recording[UUID]]:
        """Store the pending events of `objs` in one transaction, once per `command_id`.

        Raises `DuplicateCommand` (nothing written) if `command_id` was already applied, and
        eventsourcing's `IntegrityError` (nothing written) if another writer took a version.
        """
        if command_id is not None:
            kwargs["command_id"] = str(command_id)
        partitions = {obj.id: key for obj in objs
                      if isinstance(obj, Aggregate) and (key := partition_key(obj)) is not None}
        if partitions:
            kwargs["partitions"] = partitions  # each stream's partition (`infra.store.partitions`)
        return super().save(*objs, **kwargs)

    def load(self, aggregate_id: UUID, what: str) -> Any:
        """An aggregate by id, or `NotFound` naming what was looked for (`unknown-{what}`):
        the one translation of eventsourcing's "not found" for every service."""
        try:
            return self.repository.get(aggregate_id, projector_func=fold)
        except AggregateNotFoundError:
            raise NotFound(f"no {what} {aggregate_id}", rule=f"unknown-{what}") from None

    def exists(self, aggregate_id: UUID) -> bool:
        return bool(list(self.repository.event_store.get(aggregate_id, lte=1)))

    def _take_snapshots(self, processing_event: Any) -> None:
        """A snapshot is derived data taken after the command committed: failing to take one
        is logged, never turned into the command's answer (its events are stored).

        Taken where eventsourcing schedules them (a save that reaches a multiple of the
        class's interval), of the aggregate just saved, at its new version: the snapshot at
        the multiple itself, when it fell inside the saved batch, was read back from the store
        and replayed (6 ms a snapshot, 8 % of a director's CPU)."""
        try:
            self._snapshot_saved(processing_event)
        except Exception:
            log.exception("snapshot not taken; the aggregate loads from its events")

    def _snapshot_saved(self, processing_event: Any) -> None:
        if not (self.snapshots and self.snapshotting_intervals):
            return
        due: dict[UUID, Any] = {}
        for event in processing_event.events:
            aggregate = processing_event.aggregates.get(event.originator_id)
            interval = self.snapshotting_intervals.get(type(aggregate))
            if interval is not None and not event.originator_version % interval:
                due[event.originator_id] = aggregate
        for aggregate in due.values():
            snapshot_class = getattr(type(aggregate), "Snapshot", type(self).snapshot_class)
            assert snapshot_class is not None, "eventsourcing's Aggregate has one"
            self.snapshots.put([snapshot_class.take(aggregate)])

    def home_databases(self) -> dict[str, Database]:
        """The databases this application's events live in, by home (`infra.store.homes`): the
        main one alone unless `SABOT_PARTITION_DATABASES` names others."""
        if isinstance(self.recorder, RoutedRecorder):
            return self.recorder.databases()
        return {MAIN_HOME: self.database}

    def home_database(self, aggregate_id: UUID) -> Database:
        """The database an aggregate's events (and its commands' effects) live in."""
        if isinstance(self.recorder, RoutedRecorder):
            home = self.recorder.home_of_stream(aggregate_id)
            return self.recorder.recorders[home or MAIN_HOME].database
        return self.database

    def streams_with(self, topic: str) -> list[UUID]:
        """The streams created by an event of `topic` (e.g. every tournament's), in the order
        they were recorded in each home, the main database's first: read from the index of
        the streams' first events (migration 11), not the whole log."""
        found: list[UUID] = []
        for database in self.home_databases().values():
            with database.transaction(write=False) as cursor:
                rows = database.execute(
                    cursor, "SELECT originator_id FROM {stored_events} WHERE topic = ?"
                    " AND originator_version = 1 ORDER BY {nid}", (topic,)).fetchall()
            found.extend(database.from_db_id(row["originator_id"]) for row in rows)
        return found

    def recorded_command(self, command_id: str | UUID) -> RecordedCommand | None:
        """The stream and versions a command produced, or None if it was never applied."""
        return self.chained_recorder.recorded_command(command_id)

    @property
    def vault(self) -> SeedVault:
        """The shoe-seed vault of this database (its key from the settings unless given)."""
        if self._vault is None:
            self._vault = SeedVault(self.database, self.secret_key)
        return self._vault

    @property
    def secret_key(self) -> bytes:
        """The installation's secret key: the one given, else the settings' (seeds, slips)."""
        if self._secret_key is None:
            self._secret_key = load_settings(database_url=self.database_url).secret_key
        return self._secret_key


App = TypeVar("App", bound=SabotApplication)


def open_service(cls: type[App], database_url: str | None = None, *, existing: bool = False,
                 **kwargs: Any) -> App:
    """A `SabotApplication` subclass on `database_url`, else `$SABOT_DATABASE_URL`, else the
    default store (for commands whose `--database` option may be absent); a PostgreSQL that
does not let us in is `ServiceUnavailable` within the connect timeout. `existing`: a command
that only reads or administers a store refuses to make the default one (no URL given, the
default SQLite file not there is `NotFound`): run from another folder, it would otherwise start
an empty store with a key of its own."""
    url = resolve_database_url(database_url)
    defaulted = not database_url and not os.environ.get("SABOT_DATABASE_URL")
    if existing and defaulted and not os.path.exists(sqlite_path(url)):
        raise NotFound(f"no store here: {sqlite_path(url)} does not exist; pass --database or"
                       " set SABOT_DATABASE_URL", rule="no-store")
    check_database(url)
    return cls(url=url, **kwargs)
