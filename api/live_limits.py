"""Bounds on the live event streams (SSE) an API process holds open.

A stream holds a connection and a place in its table's fan-out (`api.live_readers`) for as
long as the client keeps it. One client address may hold `per_address` streams (default 20,
`SABOT_LIVE_PER_ADDRESS`) and the process `total` (default 2000, `SABOT_LIVE_TOTAL`); beyond,
a new stream is refused before it opens: 429 `too-many-streams` for the address, 503
`live-streams-full` for the process, each with `Retry-After` (`api.problems`). Open streams
are the `sabot_live_subscribers` gauge, refusals `sabot_live_refusals_total{reason}`
(`per-address`, `total`; `api.metrics`).

Everything here runs on the server's event loop, so the counts need no lock.
"""

from __future__ import annotations

from collections import Counter as Tally

from prometheus_client import Counter, Gauge

from api.problems import ApiProblem
from infra.settings import live_limits

RETRY_AFTER = "10"  # seconds: streams are long-lived, a place frees up when a client leaves


class Slot:
    """One admitted stream's place; `release` gives it back (once, however often called)."""

    def __init__(self, limits: LiveLimits, address: str) -> None:
        self.limits = limits
        self.address = address
        self.released = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.limits.leave(self.address)


class LiveLimits:
    """The streams open in this process, by client address."""

    def __init__(self, subscribers: Gauge, refusals: Counter,
                 per_address: int | None = None, total: int | None = None) -> None:
        configured = live_limits()
        self.per_address = per_address or configured[0]
        self.total = total or configured[1]
        self.subscribers = subscribers
        self.refusals = refusals
        self.open: Tally[str] = Tally()

    def admit(self, address: str) -> Slot:
        """A place for a new stream from `address`, or the refusal that says why not."""
        if self.open[address] >= self.per_address:
            self.refusals.labels("per-address").inc()
            raise ApiProblem(429, f"this address holds {self.per_address} live streams "
                             "already, the most allowed: close one first",
                             rule="too-many-streams", headers={"Retry-After": RETRY_AFTER})
        if self.open.total() >= self.total:
            self.refusals.labels("total").inc()
            raise ApiProblem(503, "the server holds as many live streams as it may; "
                             "try again shortly", rule="live-streams-full",
                             headers={"Retry-After": RETRY_AFTER})
        self.open[address] += 1
        self.subscribers.inc()
        return Slot(self, address)

    def leave(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]
        self.subscribers.dec()
