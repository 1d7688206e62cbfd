"""What the topology benchmark's HTTP clients saw, and how they send: a command POST with its
sender's token and an idempotency key (noted as applied when answered so), a view GET, and the
latencies, statuses and commands a replica answered while a window is open.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from statistics import quantiles

import httpx


@dataclass
class Sample:
    """One window's latencies in seconds, statuses, and commands applied by each replica."""

    post: list[float] = field(default_factory=list)
    get: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    by_replica: Counter[str] = field(default_factory=Counter)


@dataclass
class Load:
    """What the clients saw: the open window's sample, the pushes' delays, the keys answered
    as applied and each table's answered versions."""

    sample: Sample = field(default_factory=Sample)
    push: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    answered: dict[str, list[tuple[int, float]]] = field(default_factory=dict)
    measuring: bool = False
    resent: int = 0  # requests sent again on a connection the server had closed
    client_lag: float = 0.0  # the SSE subscribers' own loop lag p95, ms
    loop_lags: list[float] = field(default_factory=list)  # the HTTP clients' loop's, s
    handled: dict[float, float] = field(default_factory=dict)  # the replicas' own times
    at_waits: list[float] = field(default_factory=list)  # a read `?at=` on the other replica, s
    view_waits: dict[str, float] = field(default_factory=dict)  # the replicas' looks, by end

    def note(self, started: float, answer: httpx.Response, times: list[float],
             what: str) -> None:
        if self.measuring:
            times.append(time.perf_counter() - started)
            self.statuses[answer.status_code] += 1
        if answer.status_code >= 500:
            self.failures.append(f"{what}: {answer.status_code} {answer.text[:300]}")

    @property
    def post(self) -> list[float]:
        return self.sample.post

    @property
    def get(self) -> list[float]:
        return self.sample.get

    @property
    def statuses(self) -> Counter[int]:
        return self.sample.statuses

    def take(self) -> Sample:
        """The sample so far; the next window's starts empty."""
        taken, self.sample = self.sample, Sample()
        return taken


def percentile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] * 1000 if values else 0.0
    return quantiles(values, n=100, method="inclusive")[q - 1] * 1000


async def send(client: httpx.AsyncClient, load: Load, url: str, token: str, body: object,
               key: str | None = None) -> httpx.Response:
    """A command POST; sent again once, with the same idempotency key (applied at most once),
    when the server closed a kept-alive connection as it was reused (see `get`)."""
    key = key or uuid.uuid4().hex
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    started = time.perf_counter()
    try:
        try:
            answer = await client.post(url, json=body, headers=headers)
        except (httpx.RemoteProtocolError, httpx.ReadError):
            load.resent += 1
            answer = await client.post(url, json=body, headers=headers)
    except httpx.TransportError as error:
        load.failures.append(f"POST {url}: {error!r}")
        raise
    load.note(started, answer, load.post, f"POST {url}")
    if answer.status_code < 300:
        load.applied.append(key)
    return answer


async def get(client: httpx.AsyncClient, load: Load, url: str) -> httpx.Response:
    """A GET, sent again once when the server closed an idle kept-alive connection as it
    was reused (uvicorn's keep-alive timeout racing the client): counted, not a failure."""
    try:
        return await client.get(url)
    except (httpx.RemoteProtocolError, httpx.ReadError):
        load.resent += 1
        return await client.get(url)
