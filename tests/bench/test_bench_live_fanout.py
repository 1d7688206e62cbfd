"""Benchmark of the live fan-out (issue 30): another process's writes reaching many SSE
subscribers of one table in one API process, against one subscriber in the same run.

Each run subscribes its streams (threads of this process, one connection each), then a writer
process (`tests.bench.live_writer`) records chip adjustments, each woken through Redis. The
rows: push latency p95 (write to arrival, over every stream and write) with many streams, with
one stream as its baseline; and the reads of the table's new events a write, which the shared
reader keeps at one (fewer when wake-ups coalesce, a little more with the 5 s polls) whatever
the number of streams (it was one a stream a write).
"""

from __future__ import annotations

import subprocess
import sys
import threading

import httpx
import pytest

from tests.bench.harness import Results, at_most, sized
from tests.bench.test_bench_http import a_table, sse_arrivals
from tests.e2e.test_api import Api, a_service, serving
from tests.e2e.test_live_streams import metric, settle


def push_p95(api: Api, table_id: str, streams: int, writes: int, postgres_url: str,
             redis_url: str) -> tuple[float, float]:
    """The p95 of write-to-arrival over `streams` subscribers, in ms, and the shared reads a
    write."""
    arrivals: list[dict[int, float]] = [{} for _ in range(streams)]
    subscribed = [threading.Event() for _ in range(streams)]
    readers = [threading.Thread(target=sse_arrivals, daemon=True, args=(
        f"{api.base_url}/tables/{table_id}/events", writes, got, ready))
        for got, ready in zip(arrivals, subscribed, strict=True)]
    for reader in readers:
        reader.start()
    assert all(ready.wait(30) for ready in subscribed)
    settle(api, "sabot_live_subscribers", streams)
    reads = 'sabot_live_reads_total{kind="shared"}'
    before = metric(api, reads)
    written = subprocess.run(
        [sys.executable, "-m", "tests.bench.live_writer", postgres_url, redis_url, table_id,
         str(writes), f"fanout-{streams}"],
        check=True, capture_output=True, text=True, timeout=300).stdout
    for reader in readers:
        reader.join(timeout=60)
    shared = metric(api, reads) - before
    settle(api, "sabot_live_subscribers", 0)
    sent = {int(v): float(t) for v, t in (line.split() for line in written.splitlines())}
    latencies = sorted(got[v] - t for got in arrivals for v, t in sent.items())
    assert len(latencies) == streams * writes, "a write never reached a subscriber"
    return latencies[max(0, round(0.95 * len(latencies)) - 1)] * 1000, shared / writes


@pytest.mark.bench
@pytest.mark.redis
def test_bench_live_fanout(postgres_url: str, redis_url: str, results: Results,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    streams, writes = sized(200, 20), sized(100, 20)
    monkeypatch.setenv("SABOT_LIVE_PER_ADDRESS", str(streams))  # every stream from 127.0.0.1
    with serving(a_service(postgres_url), broker_url=redis_url) as api:
        table_id, _ = a_table(api)
        one, _ = push_p95(api, table_id, 1, writes, postgres_url, redis_url)
        many, reads = push_p95(api, table_id, streams, writes, postgres_url, redis_url)
        assert httpx.get(f"{api.base_url}/ready", timeout=10).status_code == 200
    results.report(f"live: a write to {streams} SSE subscribers of one table, push p95",
                   many, "ms", baseline=one, baseline_label="1 subscriber",
                   goal=at_most(100, of_ratio=False))
    results.report(f"live: reads of a table's new events a write, {streams} subscribers",
                   reads, "reads", goal=at_most(1.05, of_ratio=False))
