"""Running views to the head of the store: batches, each applied exactly once, and their lag.

The runner polls the notification log (the same on SQLite, whose recorder has no
subscriptions, and on PostgreSQL). One batch is one write transaction that:

1. locks the view's tracking row and reads its position (`ViewTracking.lock`);
2. reads the next notifications after it, up to the head and `batch_size`, filtered by the
   view's topics, in that same transaction;
3. lets the view change its rows (`View.apply`);
4. moves the tracking row to the last notification read (or to the head, when the batch
   reached it: the events in between were of other topics).

An error anywhere rolls all of it back: the view and its position stay where they were, so a
runner killed in the middle of a batch starts again at the first event of that batch, and
no event is applied twice or skipped. `rebuild` drops the view's tables and its position in
one transaction and runs it again from the first event.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, cast
from uuid import UUID

import msgspec
from eventsourcing.persistence import Mapper, Notification

from infra.database import Database
from projections.tracking import ViewTracking
from projections.view import Event, View

BATCH_SIZE = 500
APPLICATION = "sabot"
CREATING = 0x5AB07_0F_1E05  # the advisory lock taken while creating the views' tables

Progress = Callable[[int, int], None]
"""Called after each batch with the view's position and the head it is running to."""


class Store(Protocol):
    """What the runner reads through: an `infra.store.Store`, or an application (the API's
    service) with the same database and mapper."""

    @property
    def database(self) -> Database: ...

    @property
    def mapper(self) -> Mapper[UUID]: ...


class Lag(msgspec.Struct, frozen=True):
    """How far a view is behind the store: events after its position, and the age of the last
    event it applied (how old the newest thing it shows is)."""

    projection: str
    position: int
    head: int
    behind: int
    last_event_at: datetime | None
    seconds: float | None


class Runner:
    """Views of one store, their tables created if missing, each run on demand."""

    def __init__(self, store: Store, views: Sequence[type[View]], *,
                 batch_size: int = BATCH_SIZE) -> None:
        self.store = store
        self.database = store.database
        self.batch_size = batch_size
        self.tracking = ViewTracking(self.database, APPLICATION)
        self.views = {cls.name: cls(self.tracking, store.mapper) for cls in views}
        with self.database.transaction(write=True) as cursor:
            if self.database.dialect == "postgres":  # concurrent CREATE IF NOT EXISTS can clash
                self.database.execute(cursor, "SELECT pg_advisory_xact_lock(?)", (CREATING,))
            self.tracking.create_table(cursor)
            for view in self.views.values():
                view.create_tables(cursor)
                self.tracking.ensure(cursor, view.name)

    def view(self, name: str) -> View:
        try:
            return self.views[name]
        except KeyError:
            known = ", ".join(sorted(self.views))
            raise KeyError(f"no projection named {name!r} (known: {known})") from None

    def catch_up(self, name: str, *, until: int | None = None,
                 progress: Progress | None = None) -> int:
        """Apply every event up to the head (or `until`); the number of events applied."""
        view = self.view(name)
        applied = 0
        while True:
            with self.database.transaction(write=True) as cursor:
                position = self.tracking.lock(cursor, name)
                head = self._head(cursor) if until is None else min(until, self._head(cursor))
                if position >= head:
                    return applied
                notifications = self._notifications(cursor, view, position, head)
                events = [cast(Event, self.store.mapper.to_domain_event(n))
                          for n in notifications]
                view.apply(cursor, events)
                full = len(notifications) == self.batch_size
                reached = notifications[-1].id if full else head
                last_at = events[-1].timestamp if events else None
                self.tracking.advance(cursor, name, reached, last_at, _now())
            applied += len(events)
            if progress is not None:
                progress(reached, head)

    def rebuild(self, name: str, *, progress: Progress | None = None) -> int:
        """Drop the view and its position, then run it from the first event."""
        view = self.view(name)
        with self.database.transaction(write=True) as cursor:
            view.drop_tables(cursor)
            view.create_tables(cursor)
            self.tracking.reset(cursor, name)
        return self.catch_up(name, progress=progress)

    def head(self) -> int:
        with self.database.transaction(write=False) as cursor:
            return self._head(cursor)

    def lag(self, name: str) -> Lag:
        position = self.tracking.position(self.view(name).name)
        with self.database.transaction(write=False) as cursor:
            head = self._head(cursor)
            behind = self.database.execute(
                cursor, "SELECT COUNT(*) AS n FROM {stored_events} WHERE {nid} > ?",
                (position.notification_id,),
            ).fetchone()["n"]
        at = position.event_at
        seconds = (_now() - at).total_seconds() if at is not None else None
        return Lag(name, position.notification_id, head, int(behind), at, seconds)

    def _head(self, cursor: Any) -> int:
        row = self.database.execute(
            cursor, "SELECT MAX({nid}) AS head FROM {stored_events}"
        ).fetchone()
        return int(row["head"] or 0)

    def _notifications(self, cursor: Any, view: View, after: int,
                       head: int) -> list[Notification]:
        marks = ", ".join("?" * len(view.topics))
        rows = self.database.execute(
            cursor,
            "SELECT {nid} AS nid, originator_id, originator_version, topic, state"
            " FROM {stored_events} WHERE {nid} > ? AND {nid} <= ?"
            " AND topic IN (" + marks + ") ORDER BY {nid} LIMIT ?",
            (after, head, *view.topics, self.batch_size),
        ).fetchall()
        return [
            Notification(
                id=int(row["nid"]),
                originator_id=self.database.from_db_id(row["originator_id"]),
                originator_version=int(row["originator_version"]),
                topic=row["topic"],
                state=bytes(row["state"]),
            )
            for row in rows
        ]


def _now() -> datetime:
    return datetime.now().astimezone()
