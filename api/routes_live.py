"""Live updates: `GET /tables/{table}/events` streams a table's events as server-sent events.

Each SSE message is one event as the caller may see it (`api.visibility`): `id:` its
version, `data:` its JSON (with its `type`); messages are unnamed, so a browser's
`EventSource.onmessage` gets them all. The stream starts after `?after=VERSION`, else after
the `Last-Event-ID` a reconnecting browser sends, else after the table's current version
(only what happens next). The streams of a table share one reader in this process
(`api.live_readers`), woken at once by a command sent through this API (`api.live`) and by
the poll every `POLL_SECONDS` for events written by another process without Redis; the poll
also keeps the connection alive (a `keep-alive` comment). The store is the source of every
message: a subscriber never misses an event because a wake-up was coalesced. A stream the
server stops ends with one named message, `event: end`, whose data says why (`behind`: the
client read too slowly; `store-unavailable`; `error`): reconnect after the last id received. Streams
are bounded per client address and in all (`api.live_limits`: 429 or 503 with
`Retry-After`) and counted in `sabot_live_subscribers` (`api.metrics`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
import msgspec
from litestar import Request, get
from litestar.background_tasks import BackgroundTask
from litestar.datastructures import State
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import ServerSentEvent, ServerSentEventMessage

from api import live_readers
from api.live_limits import LiveLimits, Slot
from api.live_readers import End, LiveReaders, Subscription
from api.openapi import BEARER_OR_ANONYMOUS, problems
from api.problems import ApiProblem
from api.routes_tables import TableRef, blocking, grant_of
from infra.services.references import table_id_of
from infra.services.tables import TableService

After = Annotated[int | None, QueryParameter(ge=0, required=False,
                                             description="stream the events after this version")]
LastEventId = Annotated[str, HeaderParameter(
    name="Last-Event-ID", required=False, pattern=r"^[0-9]{0,18}$",
    description="the version of the last event received (a reconnecting browser sends it)")]


async def _stream(subscription: Subscription, after: int,
                  slot: Slot) -> AsyncIterator[ServerSentEventMessage]:
    readers: LiveReaders = subscription.reader.hub
    try:
        events = await subscription.catch_up(after) if after < subscription.start else []
        while True:
            for event in events:
                after = event["originator_version"]
                yield ServerSentEventMessage(data=msgspec.json.encode(event).decode(),
                                             id=str(after))
            with anyio.move_on_after(live_readers.POLL_SECONDS) as waited:
                item = await subscription.queue.get()
            if waited.cancelled_caught:  # no data: a comment, not a message
                events = []
                yield ServerSentEventMessage(data=None, comment="keep-alive")
            elif isinstance(item, End):
                yield ServerSentEventMessage(data=msgspec.json.encode(
                    {"reason": item.reason, "last_event_id": after}).decode(), event="end")
                return
            else:
                events = subscription.visible(item, after)
    finally:
        readers.leave(subscription)
        slot.release()


@get("/tables/{table:str}/events", tags=["live"], summary="A table's events, live (SSE)",
     media_type="text/event-stream", security=BEARER_OR_ANONYMOUS,
     responses=problems(400, 401, 404, 429, 503))
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
    limits: LiveLimits = request.app.state.live_limits
    slot = limits.admit(request.client.host if request.client else "")
    readers: LiveReaders = request.app.state.live_readers
    subscription = readers.join(table_id, grant, start, found.version)
    return ServerSentEvent(_stream(subscription, start, slot),
                           background=BackgroundTask(_leave, readers, subscription, slot))


async def _leave(readers: LiveReaders, subscription: Subscription, slot: Slot) -> None:
    """After the response, in case the stream was never iterated (its client left first)."""
    readers.leave(subscription)
    slot.release()
