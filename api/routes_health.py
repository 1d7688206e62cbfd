"""Liveness and readiness: `/health` answers while the process runs, `/ready` while the store does.

A load balancer sends traffic only to a ready instance and restarts one that is not alive;
readiness reads the store and pings a Redis broker, so a lost database or broker makes it
503. What does not stop this instance from serving is reported in the answer, with status
`degraded` and HTTP 200: a projection stopped by an event it cannot apply (its views answer
from where it stopped), no worker alive (`workers.heartbeat`: what waits for one is named), or
a store whose checkpoints a writing process cannot write (`unanchored`: this one or any other
that reported it, `infra.store.anchorings`; its writes go on, outside any checkpoint, while the
writer tries again).
"""

from __future__ import annotations

from typing import Any

from anyio import to_thread
from litestar import Request, get
from litestar.datastructures import State

from api.problems import ApiProblem
from api.schemas import Health, Ready, StoppedProjection, Unanchored
from api.view_reader import ViewReader
from infra.errors import ServiceUnavailable
from infra.services.tables import TableService
from infra.store.checkpointer import anchoring
from infra.store.reachability import check_broker
from workers.heartbeat import workers


@get("/health", tags=["health"], summary="Liveness: the process answers")
async def health() -> Health:
    return Health(status="ok")


@get("/ready", tags=["health"], summary="Readiness: the store answers")
async def ready(request: Request[Any, Any, State]) -> Ready:
    service: TableService = request.app.state.service
    views: ViewReader = request.app.state.views
    try:
        stopped = await to_thread.run_sync(_stopped, views)
        alive = await to_thread.run_sync(workers, service.database)
    except Exception as error:
        raise ApiProblem(503, f"the store does not answer: {type(error).__name__}",
                         rule="store-unavailable") from None
    try:
        await to_thread.run_sync(check_broker, request.app.state.broker_url, 1.0)
    except ServiceUnavailable as error:
        raise ApiProblem(503, str(error), rule="broker-unavailable") from None
    unanchored = [Unanchored(a.database, a.failures, a.failing, a.age)
                  for a in await to_thread.run_sync(anchoring, service.database)
                  if a.failing is not None]
    degraded = bool(stopped) or (alive is not None and alive.alive == 0) or bool(unanchored)
    return Ready(status="degraded" if degraded else "ready",
                 database=service.database.dialect, stopped_projections=stopped,
                 workers=alive, unanchored=unanchored)


def _stopped(views: ViewReader) -> list[StoppedProjection]:
    """The projections stopped by an event (reading them is the store's check too)."""
    return [StoppedProjection(f.projection, f.notification_id, f.error)
            for f in views.runner().failures()]
