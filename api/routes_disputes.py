"""Disputes over HTTP, their two-signature corrections, and coup dossiers.

    POST /disputes                       open a dispute on a coup: table, coup, reason; the
                                         coup is replayed at once and the verdict recorded
    GET  /disputes                       the disputes the caller may see, first opened first
    GET  /disputes/{id}                  one: status, the verdict naming each discrepancy,
                                         the correction it proposes, its approvals
    POST /disputes/{id}/approvals        approve the proposed correction; the second approval
                                         (the organiser's, and an auditor's or a floor
                                         manager's) applies it
    GET  /tables/{t}/coups/{n}/dossier   the coup's dossier (`infra.audit.dossier`), for
                                         the offline checker, `sabot-check.pyz`

| role          | opens a dispute on  | sees disputes of  | approves | dossiers               |
|---------------|---------------------|-------------------|----------|------------------------|
| organiser     | any coup            | every table       | yes      | any coup               |
| floor-manager | any coup            | every table       | yes      | any coup               |
| auditor       | none (reads)        | every table       | yes      | any coup               |
| croupier      | coups of its tables | its tables        | no       | its tables' (1)        |
| player        | coups they played   | coups they played | no       | coups they played (1)  |
| anonymous     | none (401)          | none (401)        | no (401) | none (401)             |

(1) once the coup's taille is over and its seed revealed.

"Played" a coup: staked or called banco in it, held the bank or a hand, was paid in it, or
took one of its decisions. Before its taille's seed is revealed a dossier could show a burned
card, so only the roles that see every card get it then. An `Idempotency-Key` header on
opening is the command id (scoped to the caller); an approval is once per role.
"""

from __future__ import annotations

import threading
import uuid
from typing import Annotated, Any

import msgspec
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.exceptions import ValidationException
from litestar.params import JSONBody, PathParameter

from api import auth
from api.auth import FULL_VIEW
from api.openapi import BEARER, problems
from api.problems import ApiProblem
from api.routes_tables import IdempotencyKey, TableRef, blocking, grant_of
from api.routes_tournaments import _invalid_body, command_id_of
from api.tokens import Grant, Role
from domain.dispute.aggregate import Approval, Dispute
from domain.dispute.verdicts import Verdict
from infra.audit.dossier import dossier
from infra.services.disputes import DisputeService
from infra.services.references import table_id_of
from infra.services.tables import TableService
from infra.store.routing import holding

MAX_COUP = 10**9
OPENERS = frozenset({Role.ORGANISER, Role.FLOOR_MANAGER})
SEE_ALL = FULL_VIEW | {Role.FLOOR_MANAGER}
APPROVER = {Role.ORGANISER: "organiser", Role.AUDITOR: "auditor",
            Role.FLOOR_MANAGER: "floor-manager"}

DisputeRef = Annotated[uuid.UUID, PathParameter(description="the dispute's id")]
CoupNumber = Annotated[int, PathParameter(description="the coup's number at the table", ge=1,
                                          le=MAX_COUP)]


class OpenDispute(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The coup contested: its table (name or UUID), its number, and why."""

    table: str
    coup: Annotated[int, msgspec.Meta(ge=1, le=MAX_COUP)]
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=2000)]


class DiscrepancyView(msgspec.Struct, frozen=True, kw_only=True):
    what: str
    where: str
    expected: str
    recorded: str
    description: str


class CorrectionView(msgspec.Struct, frozen=True, kw_only=True):
    """Each player's chips delta; applied once `approved`."""

    chips: dict[str, int]
    approvals: list[Approval]
    approved: bool
    applied: bool


class DisputeView(msgspec.Struct, frozen=True, kw_only=True):
    id: uuid.UUID
    table_id: uuid.UUID
    table: str
    coup: int
    reason: str
    by: str
    status: str
    verdict: str
    discrepancies: list[DiscrepancyView]
    notes: list[str]
    correction: CorrectionView | None


def view_of(dispute: Dispute, table: str) -> DisputeView:
    correction = None
    if dispute.corrections:
        correction = CorrectionView(chips=dict(dispute.corrections),
                                    approvals=list(dispute.approvals),
                                    approved=dispute.approved, applied=dispute.applied)
    status = ("replaying" if dispute.verdict is Verdict.OPEN else "corrected" if dispute.applied
              else "awaiting approvals" if dispute.corrections else "decided")
    return DisputeView(
        id=dispute.id, table_id=dispute.table_id, table=table, coup=dispute.coup,
        reason=dispute.reason, by=dispute.by, status=status, verdict=str(dispute.verdict),
        discrepancies=[DiscrepancyView(what=d.what, where=d.where, expected=d.expected,
                                       recorded=d.recorded, description=d.describe())
                       for d in dispute.discrepancies],
        notes=list(dispute.notes), correction=correction)


def played(tables: TableService, table_id: uuid.UUID, coup: int, player: str) -> bool:
    """Whether `player` took part in coup `coup` of the table."""
    for e in tables.events_of(table_id):
        if getattr(e, "coup", None) != coup:
            continue
        payout = getattr(e, "payout", None)
        if player in (getattr(e, "player", None), getattr(e, "banker", None), e.actor,
                      payout.player if payout is not None else None):
            return True
    return False


def may_see(tables: TableService, grant: Grant, table_id: uuid.UUID, coup: int) -> bool:
    """Whether `grant` sees the disputes and the dossier of this coup."""
    if grant.role in SEE_ALL:
        return True
    if grant.role is Role.CROUPIER:
        return table_id in grant.tables
    return grant.player is not None and played(tables, table_id, coup, grant.player)


def opened_by(grant: Grant, dispute: Dispute) -> bool:
    """A player sees the disputes they opened."""
    return grant.role is Role.PLAYER and dispute.by == grant.player


def require_caller(grant: Grant) -> None:
    if grant.role is Role.ANONYMOUS:
        auth.require_writer(grant)  # 401 with the challenge


class Disputes:
    """The dispute service on the API's store, opened at the first dispute request (its own
    connection pool: no connections for an API nobody disputes on)."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self._service: DisputeService | None = None
        self._lock = threading.Lock()

    def service(self) -> DisputeService:
        with self._lock:
            if self._service is None:
                self._service = DisputeService(url=self.database_url)
            return self._service

    def close(self) -> None:
        with self._lock:
            if self._service is not None:
                self._service.close()
                self._service = None


def disputes_of(request: Request[Any, Any, State]) -> DisputeService:
    disputes: Disputes = request.app.state.disputes
    return disputes.service()


class DisputesController(Controller):
    path = "/disputes"
    tags = ["disputes"]  # noqa: RUF012 (litestar's own attribute)
    exception_handlers = {ValidationException: _invalid_body}  # noqa: RUF012

    @post("/", status_code=201, summary="Contest a coup; it is replayed at once",
          security=BEARER, responses=problems(400, 401, 403, 404, 422))
    async def open(self, request: Request[Any, Any, State], data: JSONBody[OpenDispute],
                   idempotency_key: IdempotencyKey) -> DisputeView:
        grant = await grant_of(request)
        require_caller(grant)
        tables: TableService = request.app.state.service
        disputes = await blocking(disputes_of, request)
        table_id = table_id_of(data.table)
        command_id = command_id_of(grant, idempotency_key, "dispute")

        def open_and_replay() -> DisputeView:
            name = tables.table(table_id).name  # 404 for an unknown table
            if grant.role is Role.AUDITOR:
                raise ApiProblem(403, "an auditor reads and approves; disputes are opened by "
                                 "players, croupiers and officials", rule="read-only")
            if grant.role not in OPENERS and not may_see(tables, grant, table_id, data.coup):
                raise ApiProblem(403, f"{auth.actor_of(grant)} may not contest coup "
                                 f"{data.coup} of {name}: "
                                 + ("not your table" if grant.role is Role.CROUPIER
                                    else "you did not play it"),
                                 rule="not-your-coup", field="coup")
            dispute_id = disputes.open(table_id, data.coup, reason=data.reason,
                                       by=auth.actor_of(grant), command_id=command_id)
            return view_of(disputes.replay(dispute_id), name)

        return await blocking(open_and_replay)

    @get("/", summary="The disputes the caller may see", security=BEARER,
         responses=problems(401))
    async def list_disputes(self, request: Request[Any, Any, State]) -> list[DisputeView]:
        grant = await grant_of(request)
        require_caller(grant)
        tables: TableService = request.app.state.service
        disputes = await blocking(disputes_of, request)

        def visible() -> list[DisputeView]:
            shown = []
            for dispute_id in disputes.ids():
                dispute = disputes.dispute(dispute_id)
                if opened_by(grant, dispute) or may_see(tables, grant, dispute.table_id,
                                                        dispute.coup):
                    shown.append(view_of(dispute, tables.table(dispute.table_id).name))
            return shown

        return await blocking(visible)

    @get("/{dispute:uuid}", summary="A dispute, its verdict and its correction",
         security=BEARER, responses=problems(401, 403, 404))
    async def show(self, request: Request[Any, Any, State],
                   dispute: DisputeRef) -> DisputeView:
        grant = await grant_of(request)
        require_caller(grant)
        tables: TableService = request.app.state.service
        disputes = await blocking(disputes_of, request)

        def one() -> DisputeView:
            found = disputes.dispute(dispute)
            if not opened_by(grant, found) and not may_see(tables, grant, found.table_id,
                                                           found.coup):
                raise ApiProblem(403, "this dispute is about a coup you neither played nor "
                                 "serve", rule="not-your-dispute")
            return view_of(found, tables.table(found.table_id).name)

        return await blocking(one)

    @post("/{dispute:uuid}/approvals", status_code=201,
          summary="Approve the correction (organiser, auditor, floor manager)",
          security=BEARER, responses=problems(401, 403, 404, 409))
    async def approve(self, request: Request[Any, Any, State],
                      dispute: DisputeRef) -> DisputeView:
        """The organiser and an auditor or a floor manager approve; the second approval
        applies the correction as compensating chips events naming the coup and the
        dispute."""
        grant = await grant_of(request)
        require_caller(grant)
        role = APPROVER.get(grant.role)
        if role is None:
            raise ApiProblem(403, "corrections are approved by the organiser and an auditor "
                             "or a floor manager", rule="not-an-approver")
        tables: TableService = request.app.state.service
        disputes = await blocking(disputes_of, request)

        def approve_and_apply() -> DisputeView:
            disputes.approve(dispute, role=role, by=auth.actor_of(grant),
                             command_id=f"approve/{dispute}/{role}")
            applied = disputes.apply_correction(dispute, tables)
            return view_of(applied, tables.table(applied.table_id).name)

        return await blocking(approve_and_apply)


@get("/tables/{table:str}/coups/{coup:int}/dossier", tags=["audit"],
     summary="A coup's dossier, checkable offline", security=BEARER,
     responses=problems(401, 403, 404, 409))
async def coup_dossier(request: Request[Any, Any, State], table: TableRef,
                       coup: CoupNumber) -> dict[str, Any]:
    """One JSON file: the coup's events with their inclusion proofs in a signed checkpoint,
    the shoe's commitment, contributions and revealed seed, and the public key. Check it
    with the offline checker, `sabot-check.pyz` (docs/audit.md, "Coup dossiers")."""
    grant = await grant_of(request)
    require_caller(grant)
    tables: TableService = request.app.state.service
    table_id = table_id_of(table)

    def build() -> dict[str, Any]:
        document = dossier(holding(tables, table_id), table_id, coup)
        if not may_see(tables, grant, table_id, coup):
            raise ApiProblem(403, f"coup {coup} of {document['table']['name']} is not one you "
                             "played or serve", rule="not-your-coup")
        if grant.role not in SEE_ALL and document["shoe"]["seed"] is None:
            raise ApiProblem(409, "the dossier is yours once the taille is over and its seed "
                             "revealed", rule="seed-not-revealed")
        return document

    return await blocking(build)
