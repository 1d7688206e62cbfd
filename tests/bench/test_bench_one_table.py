"""Benchmark of commands to one table through two API replicas at once (issue 36): 1,200 chip
adjustments by 16 and by 48 organisers, alternating the replicas, against raw psycopg
updating one locked row a transaction on as many connections.

A command that finds its table written by the other replica waits for the table's lock in
the database (`infra.store.aggregate_locks`) rather than losing the race: the benchmark fails
if any is refused (a 409 or a 5xx), recorded other than once, or the chips do not add up
(`tests.e2e.test_concurrent_replicas.adjust_at_once`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.bench.harness import Results, sized
from tests.e2e.test_concurrent_replicas import adjust_at_once, two_replicas

ADJUSTMENTS = sized(1200, 120)

pytestmark = pytest.mark.postgres


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[list[str]]:
    yield from two_replicas(postgres_url, tmp_path)


def raw_one_row(url: str, connections: int, transactions: int) -> float:
    """Seconds for `transactions` raw psycopg transactions on `connections` connections at
    once, each locking one shared row, updating it and logging a row: the work of a queued
    command reduced to the driver's."""
    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base, autocommit=True) as setup:
        setup.execute(f'SET search_path TO "{schema}"')
        setup.execute("CREATE TABLE raw_chips (id INTEGER PRIMARY KEY, chips INTEGER)")
        setup.execute("CREATE TABLE raw_log (n INTEGER PRIMARY KEY)")
        setup.execute("INSERT INTO raw_chips VALUES (1, 100)")
    numbers = iter(range(transactions))
    taking = threading.Lock()

    def write() -> None:
        with psycopg.connect(base, autocommit=True) as connection:
            connection.execute(f'SET search_path TO "{schema}"')
            while True:
                with taking:
                    n = next(numbers, None)
                if n is None:
                    return
                with connection.transaction():
                    connection.execute("SELECT chips FROM raw_chips WHERE id = 1 FOR UPDATE")
                    connection.execute("UPDATE raw_chips SET chips = chips + 1 WHERE id = 1")
                    connection.execute("INSERT INTO raw_log VALUES (%s)", (n,))

    threads = [threading.Thread(target=write) for _ in range(connections)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    with psycopg.connect(base) as check:
        row = check.execute(f'SELECT chips FROM "{schema}".raw_chips').fetchone()
        assert row == (100 + transactions,)
        check.execute(f'DROP TABLE "{schema}".raw_chips, "{schema}".raw_log')
    return seconds


@pytest.mark.bench
@pytest.mark.parametrize("clients", [16, 48])
def test_bench_commands_to_one_table_from_two_replicas(replicas: list[str], postgres_url: str,
                                                       results: Results, clients: int) -> None:
    adjusted = adjust_at_once(replicas, postgres_url, clients, ADJUSTMENTS, f"bench-{clients}")
    raw = raw_one_row(postgres_url, clients, ADJUSTMENTS)
    results.report(f"one table, 2 replicas, {ADJUSTMENTS} chip adjustments by {clients} at "
                   "once: commands/s (none refused)", ADJUSTMENTS / adjusted.seconds,
                   "commands/s", baseline=ADJUSTMENTS / raw,
                   baseline_label="raw psycopg, one row locked a tx")
