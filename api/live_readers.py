"""One reader per table per process: the live streams of a table share one read of its events.

While a table has subscribers in this process, one `TableReader` task reads its new events
from the store when the table's channel wakes it (`api.live`), or every `POLL_SECONDS` for
events written where no wake-up reaches (the CLI without Redis), and hands the batch, with
the table's state at that read, to every subscriber's queue: the cost is tables × commits,
not subscribers × commits. Each subscriber filters the batch for its own caller
(`api.visibility`) and from its own position; one that joins behind the reader reads the
events it lacks once, itself (a catch-up), then follows the batches. A subscriber's queue
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
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import structlog
from eventsourcing.persistence import ConnectionUnavailableError, OperationalError
from litestar.channels import ChannelsPlugin
from prometheus_client import Counter

from api.tokens import Grant
from api.visibility import visible_events
from domain.table.state import TableState
from infra.services.tables import TableService, describe
from infra.store.live_push import channel_of

POLL_SECONDS = 5.0
QUEUE_BATCHES = 256

log = structlog.get_logger("sabot.api.live")


@dataclass(frozen=True)
class Batch:
    """Events read at once, and the table's state when they were read."""

    events: list[dict[str, Any]]
    state: TableState


@dataclass(frozen=True)
class End:
    """The stream ends: `reason` is `behind`, `store-unavailable` or `error`."""

    reason: str


class Subscription:
    """One stream's place in its table's fan-out: `start` is where the reader stood."""

    def __init__(self, reader: TableReader, grant: Grant, start: int) -> None:
        self.reader = reader
        self.grant = grant
        self.start = start
        self.queue: asyncio.Queue[Batch | End] = asyncio.Queue(maxsize=QUEUE_BATCHES)

    def offer(self, item: Batch | End) -> None:
        if isinstance(item, Batch) and self.queue.full():
            item = End("behind")
        if isinstance(item, End):  # the end goes first, whatever waits
            while not self.queue.empty():
                self.queue.get_nowait()
            self.reader.subscribers.discard(self)
        self.queue.put_nowait(item)

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
                    self.position = batch.events[-1]["originator_version"]
                    for subscriber in list(self.subscribers):
                        subscriber.offer(batch)
                with anyio.move_on_after(POLL_SECONDS):
                    await self.woken.wait()

    def end(self, reason: str) -> None:
        for subscriber in list(self.subscribers):
            subscriber.offer(End(reason))
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
