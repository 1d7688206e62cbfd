"""Benchmark of the projections' catch-up on PostgreSQL: every view rebuilt from the first
event (together, as `sabot projections rebuild` does: each event read and decoded once), at a
small and at a ten times larger store (the bots' tables, written in batches).

The rate is the store's events over the time to bring every view to the head; the larger
store's rate against the smaller's shows whether catch-up stays linear in history.
"""

from __future__ import annotations

import time

import pytest

from infra.services.tables import fork
from infra.store.opening import open_store
from projections.registry import NAMES, VIEWS
from projections.runner import Runner
from tests.bench.harness import Results, at_least, sized
from tests.bench.tables import in_memory_game, seated_table, service

EVENTS_A_COUP = 19  # about, on a punto banco table of four players


def grow(url: str, events: int, name: str) -> None:
    """Add a table played until the store holds about `events` more events."""
    with service(url) as svc:
        table = fork(svc.table(seated_table(svc, name)))
        in_memory_game(svc, table, events // EVENTS_A_COUP, name, save_every=2000)


def catch_up_rate(url: str) -> tuple[int, float, float]:
    """The store's events, and the events a second and a CPU second of this process (the
    database's own work not counted) to bring every view, emptied, from the first event to
    the head."""
    with open_store(url) as store:
        runner = Runner(store, VIEWS)
        events = runner.head()
        runner.reset(NAMES)  # dropping and creating the tables is not catching up
        started, cpu = time.perf_counter(), time.process_time()
        applied, stopped = runner.catch_up_together(NAMES)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert stopped == {} and all(applied.values()), (applied, stopped)
        return events, events / elapsed, events / cpu


@pytest.mark.bench
def test_bench_projection_catch_up(postgres_url: str, results: Results) -> None:
    small = sized(5_000, 500)  # the 10^5 and 10^6 take longer than make bench may
    grow(postgres_url, small, "small")
    small_events, small_rate, _ = catch_up_rate(postgres_url)
    grow(postgres_url, 9 * small, "large")
    large_events, large_rate, large_cpu = catch_up_rate(postgres_url)
    assert large_events > 5 * small_events
    results.report(f"projections catch-up, every view, {small_events:,} events (postgres)",
                   small_rate, "events/s", goal=at_least(20_000, of_ratio=False))
    results.report(f"projections catch-up, every view, {large_events:,} events (postgres)",
                   large_rate, "events/s", baseline=small_rate,
                   baseline_label=f"at {small_events:,} events", goal=at_least(0.8))
    results.report(f"projections catch-up, {large_events:,} events: events a CPU second of"
                   " the runner", large_cpu, "events/s")
