"""The app's reader of the projections: the views' tables served as they are, with their position.

A read does not run the views (a `projections.follower.Follower` does, in `sabot worker` or
`sabot projections run --follow`): it reads the view's position (its tracking row in the main
database's log) and then the view's rows, and answers with both; the position goes out as
the `X-View-Position` header (`position_header`, the app's `before_send` hook). A read that
must see a write passes the position the write's answer gave (`?at=N`): it waits for the view
to reach it, woken when the views' runner publishes a position (`infra.store.notices.VIEWS`,
through LISTEN/NOTIFY from another process) and looking every `LOOK` seconds as the
fallback, at most `WAIT` seconds, then answers 503 with
`Retry-After` (`behind`); a position past the store's head names no write (422). No lock is
taken: concurrent reads run side by side.

Its own module, below the routes and the metrics that both use it: `api.metrics` gauges the
runner's lag, `api.routes_views`, `api.routes_health` and `api.routes_tournaments` read through
it, and the tables' routes (which count commands in `api.metrics`) are imported by the views'.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from anyio import to_thread
from litestar import Request
from litestar.datastructures import State
from litestar.params import QueryParameter
from litestar.types import Message, Scope

from api.problems import ApiProblem
from infra.services.tables import TableService
from infra.store import notices
from infra.store.database import Database
from infra.store.notices import Positions
from projections.registry import VIEWS
from projections.runner import Runner

T = TypeVar("T")

WAIT = 2.0  # seconds a read with `?at=` waits for its view to reach that position
LOOK = 0.1  # seconds between two looks at the view's position when no notice came
RETRY_AFTER = "1"
HEADER = b"x-view-position"
STATE_KEY = "view_position"

At = Annotated[int, QueryParameter(
    ge=0, description="a position (a command's `position`) the view must be at or past: the "
    "read waits for it, at most 2 s, then answers 503 with Retry-After (0: none)")]


@dataclass(frozen=True)
class Served(Generic[T]):
    """A view's answer and the position (notification id) its rows were at."""

    value: T
    position: int


class ViewReader:
    """The projections of the app's store, read as they are (the runner, made at the first
    call, creates their tables and answers `/ready` and the metrics)."""

    def __init__(self, service: TableService, *, wait: float = WAIT) -> None:
        self.service = service
        self.wait = wait
        self._runner: Runner | None = None
        self._making = threading.Lock()  # taken once, to make the runner, never by a read
        self._published: Positions | None = None
        self.waits: Counter[str] = Counter()
        """The looks of reads waiting for a position, by what ended them: a `notice` of the
        views' runner (this process's or, on PostgreSQL, any), or the `look` timed out."""

    def read(self, view: str, query: Callable[[Database], T], at: int | None = None
             ) -> Served[T]:
        """`query` on `view` as it is, and the position it is at (read before the rows, so
        the rows are at least there); with `at`, once the view is at or past it, else
        the 503 of `behind` after `wait` seconds (422 for a position past the head)."""
        tracking = self.runner().tracking
        position = tracking.position(view).notification_id
        if at is not None and position < at:
            if at > self.runner().head():
                raise ApiProblem(422, f"no position {at} in the store yet (a command's answer "
                                 "gives one)", rule="unknown-position", field="at")
            published = self.published()
            deadline = time.monotonic() + self.wait
            while position < at:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise behind(view, position, at)
                woken = published.wait(at, min(LOOK, left))
                self.waits["notice" if woken else "look"] += 1
                position = tracking.position(view).notification_id
        return Served(query(self.service.database), position)

    def published(self) -> Positions:
        """The views' positions as their runner publishes them (`infra.store.notices.VIEWS`),
        heard from every process once a read first waits, until `close`."""
        with self._making:
            if self._published is None:
                self._published = notices.positions(self.service.database, notices.VIEWS)
                self._published.listen()
            return self._published

    def close(self) -> None:
        with self._making:
            if self._published is not None:
                self._published.unlisten()
                self._published = None

    def runner(self) -> Runner:
        runner = self._runner
        if runner is None:
            with self._making:
                if self._runner is None:
                    self._runner = Runner(self.service, VIEWS)
                runner = self._runner
        return runner


def behind(view: str, position: int, at: int) -> ApiProblem:
    """The 503 of a read whose view did not reach `at` in time (the views' runner is behind
    or stopped): try again after `Retry-After`."""
    return ApiProblem(503, f"the {view} view is at position {position}, not yet at {at}; "
                      "try again shortly", rule="view-behind",
                      headers={"Retry-After": RETRY_AFTER,
                               HEADER.decode(): str(position)})


async def read(request: Request[Any, Any, State], view: str, query: Callable[[Database], T],
               at: int) -> T:
    """`query` on `view` as it is (at `at` or past it, if given), in a worker thread; its
    position kept for the answer's `X-View-Position` header (`position_header`)."""
    reader: ViewReader = request.app.state.views
    answer = await to_thread.run_sync(reader.read, view, query, at)
    request.scope["state"][STATE_KEY] = answer.position
    return answer.value


async def position_header(message: Message, scope: Scope) -> None:
    """The `before_send` hook: a view's answer carries the position it was read at."""
    if message["type"] != "http.response.start":
        return
    position = scope.get("state", {}).get(STATE_KEY)
    if position is not None:
        message["headers"] = [*message.get("headers", ()), (HEADER, str(position).encode())]
