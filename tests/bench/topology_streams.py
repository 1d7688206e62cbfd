"""The topology benchmark's SSE subscribers, in processes of their own: reading a thousand
streams in the process that sends the commands would add its event loop's delays to every
POST and GET it times.

`Streams` opens every stream on its replica (`tests.bench.sse_subscribers`, raw HTTP over
`PROCESSES` processes: a thousand httpx streams in one asyncio process were parsed by one
core, whose own delays showed as push latency) and, while the window is open, notes each
event received (table, version, wall time) and the subscribers' own loop lag. `delays`
matches the events with the answers of the commands that wrote them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from tests.bench.sse_subscribers import Subscribers

PROCESSES = 4

Received = tuple[str, int, float]
"""A pushed event: its table's name, its version, when it arrived (`time.time()`)."""


class Streams:
    """SSE subscribers of `streams` ((replica URL, table name) each)."""

    def __init__(self, streams: Sequence[tuple[str, str]]) -> None:
        self.names = [name for _, name in streams]
        self.subscribers = Subscribers([f"{url}/tables/{name}/events" for url, name in streams],
                                       processes=PROCESSES)

    def wait_open(self, seconds: float) -> None:
        self.subscribers.wait_open(seconds)

    def window(self, opening: bool) -> None:
        if opening:
            self.subscribers.window.set()
        else:
            self.subscribers.window.clear()

    def close(self, seconds: float = 60) -> tuple[list[Received], list[str], float]:
        """Stop the subscribers: what they received in the window, what failed, and their
        loops' lag p95 in ms."""
        received = self.subscribers.close(seconds)
        return ([(self.names[index], version, at) for index, version, at in received.arrivals],
                received.errors, received.lag_p95_ms())


def delays(received: Sequence[Received],
           answered: dict[str, list[tuple[int, float]]]) -> list[float]:
    """Each pushed event's delay after the answer of the command that wrote it (0 when the
    push came first); events whose command was not answered in time are left out."""
    ends = {name: [end for end, _ in answers] for name, answers in answered.items()}
    found = []
    for name, version, at in received:
        index = bisect_left(ends.get(name, []), version)
        if index < len(ends.get(name, [])):
            found.append(max(0.0, at - answered[name][index][1]))
    return found
