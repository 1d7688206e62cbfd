"""One reader per table per process: the live streams of a table share one read of its events.

While a table has subscribers in this process, one `TableReader` task reads its new events
from the store when the table's channel wakes it (`api.live`), or every `POLL_SECONDS` for
events written where no wake-up reaches (the CLI without Redis), and hands the batch, with
the table's state at that read, to every subscriber's queue: the reads cost tables ×
commits, not subscribers × commits. A batch's SSE messages are encoded once for each view
of it (`api.visibility.view_of`: what the caller may see) and the same bytes go to every
stream of that view, so a subscriber costs one write a batch (one for all the batches that
wait in its queue); a stream filters and encodes for itself only the batch it joined in the
middle of. One that joins behind the reader reads the events it lacks once, itself (a
catch-up), then follows the batches. When the table has been quiet for `POLL_SECONDS` the
reader offers a `Quiet`, which the streams send as a keep-alive comment. A subscriber's queue
holds `QUEUE_BATCHES` batches: one that falls further behind is dropped with an `end`
message (reason `behind`), so that a slow client never holds up the others; a reconnecting
browser resumes after its `Last-Event-ID`. A store that does not answer ends every stream of
the table the same way (reason `store-unavailable`). Reads are counted in
`sabot_live_reads_total{kind}` (`shared` by a reader, `catch-up` by a subscriber).

Everything but the reads runs on the server's event loop: no lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog
from eventsourcing.persistence import ConnectionUnavailableError, OperationalError
from litestar.channels import ChannelsPlugin
from prometheus_client import Counter

from api.live_messages import messages
from api.tokens import Grant
from api.visibility import View, view_of, visible_events
from domain.table.state import TableState
from infra.services.tables import TableService, describe
from infra.store.live_push import channel_of

POLL_SECONDS = 5.0
QUEUE_BATCHES = 256

log = structlog.get_logger("sabot.api.live")


@dataclass(frozen=True)
class Batch:
    """Events read at once, and the table's state when they were read; their SSE messages,
    encoded once for each view of them that a stream asked for."""

    events: list[dict[str, Any]]
    state: TableState
    encoded: dict[View, bytes] = field(default_factory=dict, compare=False, repr=False)

    @property
    def last(self) -> int:
        return int(self.events[-1]["originator_version"])

    def messages_for(self, grant: Grant) -> bytes:
        view = view_of(grant)
        found = self.encoded.get(view)
        if found is None:
            found = self.encoded[view] = messages(visible_events(self.state, grant,
                                                                 self.events))
        return found


@dataclass(frozen=True)
class End:
    """The stream ends: `reason` is `behind`, `store-unavailable` or `error`."""

    reason: str


@dataclass(frozen=True)
class Quiet:
    """Nothing new for `POLL_SECONDS`: the stream sends a keep-alive comment."""


QUIET = Quiet()
Item = Batch | End | Quiet


class Subscription:
    """One stream's place in its table's fan-out: `start` is where the reader stood."""

    def __init__(self, reader: TableReader, grant: Grant, start: int) -> None:
        self.reader = reader
        self.grant = grant
        self.start = start
        self.queue: asyncio.Queue[Item] = asyncio.Queue(maxsize=QUEUE_BATCHES)

    def offer(self, item: Item) -> None:
        if self.queue.full():
            if isinstance(item, Quiet):  # what waits will say more than a keep-alive
                return
            if isinstance(item, Batch):
                item = End("behind")
        if isinstance(item, End):  # the end goes first, whatever waits
            while not self.queue.empty():
                self.queue.get_nowait()
            self.reader.subscribers.discard(self)
        self.queue.put_nowait(item)

    async def take(self) -> list[Item]:
        """What waits in the queue, all of it, once something is there."""
        items = [await self.queue.get()]
        while not self.queue.empty():
            items.append(self.queue.get_nowait())
        return items

    def messages(self, batch: Batch, after: int) -> tuple[bytes, int]:
        """The batch's messages past `after` for this stream's caller, and the last version
        they hold: the batch's shared bytes when it is all new to the stream."""
        if batch.events[0]["originator_version"] > after:
            return batch.messages_for(self.grant), batch.last
        fresh = self.visible(batch, after)
        return (messages(fresh), fresh[-1]["originator_version"]) if fresh else (b"", after)

    def visible(self, batch: Batch, after: int) -> list[dict[str, Any]]:
        """The batch's events past `after`, as this stream's caller may see them."""
        fresh = [e for e in batch.events if e["originator_version"] > after]
        return visible_events(batch.state, self.grant, fresh) if fresh else []

    async def catch_up(self, after: int) -> list[dict[str, Any]]:
        """The events between `after` and where the reader stood at joining, read once."""
        reader = self.reader
        events = await anyio.to_thread.run_sync(reader.read, after, self.start)
        reader.reads.labels("catch-up").inc()
        return self.visible(events, after) if events is not None else []


class TableReader:
    """The task that reads one table's new events for all its subscribers in this process."""

    def __init__(self, hub: LiveReaders, table_id: uuid.UUID, position: int) -> None:
        self.hub = hub
        self.service = hub.service
        self.reads = hub.reads
        self.table_id = table_id
        self.position = position
        self.subscribers: set[Subscription] = set()
        self.woken = asyncio.Event()
        self.offered = time.monotonic()
        self.task: asyncio.Task[None] | None = None

    def read(self, after: int, upto: int | None = None) -> Batch | None:
        """The events after `after` (up to `upto`) and the table's state; None if none."""
        events = self.service.events_of(self.table_id, gt=after, lte=upto)
        if not events:
            return None
        table = self.service.table_at(self.table_id, events[-1].originator_version)
        return Batch([describe(e) for e in events], table.state)

    async def run(self) -> None:
        async def on_message(_: bytes) -> None:
            self.woken.set()

        try:
            await self._follow(on_message)
        finally:
            self.hub.forget(self)

    async def _follow(self, on_message: Callable[[bytes], Awaitable[None]]) -> None:
        async with (self.hub.channels.start_subscription([channel_of(self.table_id)]) as
                    channel, channel.run_in_background(on_message)):
            while self.subscribers:
                self.woken.clear()
                try:
                    batch = await anyio.to_thread.run_sync(self.read, self.position)
                except (OperationalError, ConnectionUnavailableError) as error:
                    log.warning("live.store-unavailable", table=str(self.table_id),
                                error=type(error).__name__)
                    self.end("store-unavailable")
                    return
                except Exception:
                    log.exception("live.reader-failed", table=str(self.table_id))
                    self.end("error")
                    return
                self.reads.labels("shared").inc()
                if batch is not None:
                    self.position = batch.last
                    self.offer(batch)
                elif time.monotonic() - self.offered >= POLL_SECONDS:
                    self.offer(QUIET)
                with anyio.move_on_after(POLL_SECONDS):
                    await self.woken.wait()

    def offer(self, item: Item) -> None:
        self.offered = time.monotonic()
        for subscriber in list(self.subscribers):
            subscriber.offer(item)

    def end(self, reason: str) -> None:
        self.offer(End(reason))
        self.hub.forget(self)


class LiveReaders:
    """This process's table readers, started with a table's first subscriber and stopped
    with its last."""

    def __init__(self, service: TableService, channels: ChannelsPlugin,
                 reads: Counter) -> None:
        self.service = service
        self.channels = channels
        self.reads = reads
        self.readers: dict[uuid.UUID, TableReader] = {}

    def join(self, table_id: uuid.UUID, grant: Grant, after: int, head: int) -> Subscription:
        """A place in the table's fan-out for a stream after `after`; `head` is the table's
        version as the caller read it (a new reader starts at neither past it)."""
        reader = self.readers.get(table_id)
        if reader is None or (reader.task is not None and reader.task.done()):
            reader = self.readers[table_id] = TableReader(self, table_id, min(after, head))
        subscription = Subscription(reader, grant, reader.position)
        reader.subscribers.add(subscription)
        if reader.task is None:
            reader.task = asyncio.get_running_loop().create_task(reader.run())
        return subscription

    def leave(self, subscription: Subscription) -> None:
        reader = subscription.reader
        reader.subscribers.discard(subscription)
        if not reader.subscribers:
            self.forget(reader)
            if reader.task is not None and not reader.task.done():
                reader.task.cancel()

    def forget(self, reader: TableReader) -> None:
        if self.readers.get(reader.table_id) is reader:
            del self.readers[reader.table_id]

    async def close(self) -> None:
        """Stop every reader (the app's shutdown)."""
        tasks = [r.task for r in self.readers.values() if r.task is not None]
        self.readers.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
