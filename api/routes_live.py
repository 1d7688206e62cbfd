"""Live updates: `GET /tables/{table}/events` streams a table's events as server-sent events.

Each SSE message is one event as the caller may see it (`api.visibility`): `id:` its
version, `data:` its JSON (with its `type`); messages are unnamed, so a browser's
`EventSource.onmessage` gets them all. The stream starts after `?after=VERSION`, else after
the `Last-Event-ID` a reconnecting browser sends, else after the table's current version
(only what happens next). A command sent through this API wakes the table's subscribers at
once (`api.live`); events written by another process (the CLI, a worker) are picked up by
the poll every `POLL_SECONDS`, which also keeps the connection alive. The store is the
source of every message: a subscriber never misses an event because a wake-up was coalesced.
Open streams are counted in `sabot_live_subscribers` (`api.metrics`).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import msgspec
from litestar import Request, get
from litestar.channels import ChannelsPlugin
from litestar.datastructures import State
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage
from prometheus_client import Gauge

from api.live import channel_of
from api.metrics import Metrics
from api.openapi import BEARER_OR_ANONYMOUS, problems
from api.problems import ApiProblem
from api.routes_tables import TableRef, blocking, grant_of
from api.tokens import Grant
from api.visibility import visible_events
from infra.services.references import table_id_of
from infra.services.tables import TableService, describe

POLL_SECONDS = 5.0

After = Annotated[int | None, QueryParameter(ge=0, required=False,
                                             description="stream the events after this version")]
LastEventId = Annotated[str, HeaderParameter(
    name="Last-Event-ID", required=False, pattern=r"^[0-9]{0,18}$",
    description="the version of the last event received (a reconnecting browser sends it)")]


def _new_events(service: TableService, table_id: uuid.UUID, grant: Grant,
                after: int) -> list[dict[str, Any]]:
    events = [describe(e) for e in service.events_of(table_id, gt=after)]
    return visible_events(service.state(table_id), grant, events) if events else []


async def _stream(service: TableService, channels: ChannelsPlugin, table_id: uuid.UUID,
                  grant: Grant, after: int,
                  subscribers: Gauge) -> AsyncIterator[ServerSentEventMessage]:
    woken = [anyio.Event()]

    async def on_message(_: bytes) -> None:
        woken[0].set()

    async with (channels.start_subscription([channel_of(table_id)]) as subscriber,
                subscriber.run_in_background(on_message)):
        with subscribers.track_inprogress():
            while True:
                woken[0] = anyio.Event()
                for event in await blocking(_new_events, service, table_id, grant, after):
                    after = event["originator_version"]
                    yield ServerSentEventMessage(data=msgspec.json.encode(event).decode(),
                                                 id=str(after))
                with anyio.move_on_after(POLL_SECONDS) as waited:
                    await woken[0].wait()
                if waited.cancelled_caught:  # no data: a comment, not a message
                    yield ServerSentEventMessage(data=None, comment="keep-alive")


@get("/tables/{table:str}/events", tags=["live"], summary="A table's events, live (SSE)",
     media_type="text/event-stream", security=BEARER_OR_ANONYMOUS,
     responses=problems(400, 401, 404))
async def table_events(request: Request[Any, Any, State], table: TableRef,
                       after: After = None,
                       last_event_id: LastEventId = "") -> ServerSentEvent:
    service: TableService = request.app.state.service
    grant = await grant_of(request)
    table_id = table_id_of(table)
    found = await blocking(service.table, table_id)
    if after is None and "after" in request.query_params:  # `?after=` or `?after=null`
        raise ApiProblem(400, "after is an event's version (an integer >= 0)",
                         rule="bad-request", field="after")
    if after is None and last_event_id:
        if not last_event_id.isdigit():
            raise ApiProblem(400, "Last-Event-ID is an event's version", rule="bad-request",
                             field="Last-Event-ID")
        after = int(last_event_id)
    start = found.version if after is None else after
    channels = request.app.plugins.get(ChannelsPlugin)
    metrics: Metrics = request.app.state.metrics
    return ServerSentEvent(_stream(service, channels, table_id, grant, start,
                                   metrics.subscribers))
