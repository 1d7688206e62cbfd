"""Benchmarks of the HTTP API under uvicorn (a thread of this process, a real socket):

* a view GET with a token against a bare litestar route on the same kind of server;
* a command POST against a bare route that commits one raw psycopg transaction of the same
  rows;
* live: a write from another process reaching an SSE subscriber (Redis pub/sub), p95;
* a tournament's view GET, its tables kept between requests, against the same GET reading
  every table per request.

Requests are sent one after another on one keep-alive connection.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import msgspec
import psycopg
import pytest
import uvicorn
from litestar import Litestar, get, post
from litestar.params import RawBody

from api.tokens import Role
from infra.services import tournaments as tournament_module
from infra.services.tournaments import Tournaments
from tests.bench.harness import Results, at_least, at_most, sized
from tests.e2e.test_api import Api, a_service, free_port, serving
from tests.integration.test_tournament_run import SETTINGS


@contextmanager
def bare_server(postgres_url: str) -> Iterator[str]:
    """A litestar app of two bare routes: a GET answering a small JSON body, and a POST
    committing one raw psycopg transaction of one event-sized row."""
    base, _, schema = postgres_url.partition("?schema=")
    connection = psycopg.connect(base, autocommit=True)
    connection.execute(f'SET search_path TO "{schema}"')
    connection.execute("CREATE TABLE bare (id UUID, version INTEGER, topic TEXT, state BYTEA, "
                       "PRIMARY KEY (id, version))")
    lock = threading.Lock()
    versions = iter(range(10**9))

    @get("/bare", sync_to_thread=False)
    def bare_get() -> dict[str, Any]:
        return {"status": "ok", "version": 1}

    @post("/bare", sync_to_thread=True)
    def bare_post(body: RawBody) -> dict[str, Any]:
        assert "n" in msgspec.json.decode(body)
        with lock, connection.transaction():
            connection.execute("INSERT INTO bare VALUES (%s, %s, %s, %s)",
                               (uuid.UUID(int=1), next(versions), "ChipsAdjusted",
                                bytes(200)))
        return {"status": "ok"}

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(Litestar(route_handlers=[bare_get, bare_post]),
                                           host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        connection.close()


def rates(client: httpx.Client, requests: int, *senders: Any) -> list[float]:
    """Requests a second of each sender, best of five rounds of `requests`; the senders take
    turns within a round, so that a busy machine slows them alike."""
    best = [float("inf")] * len(senders)
    for _ in range(5):
        for i, send in enumerate(senders):
            started = time.perf_counter()
            for n in range(requests):
                response = send(client, n)
                assert response.status_code in (200, 201), response.text
            best[i] = min(best[i], time.perf_counter() - started)
    return [requests / seconds for seconds in best]


def a_table(api: Api) -> tuple[str, str]:
    """A table `bench` with alice seated; its id and an organiser's token."""
    organiser = api.token(Role.ORGANISER)
    opened = api.call("POST", "/tables", organiser, json={"name": "bench", "variant":
                                                           "punto-banco"})
    assert opened.status_code == 201, opened.text
    table_id = opened.json()["table_id"]
    seated = api.call("POST", f"/tables/{table_id}/commands", organiser,
                      json={"kind": "seat", "player": "alice", "chips": 1000,
                            "command_id": "seat-alice"})
    assert seated.status_code == 200, seated.text
    return table_id, organiser


@pytest.mark.bench
def test_bench_http_get_and_post(postgres_url: str, results: Results) -> None:
    requests = sized(200, 20)
    with serving(a_service(postgres_url)) as api, bare_server(postgres_url) as bare:
        table_id, organiser = a_table(api)
        viewer = api.token(Role.PLAYER, player="alice")
        auth = {"Authorization": f"Bearer {viewer}"}
        writer = {"Authorization": f"Bearer {organiser}"}
        with httpx.Client(timeout=10) as client:
            bare_get, view_get = rates(
                client, requests, lambda c, _: c.get(f"{bare}/bare"),
                lambda c, _: c.get(f"{api.base_url}/tables/{table_id}", headers=auth))
            runs = iter(range(10**9))
            bare_post, command_post = rates(
                client, requests, lambda c, n: c.post(f"{bare}/bare", json={"n": n}),
                lambda c, _: c.post(f"{api.base_url}/tables/{table_id}/commands",
                                    headers=writer,
                                    json={"kind": "adjust-chips", "player": "alice",
                                          "delta": 1, "reason": "bench",
                                          "command_id": f"adjust-{next(runs)}"}))
    results.report("HTTP view GET with a token (postgres)", view_get, "requests/s",
                   baseline=bare_get, baseline_label="bare litestar route",
                   goal=at_least(0.5))
    results.report("HTTP command POST (postgres)", command_post, "requests/s",
                   baseline=bare_post, baseline_label="bare route, one psycopg transaction",
                   goal=at_least(0.5))


def sse_arrivals(url: str, until: int, arrivals: dict[int, float],
                 subscribed: threading.Event) -> None:
    with httpx.stream("GET", url, timeout=30) as response:
        subscribed.set()
        for line in response.iter_lines():
            if line.startswith("id:"):
                arrivals[int(line[3:])] = time.time()
                if len(arrivals) == until:
                    return


@pytest.mark.bench
@pytest.mark.redis
def test_bench_live_latency(postgres_url: str, redis_url: str, results: Results) -> None:
    writes = sized(100, 20)
    with serving(a_service(postgres_url), broker_url=redis_url) as api:
        table_id, _ = a_table(api)
        arrivals: dict[int, float] = {}
        subscribed = threading.Event()
        reader = threading.Thread(target=sse_arrivals, daemon=True, args=(
            f"{api.base_url}/tables/{table_id}/events", writes, arrivals, subscribed))
        reader.start()
        assert subscribed.wait(10)
        time.sleep(0.3)
        written = subprocess.run(
            [sys.executable, "-m", "tests.bench.live_writer", postgres_url, redis_url, table_id,
             str(writes)], check=True, capture_output=True, text=True, timeout=120).stdout
        reader.join(timeout=30)
    sent = {int(v): float(t) for v, t in (line.split() for line in written.splitlines())}
    assert set(sent) <= set(arrivals), "a write never reached the subscriber"
    latencies = sorted(arrivals[v] - sent[v] for v in sent)
    p95 = latencies[max(0, round(0.95 * len(latencies)) - 1)]
    results.report("live: another process's write to an SSE subscriber, p95 (Redis)",
                   p95 * 1000, "ms", goal=at_most(100, of_ratio=False))


@pytest.mark.bench
def test_bench_tournament_view_get(postgres_url: str, results: Results,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """GET /tournaments/{t} (every page asks for it every second) of a started tournament
    of several tables, nothing written meanwhile, beside the same GET with every table
    read again per request (as before: `FRESH_SECONDS` = 0)."""
    requests = sized(200, 20)
    service = a_service(postgres_url)
    tournaments = Tournaments(service)
    tournament_id = tournaments.create("bench", SETTINGS, command_id="create")
    for n in range(16):
        tournaments.register(tournament_id, f"p{n:02d}", bot=True, command_id=f"reg-{n}")
    tournaments.start(tournament_id, command_id="start")
    tables = len(tournaments.state(tournament_id).tables)
    path = "/tournaments/bench"

    def get_with(fresh: float) -> Any:
        def send(client: httpx.Client, _: int) -> Any:
            monkeypatch.setattr(tournament_module, "FRESH_SECONDS", fresh)
            return client.get(f"{api.base_url}{path}")
        return send

    with serving(service) as api, httpx.Client(timeout=10) as client:
        kept, rebuilt = rates(client, requests, get_with(1.0), get_with(0.0))
    results.report(f"HTTP tournament view GET, {tables} tables (postgres)", kept, "requests/s",
                   baseline=rebuilt, baseline_label="every table read per request",
                   goal=at_least(1.5))
