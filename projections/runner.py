"""Running views to the head of the store: batches, each applied exactly once, and their lag.

The runner polls the notification log (the same on SQLite, whose recorder has no
subscriptions, and on PostgreSQL). One batch is one write transaction that:

1. locks the views' tracking rows and reads their positions, in one statement
   (`ViewTracking.lock`);
2. reads the next notifications after the lowest of them, up to the committed head
   (`infra.store.ledger.committed_head`: writers of different partitions commit out of
   notification order; a writer stuck in flight past `SABOT_WRITERS_WAIT_SECONDS` makes the
   call return what it applied, and the next call tries again) and `batch_size`, filtered
   by the views' topics, in that same transaction, in ranges of ids so that each read
   stays short however long the log;
3. decodes them once and lets each view change its rows (`View.apply`) for those of its
   topics after its own position; table views at the same position fold each table once
   between them (`projections.table_fold.fold_together`);
4. moves the tracking rows of the views it applied to the last notification read (or to the
   head, when the batch reached it: the events in between were of other topics), in one
   statement.

The writes of 3 and 4 travel together, not waiting for each other's answers
(`Database.pipelined`): a database error comes out at the next read or at the end of the
writes, and rolls the batch back as before.

With tournaments spread over several databases (`infra.store.homes`), each home has its own
notification ids: a view has a tracking row per home (`standings`, `standings@east`, ...), and
a batch reads one home's notifications and applies them in the views' own (main) database's
transaction, with that home's row. A view's rows depend on one partition's events at a time
(a table's, a tournament's), all in one home, so the order between homes does not matter.

`catch_up` runs one view; `catch_up_together` runs several in shared batches (a rebuild of
every view, `sabot projections`). An error anywhere rolls all of a batch back: the views and
their positions stay where they were, so a runner killed in the middle of a batch starts
again at the first event of that batch, and no event is applied twice or skipped. An event
a view cannot apply stops that view alone, at that event (a shared batch that fails is
run again view by view), recorded in `view_failures` (read by `/ready` and `sabot
projections status`) until a batch passes it. `rebuild` drops the views' tables and
positions in one transaction and runs them again from the first event.
"""

from __future__ import annotations

import logging
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Protocol, cast
from uuid import UUID

import msgspec
from eventsourcing.persistence import InterfaceError, Mapper, Notification, OperationalError

from infra.errors import WritersInFlight
from infra.store import notices
from infra.store.database import Database
from infra.store.homes import MAIN_HOME
from infra.store.ledger import committed_head
from projections.table_fold import TableFoldView, fold_together
from projections.tracking import ViewTracking
from projections.view import Event, ProjectionFailed, View

BATCH_SIZE = 5000
SPAN = 2
APPLICATION = "sabot"
CREATING = 0x5AB07_0F_1E05  # the advisory lock taken while creating the views' tables

FAILURES = ("CREATE TABLE IF NOT EXISTS {view_failures} (projection TEXT PRIMARY KEY,"
            " notification_id BIGINT NOT NULL, error TEXT NOT NULL, failed_at TEXT NOT NULL)")

log = logging.getLogger("sabot.projections")

Progress = Callable[[int, int], None]
"""Called after each batch with the view's position and the head it is running to."""


class Store(Protocol):
    """What the runner reads through: an `infra.store.opening.Store`, or an application (the API's
    service) with the same database and mapper."""

    @property
    def database(self) -> Database: ...

    @property
    def mapper(self) -> Mapper[UUID]: ...

    def home_databases(self) -> dict[str, Database]: ...


class Lag(msgspec.Struct, frozen=True):
    """How far a view is behind the store: events after its position, the age of the last
    event it applied (how old the newest thing it shows is), and the event it is stopped at
    (`stopped_at`, with the `error`) when it cannot apply one."""

    projection: str
    position: int
    head: int
    behind: int
    last_event_at: datetime | None
    seconds: float | None
    stopped_at: int | None = None
    error: str | None = None


class Moved(msgspec.Struct, frozen=True):
    """What one batch did: the events applied to each view it moved, the position they all
    reached and the head they run to."""

    applied: dict[str, int]
    reached: int
    head: int


class Failure(msgspec.Struct, frozen=True):
    """A view stopped at an event it could not apply."""

    projection: str
    notification_id: int
    error: str
    failed_at: datetime


class Runner:
    """Views of one store, their tables created if missing, each run on demand."""

    def __init__(self, store: Store, views: Sequence[type[View]], *,
                 batch_size: int = BATCH_SIZE) -> None:
        self.store = store
        self.database = store.database
        self.batch_size = batch_size
        self.tracking = ViewTracking(self.database, APPLICATION)
        self.homes = store.home_databases()
        self._failing = (MAIN_HOME, 0)
        self.views = {cls.name: cls(self.tracking, store.mapper) for cls in views}
        with self.database.transaction(write=True) as cursor:
            if self.database.dialect == "postgres":  # concurrent CREATE IF NOT EXISTS can clash
                self.database.execute(cursor, "SELECT pg_advisory_xact_lock(?)", (CREATING,))
            self.tracking.create_table(cursor)
            self.database.execute(cursor, FAILURES)
            for view in self.views.values():
                view.create_tables(cursor)
                for home in self.homes:
                    self.tracking.ensure(cursor, tracked(view.name, home))

    def view(self, name: str) -> View:
        try:
            return self.views[name]
        except KeyError:
            known = ", ".join(sorted(self.views))
            raise KeyError(f"no projection named {name!r} (known: {known})") from None

    def catch_up(self, name: str, *, until: int | Mapping[str, int] | None = None,
                 progress: Progress | None = None) -> int:
        """Apply every event up to the head (or `until`, by home if a mapping); the number of
        events applied.

        An event the view cannot apply stops this view there: the events before it are
        applied (its batch is retried one event at a time), the failure is recorded
        (`failures`, logged) and raised as `ProjectionFailed`; the next call tries it again,
        and the first batch that passes it clears the failure."""
        return sum(self._catch_up(name, home, until.get(home, 0) if isinstance(until, Mapping)
                                  else until, progress) for home in self.homes)

    def _catch_up(self, name: str, home: str, until: int | None, progress: Progress | None
                  ) -> int:
        view = self.view(name)
        applied, size = 0, self.batch_size
        if until is None and self._at_head(view.name, home):
            return 0  # the common case of a read: no write transaction, no wait for writers
        while True:
            try:
                moved = self._batch([view], until, size, home)
            except WritersInFlight:
                return applied  # a writer stuck in flight (logged): the next call tries again
            except (OperationalError, InterfaceError):
                raise  # the store, not the event: nothing to record against the view
            except Exception as error:
                if size > 1:
                    size = 1  # apply what comes before the failing event
                    continue
                cause = error.__cause__ if isinstance(error, ProjectionFailed) else None
                raise ProjectionFailed(self._failed(name, error)) from cause or error
            if moved is None:
                return applied
            applied += moved.applied.get(name, 0)
            if progress is not None:
                progress(moved.reached, moved.head)
            if moved.reached >= moved.head:
                return applied  # the head this call set out for (later events: the next call)

    def catch_up_together(self, names: Sequence[str], *, progress: Progress | None = None
                          ) -> tuple[dict[str, int], dict[str, ProjectionFailed]]:
        """Bring the views `names` to the head in shared batches: each event is read and
        decoded once for all of them, and each table folded once for the table views at the
        same position (`projections.table_fold.fold_together`); the events applied to each
        view, and the views stopped by an event (each with the error `catch_up` raises).

        A shared batch commits every view's rows and position together, or none. When one
        fails, each view goes on alone (`catch_up`), so the view that cannot apply an event
        stops alone at it; a view already stopped by one is run alone from the start."""
        stopped = {failure.projection for failure in self.failures()}
        applied = dict.fromkeys(names, 0)
        alone: set[str] = set()
        for home in self.homes:
            views = [self.view(name) for name in names if name not in stopped]
            while len(views) > 1:
                try:
                    moved = self._batch(views, None, self.batch_size, home)
                except WritersInFlight:
                    views = []  # a writer stuck in flight (logged): the next call tries again
                    break
                except (OperationalError, InterfaceError):
                    raise
                except Exception:
                    break  # an event one of them cannot apply: each on its own, below
                if moved is None:
                    views = []
                    break
                for name, count in moved.applied.items():
                    applied[name] += count
                if progress is not None:
                    progress(moved.reached, moved.head)
                if moved.reached >= moved.head:
                    views = []  # all at the head this call set out for (later: next call)
                    break
            alone.update(view.name for view in views)
        failed = {}
        for name in [n for n in names if n in alone or n in stopped]:
            try:
                applied[name] += self.catch_up(name, progress=progress)
            except ProjectionFailed as error:
                failed[name] = error
        return applied, failed

    def _batch(self, views: Sequence[View], until: int | None, size: int,
               home: str = MAIN_HOME) -> Moved | None:
        """One batch of at most `size` events (of any of the views' topics) of one home, in
        one transaction of the views' database, applied to each view not already past them;
        None when every view is already at the home's head."""
        source = self.homes[home]
        committed = committed_head(source)  # before the batch's snapshot
        with self.database.transaction(write=True) as cursor:
            locked = self.tracking.lock(cursor, [tracked(view.name, home) for view in views])
            positions = {view.name: locked[tracked(view.name, home)] for view in views}
            head = committed if until is None else min(until, committed)
            behind = [view for view in views if positions[view.name] < head]
            if not behind:
                return None
            after = min(positions[view.name] for view in behind)
            reads = {view.name: frozenset(view.topics) for view in behind}
            topics = sorted(frozenset().union(*reads.values()))
            with self._reading(source, cursor) as reading:
                notifications = self._notifications(source, reading, topics, after, head, size)
            self._failing = (home, notifications[0].id if notifications else head)
            reached = notifications[-1].id if len(notifications) == size else head
            decoded = [(n.id, n.topic, cast(Event, self.store.mapper.to_domain_event(n)))
                       for n in notifications]
            moving = [view for view in behind if positions[view.name] < reached]
            with self.database.pipelined(cursor):  # the rows' writes travel together
                applied, last_at = self._apply(cursor, moving, positions, reads, decoded)
                self.tracking.advance(cursor, reached, {tracked(name, home): at for name, at
                                                        in last_at.items()}, _now())
                self.database.execute(
                    cursor, "DELETE FROM {view_failures} WHERE projection IN ("
                    + ", ".join("?" * len(moving)) + ")", [view.name for view in moving])
        if home == MAIN_HOME:  # the reads waiting for a position (`api.view_reader`)
            notices.positions(self.database, notices.VIEWS).publish(reached)
        return Moved(applied, reached, head)

    @staticmethod
    def _apply(cursor: Any, moving: Sequence[View], positions: Mapping[str, int],
               reads: Mapping[str, frozenset[str]], decoded: Sequence[tuple[int, str, Event]]
               ) -> tuple[dict[str, int], dict[str, datetime | None]]:
        """Apply to each view of `moving` the `decoded` events of its topics after its
        position: the events applied to each, and the time of the last one (None: none)."""
        applied: dict[str, int] = {}
        last_at: dict[str, datetime | None] = {}
        for position in sorted({positions[view.name] for view in moving}):
            together = [view for view in moving if positions[view.name] == position]
            start = bisect_right([nid for nid, _, _ in decoded], position)
            after_position = decoded[start:]
            read: dict[frozenset[str], list[Event]] = {}  # by the topics a view reads
            for view in together:
                if reads[view.name] not in read:
                    read[reads[view.name]] = [e for _, topic, e in after_position
                                              if topic in reads[view.name]]
            folds = [view for view in together if isinstance(view, TableFoldView)
                     and type(view).apply is TableFoldView.apply]  # not one that filters
            if folds:
                fold_together(cursor, folds, [e for _, _, e in after_position])
            for view in together:
                mine = read[reads[view.name]]
                if view not in folds:
                    view.apply(cursor, mine)
                last_at[view.name] = mine[-1].timestamp if mine else None
                applied[view.name] = len(mine)
        return applied, last_at

    def _failed(self, name: str, error: Exception) -> str:
        """Record (and log) that `name` stopped at the event it failed on; the message."""
        message = (str(error).splitlines() or [repr(error)])[0][:500]
        home, at = self._failing
        if home != MAIN_HOME:
            message = f"(in {home}'s log) {message}"[:500]
        with self.database.transaction(write=True) as cursor:
            self.database.execute(cursor, "DELETE FROM {view_failures} WHERE projection = ?",
                                  (name,))
            self.database.execute(
                cursor, "INSERT INTO {view_failures} (projection, notification_id, error,"
                " failed_at) VALUES (?, ?, ?, ?)",
                (name, at, message, _now().isoformat()))
        log.error("projection %s stopped at event %d: %s", name, at, message)
        return f"projection {name} stopped at event {at}: {message}"

    def failures(self) -> list[Failure]:
        """The views stopped by an event they could not apply, and why."""
        rows = self.database.read_all("SELECT projection, notification_id, error, failed_at"
                                      " FROM {view_failures} ORDER BY projection")
        return [Failure(r["projection"], int(r["notification_id"]), r["error"],
                        datetime.fromisoformat(r["failed_at"])) for r in rows]

    def rebuild(self, name: str, *, progress: Progress | None = None) -> int:
        """Drop the view and its position, then run it from the first event."""
        self.reset([name])
        return self.catch_up(name, progress=progress)

    def rebuild_together(self, names: Sequence[str], *, progress: Progress | None = None
                         ) -> tuple[dict[str, int], dict[str, ProjectionFailed]]:
        """Drop the views and their positions, then run them together from the first event
        (`catch_up_together`)."""
        self.reset(names)
        return self.catch_up_together(names, progress=progress)

    def reset(self, names: Sequence[str]) -> None:
        """Drop the views' tables and positions, in one transaction: empty, at event 0."""
        views = [self.view(name) for name in names]
        with self.database.transaction(write=True) as cursor:
            for view in views:
                view.drop_tables(cursor)
                view.create_tables(cursor)
                for home in self.homes:
                    self.tracking.reset(cursor, tracked(view.name, home))
                self.database.execute(
                    cursor, "DELETE FROM {view_failures} WHERE projection = ?", (view.name,))

    def head(self) -> int:
        """The main database's last notification id."""
        return self.database.last_notification_id()

    def heads(self) -> tuple[int, ...]:
        """Each home's last notification id, in the order of `homes`."""
        return tuple(source.last_notification_id() for source in self.homes.values())

    def at_heads(self, names: Sequence[str], heads: Sequence[int]) -> bool:
        """Whether the views `names` are at or past `heads` (from `heads()`) in every home
        (their positions read in one statement)."""
        rows = [tracked(name, home) for name in names for home in self.homes]
        if not rows:
            return True
        positions = self.tracking.notification_ids(rows)
        return all(positions[tracked(name, home)] >= head for name in names
                   for home, head in zip(self.homes, heads, strict=True))

    def lag(self, name: str) -> Lag:
        position = self.tracking.position(self.view(name).name)
        head = self.database.last_notification_id()
        behind = 0  # in every home's log
        for home, source in self.homes.items():
            after = self.tracking.position(tracked(name, home)).notification_id
            with source.transaction(write=False) as cursor:
                behind += source.execute(
                    cursor, "SELECT COUNT(*) AS n FROM {stored_events} WHERE {nid} > ?",
                    (after,)).fetchone()["n"]
        at = position.event_at
        seconds = (_now() - at).total_seconds() if at is not None else None
        failed = next((f for f in self.failures() if f.projection == name), None)
        return Lag(name, position.notification_id, head, int(behind), at, seconds,
                   failed.notification_id if failed else None, failed.error if failed else None)

    def _at_head(self, name: str, home: str) -> bool:
        """Whether the view is at the home's last notification (so at its committed head)."""
        source = self.homes[home]
        with self.database.transaction(write=False) as cursor:
            row = self.database.execute(
                cursor, "SELECT notification_id FROM {view_tracking} WHERE projection = ?",
                (tracked(name, home),)).fetchone()
            if row is None:
                return False
            with self._reading(source, cursor) as reading:
                return int(row["notification_id"]) >= self._head(source, reading)

    @contextmanager
    def _reading(self, source: Database, cursor: Any) -> Iterator[Any]:
        """A cursor on `source`'s log: `cursor` itself when it is the views' own database,
        else a read transaction of that home's."""
        if source is self.database:
            yield cursor
        else:
            with source.transaction(write=False) as reading:
                yield reading

    @staticmethod
    def _head(database: Database, cursor: Any) -> int:
        row = database.execute(cursor, "SELECT MAX({nid}) AS head FROM {stored_events}"
                               ).fetchone()
        return int(row["head"] or 0)

    @staticmethod
    def _notifications(source: Database, cursor: Any, topics: Sequence[str], after: int,
                       head: int, size: int) -> list[Notification]:
        """The first `size` notifications of `topics` after `after`, up to `head`: read in
        ranges of ids (the first `SPAN` times `size` long, doubled while the topics are
        sparse), so that each read stops early on PostgreSQL's index whatever its plan
        (one query to the head scanned every id to the head for each batch)."""
        marks = ", ".join("?" * len(topics))
        select = source.sql(
            "SELECT {nid} AS nid, originator_id, originator_version, topic, state"
            " FROM {stored_events} WHERE {nid} > ? AND {nid} <= ?"
            " AND topic IN (" + marks + ") ORDER BY {nid} LIMIT ?")
        binary = {"binary": True} if source.dialect == "postgres" else {}  # no hex bytea
        rows: list[Any] = []
        low, span = after, SPAN * size
        while len(rows) < size and low < head:
            high = min(head, low + span)
            cursor.execute(select, (low, high, *topics, size - len(rows)), **binary)
            rows.extend(cursor.fetchall())
            low, span = high, span * 2
        from_db_id = source.from_db_id
        return [
            Notification(id=int(row["nid"]), originator_id=from_db_id(row["originator_id"]),
                         originator_version=int(row["originator_version"]),
                         topic=row["topic"], state=bytes(row["state"]))
            for row in rows
        ]


def tracked(view: str, home: str) -> str:
    """The tracking row of a view's position in a home's log."""
    return view if home == MAIN_HOME else f"{view}@{home}"


def _now() -> datetime:
    return datetime.now().astimezone()
