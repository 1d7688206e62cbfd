"""Views of tables that fold each table's events through the domain's own state machine.

Rotation, chips, banks and coups all follow from the rules (`domain.table.TableState`); a
view that re-derived them from the events would be a second engine that can drift from the
first. So a `TableFoldView` keeps, per table, the Table aggregate as its events have made it
(`event.mutate(table)`: the aggregate's own replay, which also refuses an event whose version
does not follow the last one applied) plus the view's own working notes (`memo`, a msgspec
Struct). Both are stored per table in `view_<name>_tables` (the aggregate as an eventsourcing
snapshot through the store's mapper) and written back once per batch, in the batch's
transaction, with the view's rows.

A subclass says what an event means for it (`observe(folded, event, before)`, with the
table's seats and bank as they were before the event) and writes its rows for each table the
batch touched (`flush(cursor, folded)`). A view that also reads another aggregate's events
adds their topics and handles them, in order, in `observe_other(cursor, event)`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast
from uuid import UUID

import msgspec
from eventsourcing.domain import Aggregate, Snapshot
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from domain.table_aggregate import Table
from projections.view import Event, ProjectionFailed, View

M = TypeVar("M", bound=msgspec.Struct)


def event_topics(aggregate: type[Aggregate]) -> tuple[str, ...]:
    """The topics of every event class an aggregate declares."""
    return tuple(get_topic(cls) for cls in vars(aggregate).values()
                 if isinstance(cls, type) and issubclass(cls, Aggregate.Event))


TABLE_TOPICS = event_topics(Table)


class Before(msgspec.Struct, frozen=True):
    """What an event may change that a view wants to compare: chips, banker, bank."""

    chips: dict[str, int]
    banker: str | None
    bank: int

    @classmethod
    def of(cls, table: Table) -> Before:
        s = table.state
        return cls({seat.player: seat.chips for seat in s.seats}, s.banker, s.bank)

    def holdings(self) -> dict[str, int]:
        """Each player's chips, the bank counted with the banker's own."""
        return {p: n + (self.bank if p == self.banker else 0) for p, n in self.chips.items()}


def holdings_of(table: Table) -> dict[str, int]:
    return Before.of(table).holdings()


@dataclass
class Folded(Generic[M]):
    """One table as a view knows it: the aggregate replayed so far and the view's notes."""

    table_id: UUID
    table: Table | None
    memo: M


class TableFoldView(View, Generic[M]):
    topics = TABLE_TOPICS
    memo_type: ClassVar[type[msgspec.Struct]]

    @property
    def fold_table(self) -> str:
        return f"view_{self.name}_tables"

    def ddl(self) -> list[str]:
        return [*super().ddl(), (
            "CREATE TABLE IF NOT EXISTS {" + self.fold_table + "} ("
            " table_id TEXT PRIMARY KEY, version BIGINT NOT NULL, topic TEXT NOT NULL,"
            " state BLOB NOT NULL, memo BLOB NOT NULL)"
        )]

    def table_names(self) -> list[str]:
        return [*super().table_names(), self.fold_table]

    def apply(self, cursor: Any, events: Sequence[Event]) -> None:
        batch: dict[UUID, Folded[M]] = {}
        for event in events:
            try:
                if not isinstance(event, Table.Event):
                    self.observe_other(cursor, event)
                    continue
                folded = batch.get(event.originator_id)
                if folded is None:
                    folded = batch[event.originator_id] = self._load(cursor, event.originator_id)
                before = Before.of(folded.table) if folded.table is not None else None
                folded.table = cast(Table, event.mutate(folded.table))
                self.observe(folded, event, before)
            except Exception as error:
                raise ProjectionFailed(
                    f"{self.name} cannot apply {type(event).__qualname__} version"
                    f" {event.originator_version} of {event.originator_id}: {error}"
                ) from error
        for folded in batch.values():
            self.flush(cursor, folded)
            self._save(cursor, folded)

    @abstractmethod
    def observe(self, folded: Folded[M], event: Event, before: Before | None) -> None:
        """Note what `event` (already applied to `folded.table`) means for this view."""

    def observe_other(self, cursor: Any, event: Event) -> None:
        """An event of another aggregate (among `topics`), in notification order."""
        raise TypeError(f"{self.name} reads no {type(event).__qualname__}")

    @abstractmethod
    def flush(self, cursor: Any, folded: Folded[M]) -> None:
        """Write this view's rows for a table the batch touched."""

    def _load(self, cursor: Any, table_id: UUID) -> Folded[M]:
        row = self.database.execute(
            cursor,
            "SELECT version, topic, state, memo FROM {" + self.fold_table + "}"
            " WHERE table_id = ?",
            (str(table_id),),
        ).fetchone()
        if row is None:
            return Folded(table_id, None, cast(M, self.memo_type()))
        snapshot = self.mapper.to_domain_event(
            StoredEvent(table_id, int(row["version"]), row["topic"], bytes(row["state"]))
        )
        table = cast(Table, snapshot.mutate(None))  # type: ignore[attr-defined]
        memo = msgspec.msgpack.decode(bytes(row["memo"]), type=self.memo_type)
        return Folded(table_id, table, cast(M, memo))

    def _save(self, cursor: Any, folded: Folded[M]) -> None:
        assert folded.table is not None
        stored = self.mapper.to_stored_event(Snapshot.take(folded.table))
        self.database.execute(
            cursor,
            "INSERT INTO {" + self.fold_table + "} (table_id, version, topic, state, memo)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (table_id) DO UPDATE SET"
            " version = excluded.version, topic = excluded.topic, state = excluded.state,"
            " memo = excluded.memo",
            (str(folded.table_id), stored.originator_version, stored.topic, stored.state,
             msgspec.msgpack.encode(folded.memo)),
        )
