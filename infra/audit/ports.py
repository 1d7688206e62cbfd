"""What the audit needs from the projections, handed to it by its caller.

The audit sits below the projections (domain < infra < projections < workers < api) and does
not import them. Two of its parts need them all the same:

* `sabot audit verify` rebuilds every view from the events and compares its tables with the
  stored ones (`infra.audit.checks.ViewsMatchEvents`): it needs the views' names and tables,
  the name of a view's tracking row in a home's log, and a runner over given databases that
  catches a view up to given positions (`ViewRebuild`);
* the regulator export writes each closed coup's game recall (`infra.audit.export`): it needs
  the recall of a table's coups from its events (`CoupRecall`).

`projections.audit_port.PROJECTIONS` is both; `sabot audit verify`, the export and the tests
pass it in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.persistence import Mapper

from infra.store.database import Database


class EventSource(Protocol):
    """The databases a rebuild reads the events from and writes the views to."""

    @property
    def database(self) -> Database: ...

    @property
    def mapper(self) -> Mapper[UUID]: ...

    def home_databases(self) -> dict[str, Database]: ...


class Rebuilder(Protocol):
    """Views being rebuilt over an `EventSource`."""

    def catch_up(self, name: str, *, until: Mapping[str, int]) -> int:
        """Apply the view's events up to `until`'s position in each home's log."""
        ...


class ViewRebuild(Protocol):
    """The views, as `views_match_events` rebuilds them."""

    @property
    def names(self) -> Sequence[str]:
        """Every view's name, in the order they run."""
        ...

    def tables(self, view: str) -> Sequence[str]:
        """The view's tables to compare (not a fold's working copy)."""
        ...

    def tracked(self, view: str, home: str) -> str:
        """The tracking row of the view's position in a home's log (`view_tracking`)."""
        ...

    def rebuilder(self, source: EventSource, views: Sequence[str]) -> Rebuilder:
        """A runner of `views` over `source`, their tables created there."""
        ...


class CoupRecall(Protocol):
    """The game recall, as the export writes it."""

    def recall(self, table_id: UUID, events: Iterable[Any]) -> Sequence[Any]:
        """Every closed coup of a table from its domain events in order: msgspec structs,
        each with its `steps` (each with its `version`)."""
        ...
