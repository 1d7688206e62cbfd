"""The benchmarks' SSE subscribers: many streams read in processes of their own, cheaply, so
that what a benchmark times is the server's push and not its client's parsing.

A stream is a raw HTTP/1.1 connection on an asyncio protocol that notes, for each `id:` line,
its version and the wall time its bytes arrived (`time.time()`, taken in `data_received`,
before any parsing). The server sends each SSE message, or a batch of them, as one chunk, so
an `id:` line is never cut by a chunk's size line. The streams are dealt over `processes`
processes (spawned); each also measures its own event loop's lag (how late a 5 ms sleep
wakes) while the window is open: the delay its own scheduling may add to an arrival. A
benchmark reports that lag beside its push latency, so a slow client shows as such.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.sharedctypes import Synchronized
from multiprocessing.synchronize import Event
from urllib.parse import urlsplit

Arrival = tuple[int, int, float]
"""A pushed event: its stream's index, its version, when its bytes arrived (`time.time()`)."""

TICK = 0.005


@dataclass
class Received:
    """What the subscribers noted in the window, what failed, and their loops' lags (s)."""

    arrivals: list[Arrival] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lags: list[float] = field(default_factory=list)

    def lag_p95_ms(self) -> float:
        lags = sorted(self.lags)
        return lags[max(0, round(0.95 * len(lags)) - 1)] * 1000 if lags else 0.0


class _Stream(asyncio.Protocol):
    def __init__(self, index: int, request: bytes, window: Event, received: Received,
                 opened: list[int], counted: Synchronized[int]) -> None:
        self.index, self.request, self.window = index, request, window
        self.received, self.opened, self.counted = received, opened, counted
        self.buffer = b""
        self.status: int | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        at = time.time()
        *lines, self.buffer = (self.buffer + data).split(b"\r\n")
        for line in lines:
            if self.status is None:
                self.status = int(line.split()[1])
                if self.status == 200:
                    self.opened[0] += 1
                else:
                    self.received.errors.append(f"stream {self.index}: {line!r}")
            elif line.startswith(b"id: ") and self.window.is_set():
                self.received.arrivals.append((self.index, int(line[4:]), at))
                self.counted.value += 1

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def loop_lags(measuring: Callable[[], bool], stopped: Callable[[], bool],
                    lags: list[float]) -> None:
    """This asyncio loop's lag (s), noted while `measuring()`, until `stopped()`: how late a
    `TICK` sleep wakes up; an answer waits as long for the loop."""
    while not stopped():
        before = time.monotonic()
        await asyncio.sleep(TICK)
        if measuring():
            lags.append(time.monotonic() - before - TICK)


async def _subscribe(urls: Sequence[tuple[int, str]], ready: Event, window: Event,
                     stop: Event, counted: Synchronized[int]) -> Received:
    loop = asyncio.get_running_loop()
    received, opened = Received(), [0]
    streams: list[_Stream] = []
    for index, url in urls:
        parts = urlsplit(url)
        request = (f"GET {parts.path}{'?' + parts.query if parts.query else ''} HTTP/1.1\r\n"
                   f"Host: {parts.netloc}\r\nAccept: text/event-stream\r\n\r\n").encode()
        try:
            _, stream = await loop.create_connection(
                partial(_Stream, index, request, window, received, opened, counted),
                parts.hostname or "127.0.0.1", parts.port or 80)
            streams.append(stream)
        except OSError as error:
            received.errors.append(f"stream {index}: {error!r}")
    ticker = asyncio.create_task(loop_lags(window.is_set, stop.is_set, received.lags))
    while not stop.is_set():
        if opened[0] == len(urls) or received.errors:
            ready.set()
        await asyncio.sleep(0.05)
    await ticker
    received.errors += [f"stream {s.index}: closed by the server" for s in streams
                        if s.status == 200 and s.closed.done()]
    return received


def _run(urls: Sequence[tuple[int, str]], ready: Event, window: Event, stop: Event,
         counted: Synchronized[int], out: multiprocessing.Queue[Received]) -> None:
    out.put(asyncio.run(_subscribe(urls, ready, window, stop, counted)))


class Subscribers:
    """SSE subscribers of `urls` (a stream each; an arrival names its index in `urls`), dealt
    over `processes` spawned processes."""

    def __init__(self, urls: Sequence[str], processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.window, self.stop = context.Event(), context.Event()
        self.out: multiprocessing.Queue[Received] = context.Queue()
        indexed = list(enumerate(urls))
        self.ready: list[Event] = []
        self.counted: list[Synchronized[int]] = []
        self.processes = []
        for n in range(min(processes, len(indexed))):
            ready, counted = context.Event(), context.Value("q", 0)
            process = context.Process(target=_run, args=(
                indexed[n::processes], ready, self.window, self.stop, counted, self.out))
            process.start()
            self.ready.append(ready)
            self.counted.append(counted)
            self.processes.append(process)

    def wait_open(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        for ready in self.ready:
            assert ready.wait(max(0.0, deadline - time.monotonic())), (
                f"the streams did not open in {seconds:.0f} s")

    def open_window(self) -> None:
        self.window.set()

    def wait_arrivals(self, count: int, seconds: float) -> None:
        """Until the window has seen `count` arrivals in all, or `seconds` have passed."""
        deadline = time.monotonic() + seconds
        while sum(c.value for c in self.counted) < count and time.monotonic() < deadline:
            time.sleep(0.05)

    def close(self, seconds: float = 60) -> Received:
        """Stop the subscribers: what they received in the window, what failed, their lags."""
        self.stop.set()
        received = Received()
        try:
            for _ in self.processes:
                part = self.out.get(timeout=seconds)
                received.arrivals += part.arrivals
                received.errors += part.errors
                received.lags += part.lags
            return received
        finally:
            for process in self.processes:
                process.join(timeout=10)
                if process.is_alive():
                    process.kill()
                    process.join()
