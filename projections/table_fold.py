"""Views of tables that fold each table's events through the domain's own state machine.

Rotation, chips, banks and coups all follow from the rules (`domain.table.state.TableState`); a
view that re-derived them from the events would be a second engine that can drift from the
first. So a `TableFoldView` keeps, per table, the Table aggregate as its events have made it
(`event.mutate(table)`: the aggregate's own replay, which also refuses an event whose version
does not follow the last one applied) plus the view's own working notes (`memo`, a msgspec
Struct). Both are stored per table in `view_<name>_tables` (the aggregate as an eventsourcing
snapshot through the store's mapper) and written back once per batch, in the batch's
transaction, with the view's rows. Table views at the same position share the replay
(`fold_together`): each table is loaded, replayed and snapshotted once for all of them, each
view observing it with its own notes.

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

from domain.table.aggregate import Table
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
        fold_together(cursor, [self], events)

    @abstractmethod
    def observe(self, folded: Folded[M], event: Event, before: Before | None) -> None:
        """Note what `event` (already applied to `folded.table`) means for this view."""

    def observe_other(self, cursor: Any, event: Event) -> None:
        """An event of another aggregate (among `topics`), in notification order."""
        raise TypeError(f"{self.name} reads no {type(event).__qualname__}")

    @abstractmethod
    def flush(self, cursor: Any, folded: Folded[M]) -> None:
        """Write this view's rows for a table the batch touched."""

    def _memo(self, row: Any) -> tuple[int, M]:
        """This view's working notes on a table (a row of its fold table) and the aggregate
        version they follow."""
        return int(row["version"]), cast(M, msgspec.msgpack.decode(bytes(row["memo"]),
                                                                   type=self.memo_type))

    def _table(self, table_id: UUID, row: Any) -> Table:
        """The aggregate as this view's last batch left it (a row of its fold table)."""
        snapshot = self.mapper.to_domain_event(
            StoredEvent(table_id, int(row["version"]), row["topic"], bytes(row["state"]))
        )
        return cast(Table, snapshot.mutate(None))  # type: ignore[attr-defined]

    def _save(self, cursor: Any, stored: StoredEvent, folded: Folded[M]) -> None:
        self.database.execute(
            cursor,
            "INSERT INTO {" + self.fold_table + "} (table_id, version, topic, state, memo)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (table_id) DO UPDATE SET"
            " version = excluded.version, topic = excluded.topic, state = excluded.state,"
            " memo = excluded.memo",
            (str(folded.table_id), stored.originator_version, stored.topic, stored.state,
             msgspec.msgpack.encode(folded.memo)),
        )


class OutOfStep(Exception):
    """Table views applied together whose working states follow different versions of a
    table (they are not at the same position): they must be applied one by one."""


def fold_together(cursor: Any, views: Sequence[TableFoldView[Any]],
                  events: Sequence[Event]) -> None:
    """Apply `events` (in notification order) to table views at the same position, in
    `cursor`'s transaction: each table touched is loaded, folded through its events and
    snapshotted once, and every view observes it with its own notes and writes its rows
    (`flush`) and its working state. An event of another aggregate goes to the views that
    read its topic (`observe_other`). A view failing on an event raises `ProjectionFailed`
    naming it; the caller's transaction rolls back all of them."""
    first = views[0]
    tables: dict[UUID, tuple[list[Table | None], list[Folded[Any]]]] = {}
    for event in events:
        view = first
        try:
            if not isinstance(event, Table.Event):
                topic = get_topic(type(event))
                for view in views:
                    if topic in view.topics:
                        view.observe_other(cursor, event)
                continue
            found = tables.get(event.originator_id)
            if found is None:
                found = tables[event.originator_id] = _load(cursor, views, event.originator_id)
            held, folds = found
            before = Before.of(held[0]) if held[0] is not None else None
            table = held[0] = cast(Table, event.mutate(held[0]))
            for view, folded in zip(views, folds, strict=True):
                folded.table = table
                view.observe(folded, event, before)
        except Exception as error:
            raise ProjectionFailed(
                f"{view.name} cannot apply {type(event).__qualname__} version"
                f" {event.originator_version} of {event.originator_id}: {error}"
            ) from error
    for held, folds in tables.values():
        assert held[0] is not None
        stored = first.mapper.to_stored_event(Snapshot.take(held[0]))
        for view, folded in zip(views, folds, strict=True):
            view.flush(cursor, folded)
            view._save(cursor, stored, folded)


def _load(cursor: Any, views: Sequence[TableFoldView[Any]],
          table_id: UUID) -> tuple[list[Table | None], list[Folded[Any]]]:
    """A table as the views' last batch left it, loaded once, and each view's notes: every
    view's fold table row in one statement (the aggregate's state from the first only)."""
    database = views[0].database
    rows = {row["n"]: row for row in database.execute(cursor, " UNION ALL ".join(
        f"SELECT {n} AS n, version, topic, {'state' if n == 0 else 'NULL AS state'}, memo"
        " FROM {" + view.fold_table + "} WHERE table_id = ?" for n, view in enumerate(views)
    ), (str(table_id),) * len(views)).fetchall()}
    table = views[0]._table(table_id, rows[0]) if 0 in rows else None
    version = table.version if table is not None else None
    folds: list[Folded[Any]] = []
    for n, view in enumerate(views):
        memo = view._memo(rows[n]) if n in rows else None
        if (memo[0] if memo is not None else None) != version:
            raise OutOfStep(f"{views[0].name} and {view.name} are at different versions of"
                            f" table {table_id}")
        folds.append(Folded(table_id, table, memo[1] if memo is not None else view.memo_type()))
    return [table], folds
