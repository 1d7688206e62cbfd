"""Liveness and readiness: `/health` answers while the process runs, `/ready` while the store does.

A load balancer sends traffic only to a ready instance and restarts one that is not alive;
readiness runs one read-only statement on the store, so a lost database makes it 503.
"""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from litestar import Request, get
from litestar.datastructures import State

from api.problems import ApiProblem
from api.schemas import Health, Ready
from infra.service import TableService


@get("/health", tags=["health"], summary="Liveness: the process answers")
async def health() -> Health:
    return Health(status="ok")


@get("/ready", tags=["health"], summary="Readiness: the store answers")
async def ready(request: Request[Any, Any, State]) -> Ready:
    service: TableService = request.app.state.service
    try:
        await to_thread.run_sync(_ping, service)
    except Exception as error:
        raise ApiProblem(503, f"the store does not answer: {type(error).__name__}",
                         rule="store-unavailable") from None
    return Ready(status="ready", database=service.database.dialect)


def _ping(service: TableService) -> None:
    database = service.database
    with database.transaction(write=False) as cursor:
        database.execute(cursor, "SELECT 1").fetchone()
