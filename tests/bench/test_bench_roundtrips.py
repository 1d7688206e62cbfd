"""Round trips of one table-command POST on PostgreSQL, and its p50, against a bare litestar
route committing one raw psycopg transaction (`test_bench_http.bare_server`), in one run.

A round trip is one wait of a psycopg connection on its socket (`Connection.wait`: a
statement, a commit; in a pipeline each flush, so the count is an upper bound), counted for
every connection of this process while the POSTs run one after another with an
`Idempotency-Key`, the server without its view followers; work a command sets off in the
background (the outbox's marks, batched: `api.app.MARKS`) is counted with it.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import psycopg
import pytest

from api.app import MARKS
from tests.bench.harness import Results, at_most, sized
from tests.bench.test_bench_http import a_table, bare_server
from tests.e2e.test_api import a_service, serving


@contextmanager
def counted_waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """The number of psycopg socket waits of this process so far, as a function."""
    waits = itertools.count()
    seen = [0]
    original = psycopg.Connection.wait

    def wait(self: psycopg.Connection[Any], *args: Any, **kwargs: Any) -> Any:
        seen[0] = next(waits) + 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "wait", wait)
    yield lambda: seen[0]


def posts(client: httpx.Client, requests: int, send: Callable[[httpx.Client, int], Any],
          count: Callable[[], int]) -> tuple[float, float]:
    """p50 in ms and round trips a request of `requests` sent one after another."""
    durations = []
    before = count()
    for n in range(requests):
        started = time.perf_counter()
        response = send(client, n)
        durations.append(time.perf_counter() - started)
        assert response.status_code in (200, 201), response.text
    time.sleep(MARKS[1] + 0.2)  # the outbox's marks, after the answers
    return statistics.median(durations) * 1000, (count() - before) / requests


@pytest.mark.bench
def test_bench_command_round_trips(postgres_url: str, results: Results,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    requests = sized(200, 30)
    with serving(a_service(postgres_url), views=False) as api, \
            bare_server(postgres_url) as bare, counted_waits(monkeypatch) as count:
        table_id, organiser = a_table(api)
        writer = {"Authorization": f"Bearer {organiser}"}
        with httpx.Client(timeout=10) as client:
            bare_p50, bare_trips = posts(
                client, requests, lambda c, n: c.post(f"{bare}/bare", json={"n": n}), count)
            command_p50, command_trips = posts(
                client, requests,
                lambda c, n: c.post(f"{api.base_url}/tables/{table_id}/commands",
                                    headers={**writer, "Idempotency-Key": f"adjust-{n}"},
                                    json={"kind": "adjust-chips", "player": "alice",
                                          "delta": 1, "reason": "bench"}), count)
    assert bare_trips >= 1 and command_trips >= 1
    print(f"\nround trips a command POST: {command_trips:.1f} (bare route {bare_trips:.1f});"
          f" POST p50 {command_p50:.1f} ms (bare route {bare_p50:.1f} ms)")
    results.report("command POST round trips to PostgreSQL (with Idempotency-Key)",
                   command_trips, "round trips", baseline=bare_trips,
                   baseline_label="bare route, one psycopg transaction", goal=at_most(3))
    results.report("command POST p50, one after another (postgres)", command_p50, "ms",
                   baseline=bare_p50, baseline_label="bare route, one psycopg transaction",
                   goal=at_most(3))
