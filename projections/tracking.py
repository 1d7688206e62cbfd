"""Where each projection stands: one `view_tracking` row per projection, moved in its view's
transaction.

`ViewTracking` is an eventsourcing `TrackingRecorder` over Sabot's `Database` (SQLite or
PostgreSQL, same statements). A row holds the last notification id the projection has taken
into account, the timestamp of the last event it applied, and when it applied it. The row is
moved by `advance(cursor, ...)` inside the transaction that writes the view's rows, so the rows
and the position commit or roll back together:

* `lock(cursor)` reads the position at the start of that transaction and holds it (SQLite
  `BEGIN IMMEDIATE` already serialises writers; PostgreSQL `SELECT ... FOR UPDATE`), so two
  runners of one projection take turns instead of applying the same events twice;
* `advance` only moves forward: a position that is not past the current one raises
  eventsourcing's `IntegrityError`, and the whole transaction rolls back.
"""

from __future__ import annotations

from collections.abc import Sequence
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

    def lock(self, cursor: Any, projection: str) -> int:
        """The position of `projection`, held until the transaction ends."""
        suffix = " FOR UPDATE" if self.database.dialect == "postgres" else ""
        select = "SELECT notification_id FROM {view_tracking} WHERE projection = ?" + suffix
        row = self.database.execute(cursor, select, (projection,)).fetchone()
        if row is None:
            self.ensure(cursor, projection)
            row = self.database.execute(cursor, select, (projection,)).fetchone()
        return int(row["notification_id"])

    def advance(self, cursor: Any, projection: str, notification_id: int,
                event_at: datetime | None, applied_at: datetime) -> None:
        """Move `projection` to `notification_id`; refuse to stand still or go back."""
        row = self.database.execute(
            cursor,
            "UPDATE {view_tracking} SET notification_id = ?,"
            " event_at = COALESCE(?, event_at), applied_at = ?"
            " WHERE projection = ? AND notification_id < ? RETURNING notification_id",
            (notification_id, event_at.isoformat() if event_at else None,
             applied_at.isoformat(), projection, notification_id),
        ).fetchone()
        if row is None:
            raise IntegrityError(
                f"{projection} is already at or past notification {notification_id}"
            )

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
            self.advance(cursor, tracking.application_name, tracking.notification_id, None,
                         datetime.now().astimezone())

    def max_tracking_id(self, application_name: str) -> int | None:
        return self.position(application_name).notification_id or None


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None
