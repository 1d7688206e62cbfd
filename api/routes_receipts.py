"""A player's receipts, and the consistency proofs that keep them checkable afterwards.

    GET /me/receipts[?since=T]  the signed-in player's receipts (`infra.audit.receipts`): one a
                                coup they had a part in, closed since T (default: one
                                evening, a sign-in's lifetime), with the installation's keys
    GET /me/receipts/download   the same, as a file to keep (`sabot-receipts-PLAYER-DATE.json`),
                                one an evening; `sabot audit check-receipts FILE` checks it
    GET /audit/consistency?from=SIZE&leaves=I,J
                                public: an RFC 9162 consistency proof from the checkpoint of
                                SIZE events to the latest, and the inclusion proofs of leaves
                                I, J in the latest (`infra.audit.consistency`)

The receipts are the player's own: a player's token or sign-in cookie (401 without one, 403
for another role).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from api import auth
from api.openapi import BEARER, problems
from api.problems import ApiProblem
from api.routes_tables import blocking, grant_of
from api.sign_in import SESSION_LIFETIME
from api.tokens import Role
from infra.audit.consistency import MAX_LEAVES, consistency
from infra.audit.receipts import receipts
from infra.services.tables import TableService

Since = Annotated[datetime | None, QueryParameter(
    description="coups closed since then (ISO 8601; default: one evening, the last 24 hours)")]
From = Annotated[int, QueryParameter(ge=1, name="from",
                                     description="the size of the checkpoint held")]
LEAVES = rf"^(\d{{1,12}}(,\d{{1,12}}){{0,{MAX_LEAVES - 1}}})?$"
Leaves = Annotated[str, QueryParameter(pattern=LEAVES, description="leaf indices to prove in "
                                       f"the latest checkpoint, comma-separated (at most "
                                       f"{MAX_LEAVES})")]


async def _player(request: Request[Any, Any, State]) -> str:
    grant = await grant_of(request)
    if grant.role is Role.ANONYMOUS:
        auth.require_writer(grant)  # 401 with the challenge
    if grant.role is not Role.PLAYER or grant.player is None:
        raise ApiProblem(403, "receipts are a player's own: sign in as the player",
                         rule="not-a-player")
    return grant.player


async def _receipts(request: Request[Any, Any, State], since: datetime | None) -> dict[str, Any]:
    player = await _player(request)
    service: TableService = request.app.state.service
    start = since if since is not None else datetime.now(UTC) - SESSION_LIFETIME
    return await blocking(receipts, service, player,
                          start if start.tzinfo is not None else start.replace(tzinfo=UTC))


@get("/me/receipts", summary="Your receipts, one a coup you played", tags=["audit"],
     security=BEARER, responses=problems(401, 403))
async def my_receipts(request: Request[Any, Any, State], since: Since = None) -> dict[str, Any]:
    """Each coup you had a part in: your events, the shoe's commitment and revealed seed, and
    their inclusion proofs in a checkpoint signed by the operator and co-signed by the
    witnesses (docs/audit.md, "Your receipts")."""
    return await _receipts(request, since)


@get("/me/receipts/download", summary="Your receipts, as a file to keep", tags=["audit"],
     security=BEARER, responses=problems(401, 403))
async def my_receipts_file(request: Request[Any, Any, State],
                           since: Since = None) -> Response[dict[str, Any]]:
    document = await _receipts(request, since)
    day = datetime.now(UTC).date().isoformat()
    name = "".join(c if c.isalnum() or c in "-_" else "_" for c in document["player"])
    return Response(document, headers={
        "Content-Disposition": f'attachment; filename="sabot-receipts-{name}-{day}.json"'})


@get("/audit/consistency", summary="A consistency proof to the latest checkpoint",
     tags=["audit"], responses=problems(400, 404))
async def audit_consistency(request: Request[Any, Any, State], size: From,
                            leaves: Leaves = "") -> dict[str, Any]:
    """The latest checkpoint (its C2SP note co-signed by the witnesses), the RFC 9162 proof
    that its tree extends the tree of `from` events, and the inclusion proof of each of
    `leaves` in it, computed from the store's events as they are now."""
    service: TableService = request.app.state.service
    indices = [int(leaf) for leaf in leaves.split(",") if leaf]
    return await blocking(consistency, service, size, indices)


RECEIPT_ROUTES = [my_receipts, my_receipts_file, audit_consistency]
