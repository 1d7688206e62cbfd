"""Live updates: `GET /tables/{table}/events` streams a table's events as server-sent events.

Each SSE message is one event as the caller may see it (`api.visibility`): `id:` its
version, `data:` its JSON (with its `type`); messages are unnamed, so a browser's
`EventSource.onmessage` gets them all. The stream starts after `?after=VERSION`, else after
the `Last-Event-ID` a reconnecting browser sends, else after the table's current version
(only what happens next). The streams of a table share one reader in this process
(`api.live_readers`), woken at once by a command sent through this API (`api.live`) and by
the poll every `POLL_SECONDS` for events written by another process without Redis; the poll
also keeps the connection alive (a `keep-alive` comment). The store is the source of every
message: a subscriber never misses an event because a wake-up was coalesced. The messages
are written as `api.live_messages` encodes them, once for every stream that sees them alike;
what waits for a stream goes out in one write. A stream the server stops ends with one named
message, `event: end`, whose data says why (`behind`: the client read too slowly;
`store-unavailable`; `error`): reconnect after the last id received. Streams are bounded per
client address and in all (`api.live_limits`: 429 or 503 with `Retry-After`) and counted in
`sabot_live_subscribers` (`api.metrics`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Request, get
from litestar.background_tasks import BackgroundTask
from litestar.datastructures import State
from litestar.params import HeaderParameter, QueryParameter
from litestar.response import Stream

from api.live_limits import LiveLimits, Slot
from api.live_messages import KEEP_ALIVE, end_message, messages
from api.live_readers import Batch, End, LiveReaders, Subscription
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
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def _stream(subscription: Subscription, after: int,
                  slot: Slot) -> AsyncIterator[bytes]:
    readers: LiveReaders = subscription.reader.hub
    try:
        if after < subscription.start:
            events = await subscription.catch_up(after)
            if events:
                after = events[-1]["originator_version"]
                yield messages(events)
        while True:
            chunks: list[bytes] = []
            for item in await subscription.take():
                if isinstance(item, End):
                    yield b"".join([*chunks, end_message(item.reason, after)])
                    return
                if isinstance(item, Batch):
                    chunk, after = subscription.messages(item, after)
                    chunks.append(chunk)
                else:
                    chunks.append(KEEP_ALIVE)
            yield b"".join(chunks)
    finally:
        readers.leave(subscription)
        slot.release()


@get("/tables/{table:str}/events", tags=["live"], summary="A table's events, live (SSE)",
     media_type="text/event-stream", security=BEARER_OR_ANONYMOUS,
     responses=problems(400, 401, 404, 429, 503))
async def table_events(request: Request[Any, Any, State], table: TableRef,
                       after: After = None,
                       last_event_id: LastEventId = "") -> Stream:
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
    return Stream(_stream(subscription, start, slot), media_type="text/event-stream",
                  headers=SSE_HEADERS,
                  background=BackgroundTask(_leave, readers, subscription, slot))


async def _leave(readers: LiveReaders, subscription: Subscription, slot: Slot) -> None:
    """After the response, in case the stream was never iterated (its client left first)."""
    readers.leave(subscription)
    slot.release()
