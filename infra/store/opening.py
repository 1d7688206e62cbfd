"""Opening the event store a database URL names, outside any application.

`open_store(url)` gives what the audit, the vault or a maintenance script needs: the chained
recorder, the mapper, an eventsourcing `EventStore` and plain SQL access (`Database`).
Applications do not use it: `SabotApplication` (`infra.services.application`) builds the
same parts from the same URL through eventsourcing's factory mechanism
(`infra.store.urls.store_env`).

Opening a store to write (`create=True`) upgrades its schema (`infra.store.migrations`: what it
did is `recorder.schema_upgrade`); opening it to read refuses a store upgraded by a newer
Sabot, as writing does. Note that each opening of `sqlite:///:memory:` is a new, empty
database.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import Self
from uuid import UUID

from eventsourcing.persistence import EventStore, InfrastructureFactory, Mapper, PersistenceError
from eventsourcing.utils import Environment

from infra.errors import StoreError
from infra.settings import redact_url
from infra.store import migrations
from infra.store.database import Database
from infra.store.homes import MAIN_HOME, homes_from
from infra.store.reachability import check_database
from infra.store.recorders import (
    ChainedPostgresApplicationRecorder,
    ChainedSQLiteApplicationRecorder,
)
from infra.store.urls import store_env

__all__ = ["Store", "StoreError", "open_store"]

ChainedRecorder = ChainedSQLiteApplicationRecorder | ChainedPostgresApplicationRecorder
READER_POOL = {"POSTGRES_POOL_SIZE": "1", "POSTGRES_MAX_OVERFLOW": "1"}


class Store:
    def __init__(self, url: str, *, create: bool = True, main: Database | None = None) -> None:
        check_database(url)
        reader = {} if create else READER_POOL  # a reader (verify) needs one connection
        env = Environment("", {**os.environ, **store_env(url, create=create), **reader})
        self.url = url
        try:
            self.factory: InfrastructureFactory = InfrastructureFactory.construct(env)
            recorder = self.factory.application_recorder()
        except PersistenceError as error:
            raise StoreError(f"cannot open {redact_url(url)}: {one_line(error)}") from error
        assert isinstance(recorder, ChainedRecorder)
        self.recorder: ChainedRecorder = recorder
        self.mapper: Mapper[UUID] = self.factory.mapper()
        self.events: EventStore[UUID] = EventStore(self.mapper, self.recorder)
        self.database: Database = self.recorder.database
        if not create:
            migrations.check(self.database)
        self.create = create
        self._homes: dict[str, Store] | None = {} if main else None  # a home has none
        self.vault_database = main or self.database  # the shoe seeds are the main database's

    def homes(self) -> dict[str, Store]:
        """The stores of the other databases partitions live in (`infra.store.homes`), by name,
        opened on first use: none unless `SABOT_PARTITION_DATABASES` names some."""
        if self._homes is None:
            named = homes_from()
            self._homes = {}
            for name, url in (named.urls if named else {}).items():
                self._homes[name] = Store(url, create=self.create, main=self.database)
        return self._homes

    def holding(self, stream: UUID) -> Store:
        """The store whose log holds `stream`: this one, or the home it lives in."""
        for store in (self, *self.homes().values()):
            if store.recorder.select_events(stream, limit=1):
                return store
        return self

    def home_databases(self) -> dict[str, Database]:
        return {MAIN_HOME: self.database,
                **{name: store.database for name, store in self.homes().items()}}

    def close(self) -> None:
        for store in (self._homes or {}).values():
            store.close()
        self.factory.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def one_line(error: BaseException) -> str:
    """The first line of a driver's message (PostgreSQL appends the statement and a caret)."""
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def open_store(url: str, *, create: bool = True) -> Store:
    """The store at `url`; with `create=False`, a missing database or table is an error."""
    return Store(url, create=create)
