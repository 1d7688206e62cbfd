"""Where each projection stands: one `view_tracking` row per projection, moved in its view's
transaction.

`ViewTracking` is an eventsourcing `TrackingRecorder` over Sabot's `Database` (SQLite or
PostgreSQL, same statements). A row holds the last notification id the projection has taken
into account, the timestamp of the last event it applied, and when it applied it. The row is
moved by `advance(cursor, ...)` inside the transaction that writes the view's rows, so the rows
and the position commit or roll back together:

* `lock(cursor, projections)` reads their positions at the start of that transaction and
  holds them (SQLite `BEGIN IMMEDIATE` already serialises writers; PostgreSQL `SELECT ... FOR
  UPDATE`), so two runners of one projection take turns instead of applying the same events
  twice;
* `advance` only moves forward: a position that is not past the current one raises
  eventsourcing's `IntegrityError`, and the whole transaction rolls back.

Both take the projections of a batch in one statement (a round trip each, not one a view).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec
from eventsourcing.persistence import IntegrityError, Tracking, TrackingRecorder

from infra.store.database import Database

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS {view_tracking} ("
    " projection TEXT PRIMARY KEY,"
    " application_name TEXT NOT NULL,"
    " notification_id BIGINT NOT NULL,"
    " event_at TEXT,"
    " applied_at TEXT)"
)


class Position(msgspec.Struct, frozen=True):
    """A projection's tracking row: its notification id and the times of its last event."""

    projection: str
    notification_id: int
    event_at: datetime | None
    applied_at: datetime | None


class ViewTracking(TrackingRecorder):
    """The tracking rows of Sabot's views (`view_tracking`), in the events' own database."""

    def __init__(self, database: Database, application_name: str) -> None:
        self.database = database
        self.application_name = application_name

    def create_table(self, cursor: Any) -> None:
        self.database.execute(cursor, SCHEMA)

    def ensure(self, cursor: Any, projection: str) -> None:
        """Give `projection` a row at position 0 unless it has one."""
        self.database.execute(
            cursor,
            "INSERT INTO {view_tracking} (projection, application_name, notification_id)"
            " VALUES (?, ?, 0) ON CONFLICT (projection) DO NOTHING",
            (projection, self.application_name),
        )

    def reset(self, cursor: Any, projection: str) -> None:
        """Back to position 0 (a rebuild, in the transaction that drops the view)."""
        self.database.execute(cursor, "DELETE FROM {view_tracking} WHERE projection = ?",
                              (projection,))
        self.ensure(cursor, projection)

    def lock(self, cursor: Any, projections: Sequence[str]) -> dict[str, int]:
        """The position of each of `projections`, held until the transaction ends: locked
        in one statement, in the order of their names (two lockers never wait on each
        other's rows crosswise)."""
        suffix = " ORDER BY projection" + (
            " FOR UPDATE" if self.database.dialect == "postgres" else "")
        select = ("SELECT projection, notification_id FROM {view_tracking} WHERE projection"
                  " IN (" + ", ".join("?" * len(projections)) + ")" + suffix)
        rows = self.database.execute(cursor, select, tuple(projections)).fetchall()
        if len(rows) < len(set(projections)):
            for projection in projections:
                self.ensure(cursor, projection)
            rows = self.database.execute(cursor, select, tuple(projections)).fetchall()
        return {row["projection"]: int(row["notification_id"]) for row in rows}

    def advance(self, cursor: Any, notification_id: int,
                event_at: Mapping[str, datetime | None], applied_at: datetime) -> None:
        """Move each projection of `event_at` (with the time of the last event it applied,
        None for none) to `notification_id`, in one statement; refuse, for all of them, if
        one would stand still or go back."""
        projections = list(event_at)
        cases = " ".join("WHEN ? THEN ?" for _ in projections)
        moved = self.database.execute(
            cursor,
            "UPDATE {view_tracking} SET notification_id = ?,"
            " event_at = COALESCE(CASE projection " + cases + " END, event_at),"
            " applied_at = ? WHERE projection IN (" + ", ".join("?" * len(projections)) + ")"
            " AND notification_id < ? RETURNING projection",
            (notification_id,
             *(value for projection, at in event_at.items()
               for value in (projection, at.isoformat() if at else None)),
             applied_at.isoformat(), *projections, notification_id),
        ).fetchall()
        if len(moved) < len(projections):
            behind = sorted(set(projections) - {row["projection"] for row in moved})
            raise IntegrityError(
                f"{', '.join(behind)} already at or past notification {notification_id}")

    def position(self, projection: str) -> Position:
        row = self.database.read_one(
            "SELECT notification_id, event_at, applied_at FROM {view_tracking}"
            " WHERE projection = ?", (projection,))
        if row is None:
            return Position(projection, 0, None, None)
        return Position(projection, int(row["notification_id"]), _time(row["event_at"]),
                        _time(row["applied_at"]))

    def notification_ids(self, projections: Sequence[str]) -> dict[str, int]:
        """The notification id of each of `projections` (0 for one without a row), read in
        one statement."""
        rows = self.database.read_all(
            "SELECT projection, notification_id FROM {view_tracking} WHERE projection IN ("
            + ", ".join("?" * len(projections)) + ")", tuple(projections))
        found = {row["projection"]: int(row["notification_id"]) for row in rows}
        return {projection: found.get(projection, 0) for projection in projections}

    # --- eventsourcing's TrackingRecorder: `application_name` names the projection ---------

    def insert_tracking(self, tracking: Tracking) -> None:
        with self.database.transaction(write=True) as cursor:
            self.ensure(cursor, tracking.application_name)
            self.advance(cursor, tracking.notification_id, {tracking.application_name: None},
                         datetime.now().astimezone())

    def max_tracking_id(self, application_name: str) -> int | None:
        return self.position(application_name).notification_id or None


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
