"""A view: an eventsourcing `Projection` whose rows live in `view_*` tables of the event store's
own database, next to its tracking row.

A view declares its `name`, the event `topics` it reads, its tables (`schema`: CREATE
statements in `Database.sql` templates, where `BLOB` means `BYTEA` on PostgreSQL) and
`apply(cursor, events)`, which changes its rows for a batch of events inside the caller's
transaction, and raises `ProjectionFailed`, naming the event, when one cannot be applied.
Everything else (reading the log, moving the tracking row in the same transaction,
rebuilding) is the runner's (`projections.runner`). `process_event` is eventsourcing's
one-event entry point: the event and its tracking row in one transaction.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar

from eventsourcing.domain import Aggregate
from eventsourcing.persistence import IntegrityError, Mapper, Tracking
from eventsourcing.projection import Projection

from projections.tracking import ViewTracking

Event = Aggregate.Event
"""What views read: aggregate events (each with its id, version and timestamp)."""


class ProjectionFailed(Exception):
    """A view could not apply an event (its batch was rolled back; the view stays where the
    last committed batch left it, and the same event fails again until the cause is fixed)."""


class View(Projection[ViewTracking]):
    name: str = "view"
    topics: tuple[str, ...] = ()
    schema: ClassVar[tuple[str, ...]] = ()
    tables: ClassVar[tuple[str, ...]] = ()

    def __init__(self, view: ViewTracking, mapper: Mapper[Any]) -> None:
        super().__init__(view)
        self.database = view.database
        self.mapper = mapper

    @abstractmethod
    def apply(self, cursor: Any, events: Sequence[Event]) -> None:
        """Change this view's rows for `events` (in notification order), in `cursor`'s
        transaction; raising rolls the whole batch back."""

    def ddl(self) -> list[str]:
        """The CREATE statements of this view's tables."""
        return list(self.schema)

    def table_names(self) -> list[str]:
        return list(self.tables)

    def create_tables(self, cursor: Any) -> None:
        for statement in self.ddl():
            if self.database.dialect == "postgres":
                statement = statement.replace(" BLOB", " BYTEA")
            self.database.execute(cursor, statement)

    def drop_tables(self, cursor: Any) -> None:
        for table in self.table_names():
            self.database.execute(cursor, "DROP TABLE IF EXISTS {" + table + "}")

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """One event and its tracking row in one transaction (eventsourcing's runner API)."""
        with self.database.transaction(write=True) as cursor:
            if self.view.lock(cursor, [self.name])[self.name] >= tracking.notification_id:
                raise IntegrityError(f"{self.name} already applied {tracking.notification_id}")
            self.apply(cursor, [domain_event])
            self.view.advance(cursor, tracking.notification_id,
                              {self.name: domain_event.timestamp}, datetime.now().astimezone())
