"""The app's reader of the projections: one runner over the store, views brought to the head.

Its own module, below the routes and the metrics that both use it: `api.metrics` gauges the
runner's lag, `api.routes_views`, `api.routes_health` and `api.routes_tournaments` read through
it, and the tables' routes (which count commands in `api.metrics`) are imported by the views'.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from typing import TypeVar

from infra.services.tables import TableService
from infra.store.database import Database
from projections.registry import VIEWS
from projections.runner import Runner
from projections.view import ProjectionFailed

T = TypeVar("T")


class ViewReader:
    """The projections of the app's store: one runner (made at the first read), its catch-ups
    one at a time in this process."""

    def __init__(self, service: TableService) -> None:
        self.service = service
        self._runner: Runner | None = None
        self._lock = threading.RLock()

    def read(self, view: str, query: Callable[[Database], T]) -> T:
        """`query` on `view` brought to the head; a view stopped by an event it cannot apply
        answers from where it stopped (the failure is in `/ready`, the logs and the status)."""
        with self._lock, suppress(ProjectionFailed):
            self.runner().catch_up(view)
        return query(self.service.database)

    def runner(self) -> Runner:
        with self._lock:
            if self._runner is None:
                self._runner = Runner(self.service, VIEWS)
            return self._runner
