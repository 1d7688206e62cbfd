"""A tournament's disputes and the publishing of its results (`infra.services.results`) over HTTP.

    GET  /tournaments/{t}/disputes           the disputes of its tables' coups   (organiser)
    POST /tournaments/{t}/results/publish    declare the results final           (organiser)

Publishing is refused with a 409 problem: `not-finished`, `results-published` (once only),
`disputes-open` (a dispute still replaying, or a correction awaiting its approvals).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get, post
from litestar.datastructures import State

from api import auth
from api.openapi import BEARER, problems
from api.routes_disputes import DisputeView, disputes_of, view_of
from api.routes_tables import IdempotencyKey, blocking, grant_of
from api.routes_tournaments import TournamentRef, _service, command_id_of, organiser
from infra.services.results import publish_results, tournament_disputes
from infra.services.tournament_view import Results
from infra.services.tournaments import tournament_id_of


@get("/tournaments/{tournament:str}/disputes", tags=["tournaments"],
     summary="The disputes of coups at the tournament's tables (organiser)", security=BEARER,
     responses=problems(401, 403, 404))
async def tournament_disputes_list(request: Request[Any, Any, State],
                                   tournament: TournamentRef) -> list[DisputeView]:
    organiser(await grant_of(request))
    tournaments = _service(request)
    disputes = await blocking(disputes_of, request)
    tournament_id = tournament_id_of(tournament)
    return await blocking(lambda: [view_of(dispute, table) for dispute, table in
                                   tournament_disputes(disputes, tournaments, tournament_id)])


@post("/tournaments/{tournament:str}/results/publish", status_code=200, tags=["tournaments"],
      summary="Publish the finished tournament's results (organiser)", security=BEARER,
      responses=problems(401, 403, 404, 409))
async def publish_tournament_results(request: Request[Any, Any, State],
                                     tournament: TournamentRef,
                                     idempotency_key: IdempotencyKey) -> Results:
    grant = await grant_of(request)
    organiser(grant)
    command_id = command_id_of(grant, idempotency_key, "publish")
    tournaments = _service(request)
    disputes = await blocking(disputes_of, request)
    tournament_id = tournament_id_of(tournament)

    def publish() -> Results:
        publish_results(tournaments, disputes, tournament_id, actor=auth.actor_of(grant),
                        command_id=command_id)
        return tournaments.results(tournament_id)

    return await blocking(publish)
