"""The projections as the audit uses them (`infra.audit.ports`): the audit sits below the
projections and does not import them, so its callers (`sabot audit verify`, `sabot audit
export`, the tests) hand it `PROJECTIONS`.

It rebuilds the views of `projections.registry.VIEWS` with the same `projections.runner.Runner`
and tracking rows (`tracked`) the projections run with, for `ViewsMatchEvents` to compare with
the stored ones, and recalls a table's coups with `projections.recall.recall_of` for the
regulator export.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any
from uuid import UUID

from infra.audit.ports import EventSource
from projections.recall import CoupRecall, recall_of
from projections.registry import NAMES, VIEWS
from projections.runner import Runner, tracked


class AuditPort:
    """`infra.audit.ports.ViewRebuild` and `infra.audit.ports.CoupRecall`, from the
    projections' registry, runner and recall."""

    names: Sequence[str] = NAMES

    def __init__(self) -> None:
        self._views = {cls.name: cls for cls in VIEWS}

    def tables(self, view: str) -> Sequence[str]:
        return self._views[view].tables

    def tracked(self, view: str, home: str) -> str:
        return tracked(view, home)

    def rebuilder(self, source: EventSource, views: Sequence[str]) -> Runner:
        return Runner(source, [self._views[name] for name in views])

    def recall(self, table_id: UUID, events: Iterable[Any]) -> list[CoupRecall]:
        return recall_of(table_id, events)


PROJECTIONS = AuditPort()
