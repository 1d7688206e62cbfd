"""Reads from the projections, for the pages and anyone else: public (`/me` reads the token).

    GET /me                                   who the caller's token says they are
    GET /tables                               every table: name, variant, phase, coups, seated
    GET /tables/{table}/rotation              the bank, who holds the shoe, the order it passes in
    GET /tables/{table}/recall?last=N         the last N coups: cards, outcomes, points, payouts
    GET /tables/{table}/roads                 the scoreboards: bead road, big road, derived roads

Each read serves its view's tables as they are, kept caught up by the views' runner
(`projections.follower`, in `sabot worker`), with the position they are at in the
`X-View-Position` header; `?at=N` (a command's `position`) waits, bounded, for the view to
reach N (`api.view_reader`: 503 with `Retry-After` if it does not in time). A view stopped by
an event it cannot apply answers from where it stopped; `/ready` names it. A recalled coup
is closed, so all its cards were turned over at the settlement; the recorded steps (command
ids) are left out. An unknown table is 404. A tournament's standings are the tournaments resource's
(`api.routes_tournaments`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import msgspec
from litestar import Request, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from api.openapi import problems
from api.problems import ApiProblem
from api.routes_tables import TableRef, blocking, grant_of
from api.view_reader import At, ViewReader, read
from infra.services.references import table_id_of
from infra.services.tables import TableService
from infra.store.database import Database
from projections.recall import (
    KEEP,
    CardLine,
    CorrectionLine,
    CoupRecall,
    PayoutLine,
    StakeLine,
    recall,
)
from projections.roads import Roads, roads
from projections.rotation import Rotation, rotation, rotations

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
    corrections: list[CorrectionLine]  # chips moved later to correct it (approved disputes)

    @classmethod
    def of(cls, coup: CoupRecall) -> RecalledCoup:
        return cls(coup=coup.coup, taille=coup.taille, banker=coup.banker,
                   bank_before=coup.bank_before, bank_after=coup.bank_after,
                   stakes=coup.stakes, cards=coup.cards, outcomes=coup.outcomes,
                   points=coup.points, payouts=coup.payouts, commission=coup.commission,
                   corrections=coup.corrections)


def _reader(request: Request[Any, Any, State]) -> ViewReader:
    reader: ViewReader = request.app.state.views
    return reader


async def _table_doc(request: Request[Any, Any, State], view: str,
                     query: Callable[[Database, uuid.UUID], T | None], table: str,
                     at: int) -> T:
    """A view's document of one table, as it is; 404 for no such table. A table the view
    has not reached yet (just opened) is read once the view is at its last event."""
    table_id = table_id_of(table)
    found: T | None = await read(request, view, lambda db: query(db, table_id), at)
    if found is None:
        service: TableService = request.app.state.service
        recorded = await blocking(service.recorded_at, table_id)  # 404 for no such table
        if recorded is not None and recorded > at:
            found = await read(request, view, lambda db: query(db, table_id), recorded)
    if found is None:
        raise ApiProblem(404, f"no table {table!r}", rule="unknown-table")
    return found


class Caller(msgspec.Struct, frozen=True):
    """Who a token speaks for: its role, the player (role `player`), the tables it serves."""

    role: str
    player: str | None
    tables: list[str]


@get("/me", summary="Who the caller is", tags=["views"], responses=problems(401))
async def who_am_i(request: Request[Any, Any, State]) -> Caller:
    grant = await grant_of(request)
    return Caller(grant.role.value, grant.player, sorted(str(t) for t in grant.tables))


class TableSummary(msgspec.Struct, frozen=True, kw_only=True):
    """A table in the lobby's list."""

    table_id: str
    name: str
    variant: str
    phase: str
    coups: int
    banker: str | None
    seated: list[str]


@get("/tables", summary="Every table, by name", tags=["views"], responses=problems(422, 503))
async def list_tables(request: Request[Any, Any, State], at: At = 0) -> list[TableSummary]:
    found = await read(request, "rotation", rotations, at)
    return [TableSummary(table_id=r.table_id, name=r.table, variant=r.variant, phase=r.phase,
                         coups=r.coups, banker=r.banker, seated=r.seated) for r in found]


@get("/tables/{table:str}/rotation", summary="A table's bank and rotation",
     tags=["views"], responses=problems(400, 404, 422, 503))
async def table_rotation(request: Request[Any, Any, State], table: TableRef,
                         at: At = 0) -> Rotation:
    return await _table_doc(request, "rotation", rotation, table, at)


@get("/tables/{table:str}/recall", summary="A table's last coups", tags=["views"],
     responses=problems(400, 404, 422, 503))
async def table_recall(request: Request[Any, Any, State], table: TableRef,
                       last: Last = 5, at: At = 0) -> list[RecalledCoup]:
    service: TableService = request.app.state.service
    table_id = table_id_of(table)
    coups = await read(request, "recall", lambda db: recall(db, table_id, last), at)
    if not coups:  # a table with coups recalled is a table: only none asks the store
        await blocking(service.table, table_id)  # 404 if there is no such table
    return [RecalledCoup.of(coup) for coup in coups]


@get("/tables/{table:str}/roads", summary="A table's scoreboards (roads) for its taille",
     tags=["views"], responses=problems(404, 422, 503))
async def table_roads(request: Request[Any, Any, State], table: TableRef,
                      at: At = 0) -> Roads:
    return await _table_doc(request, "roads", roads, table, at)
