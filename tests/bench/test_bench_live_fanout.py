"""Benchmark of the live fan-out (issue 30): another process's writes reaching many SSE
subscribers of one table in one API process, against one subscriber in the same run.

Each run subscribes its streams, then a writer process (`tests.bench.live_writer`) records
chip adjustments, each woken through Redis. The streams are read by `CLIENT_PROCESSES`
processes of their own (`tests.bench.sse_subscribers`): they were threads of this process, the
server's, and a thousand of them would have taken the server's interpreter lock from it; the
subscribers' own loop lag is reported beside the latency, so that a slow client shows. The
server keeps no views (`sabot serve --no-worker`, as beside Redis in production): a view
follower's thread in its process would take the interpreter lock each time the event loop
releases it to write to a socket, a thousand times a batch. The
rows, for 200 and for 1,000 streams (the issue's goal), with one stream as their baseline:
push latency p95 (write to arrival, over every stream and write); the clients' loop lag p95;
and the reads of the table's new events a write, which the shared reader keeps at one (fewer
when wake-ups coalesce, a little more with the 5 s polls) whatever the number of streams.
"""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest

from tests.bench.harness import Results, at_most, sized
from tests.bench.sse_subscribers import Subscribers
from tests.bench.test_bench_http import a_table
from tests.e2e.test_api import Api, a_service, serving
from tests.e2e.test_live_streams import metric, settle

STREAMS = [sized(200, 20), sized(1000, 50)]
CLIENT_PROCESSES = int(os.environ.get("SABOT_BENCH_CLIENT_PROCESSES", "4"))


def push_p95(api: Api, table_id: str, streams: int, writes: int, postgres_url: str,
             redis_url: str) -> tuple[float, float, float]:
    """The p95 of write-to-arrival over `streams` subscribers, in ms; the shared reads a
    write; the p95 of the subscribers' own loop lag, in ms."""
    subscribers = Subscribers([f"{api.base_url}/tables/{table_id}/events"] * streams,
                              processes=CLIENT_PROCESSES)
    try:
        subscribers.wait_open(60)
        settle(api, "sabot_live_subscribers", streams)
        reads = 'sabot_live_reads_total{kind="shared"}'
        before = metric(api, reads)
        subscribers.open_window()
        written = subprocess.run(
            [sys.executable, "-m", "tests.bench.live_writer", postgres_url, redis_url, table_id,
             str(writes), f"fanout-{streams}"],
            check=True, capture_output=True, text=True, timeout=300).stdout
        subscribers.wait_arrivals(streams * writes, 60)
        shared = metric(api, reads) - before
    finally:
        received = subscribers.close()
    settle(api, "sabot_live_subscribers", 0)
    assert not received.errors, received.errors[:5]
    sent = {int(v): float(t) for v, t in (line.split() for line in written.splitlines())}
    latencies = sorted(at - sent[v] for _, v, at in received.arrivals if v in sent)
    assert len(latencies) == streams * writes, "a write never reached a subscriber"
    return (latencies[max(0, round(0.95 * len(latencies)) - 1)] * 1000, shared / writes,
            received.lag_p95_ms())


@pytest.mark.bench
@pytest.mark.redis
def test_bench_live_fanout(postgres_url: str, redis_url: str, results: Results,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    writes = sized(100, 20)
    monkeypatch.setenv("SABOT_LIVE_PER_ADDRESS", str(max(STREAMS)))  # all from 127.0.0.1
    with serving(a_service(postgres_url), views=False, broker_url=redis_url) as api:
        table_id, _ = a_table(api)
        one, _, _ = push_p95(api, table_id, 1, writes, postgres_url, redis_url)
        measured = [(n, *push_p95(api, table_id, n, writes, postgres_url, redis_url))
                    for n in STREAMS]
        assert httpx.get(f"{api.base_url}/ready", timeout=10).status_code == 200
    for streams, p95, reads, lag in measured:
        results.report(f"live: a write to {streams} SSE subscribers of one table, push p95",
                       p95, "ms", baseline=one, baseline_label="1 subscriber",
                       goal=at_most(100, of_ratio=False))
        results.report(f"live: their client processes' loop lag p95, {streams} subscribers",
                       lag, "ms")
        results.report(f"live: reads of a table's new events a write, {streams} subscribers",
                       reads, "reads", goal=at_most(1.05, of_ratio=False))
