"""Reads from the projections, for the live page and anyone else: public, no token needed.

    GET /tables/{table}/rotation              the bank, who holds the shoe, the order it passes in
    GET /tables/{table}/recall?last=N         the last N coups: cards, outcomes, points, payouts

Each read first brings its view to the head of the store (`projections.runner`), so it shows
every event recorded before the request. A recalled coup is closed, so all its cards were
turned over at the settlement; the recorded steps (command ids) are left out. An unknown
table is 404. A tournament's standings are the tournaments resource's
(`api.routes_tournaments`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import msgspec
from litestar import Request, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from api.openapi import problems
from api.problems import ApiProblem
from api.routes_tables import TableRef, blocking
from infra.database import Database
from infra.references import table_id_of
from infra.service import TableService
from projections.recall import KEEP, CardLine, CoupRecall, PayoutLine, StakeLine, recall
from projections.registry import VIEWS
from projections.rotation import Rotation, rotation
from projections.runner import Runner

T = TypeVar("T")

Last = Annotated[int, QueryParameter(ge=1, le=KEEP, description="how many coups")]


class RecalledCoup(msgspec.Struct, kw_only=True):
    """A closed coup as the rail saw it."""

    coup: int
    taille: int
    banker: str | None
    bank_before: int
    bank_after: int
    stakes: list[StakeLine]
    cards: list[CardLine]
    outcomes: dict[str, str]
    points: dict[str, int]
    payouts: list[PayoutLine]
    commission: int

    @classmethod
    def of(cls, coup: CoupRecall) -> RecalledCoup:
        return cls(coup=coup.coup, taille=coup.taille, banker=coup.banker,
                   bank_before=coup.bank_before, bank_after=coup.bank_after,
                   stakes=coup.stakes, cards=coup.cards, outcomes=coup.outcomes,
                   points=coup.points, payouts=coup.payouts, commission=coup.commission)


class ViewReader:
    """The projections of the app's store: one runner (made at the first read), its catch-ups
    one at a time in this process."""

    def __init__(self, service: TableService) -> None:
        self.service = service
        self._runner: Runner | None = None
        self._lock = threading.Lock()

    def read(self, view: str, query: Callable[[Database], T]) -> T:
        with self._lock:
            if self._runner is None:
                self._runner = Runner(self.service, VIEWS)
            self._runner.catch_up(view)
        return query(self.service.database)


def _reader(request: Request[Any, Any, State]) -> ViewReader:
    reader: ViewReader = request.app.state.views
    return reader


@get("/tables/{table:str}/rotation", summary="A table's bank and rotation",
     tags=["views"], responses=problems(404))
async def table_rotation(request: Request[Any, Any, State], table: TableRef) -> Rotation:
    table_id = table_id_of(table)
    found: Rotation | None = await blocking(_reader(request).read, "rotation",
                                            lambda db: rotation(db, table_id))
    if found is None:
        raise ApiProblem(404, f"no table {table!r}", rule="unknown-table")
    return found


@get("/tables/{table:str}/recall", summary="A table's last coups", tags=["views"],
     responses=problems(404))
async def table_recall(request: Request[Any, Any, State], table: TableRef,
                       last: Last = 5) -> list[RecalledCoup]:
    service: TableService = request.app.state.service
    table_id = table_id_of(table)
    await blocking(service.table, table_id)  # 404 if there is no such table
    coups = await blocking(_reader(request).read, "recall",
                           lambda db: recall(db, table_id, last))
    return [RecalledCoup.of(coup) for coup in coups]
