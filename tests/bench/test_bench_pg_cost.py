"""Benchmark of PostgreSQL's own cost per event (issue 30): the server CPU its backends spend
while bots play tables through Sabot's store, one transaction a command (the path of the
director and the API: `play_step`, the chain, the signatures, the command log, the outbox and
its dispatch marks, batched as the director's are (`workers.director.MARK_BATCH`; the API's
by count or time, `api.app.MARKS`), the reads of the next load), against a raw psycopg insert
of the same rows in the same run: per transaction, the events into a `stored_events`-like
table, their chain rows into an `event_chain`-like one and the command's row into a
`command_log`-like one.

The outbox holds what an installation's does: a day of dispatched effects is kept
(`SABOT_OUTBOX_RETENTION`), `HELD` of them here, written before the run.

The CPU is the backends' own (/proc/<pid>/stat, `tests.bench.pg_cpu`): what PostgreSQL spends,
whoever waits; the server must run on this machine, or the benchmark skips.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import psycopg
import pytest

from infra.services.autoplay import play_coups
from tests.bench.harness import Results, at_most, sized
from tests.bench.pg_cpu import BackendCpu, backend_pid, process_cpu, server_is_local, tagged
from tests.bench.tables import seated_table, service
from workers.director import MARK_BATCH

TABLES = 2
COUPS = sized(40, 8)
HELD = sized(1_000_000, 100_000)  # dispatched effects in the outbox (a day's: millions)

RAW_TABLES = (
    "CREATE TABLE raw_events (originator_id uuid NOT NULL, originator_version bigint NOT NULL,"
    " topic text, state bytea, notification_id bigserial,"
    " PRIMARY KEY (originator_id, originator_version))",
    "CREATE UNIQUE INDEX raw_events_notification_id ON raw_events (notification_id)",
    "CREATE TABLE raw_chain (notification_id bigint PRIMARY KEY, originator_id uuid NOT NULL,"
    " originator_version bigint NOT NULL, stream_digest bytea NOT NULL,"
    " global_digest bytea NOT NULL, partition_key text NOT NULL)",
    "CREATE TABLE raw_commands (command_id text PRIMARY KEY, originator_id uuid NOT NULL,"
    " first_version bigint NOT NULL, last_version bigint NOT NULL)",
)

Transaction = tuple[tuple[Any, ...], list[tuple[Any, ...]], list[tuple[Any, ...]]]
"""A command's row, its events' rows, their chain rows."""


def written(url: str, after: int) -> list[Transaction]:
    """The rows Sabot wrote after notification `after`, by command, in order."""
    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        commands = connection.execute(
            "SELECT command_id, originator_id, first_version, last_version FROM command_log"
        ).fetchall()
        rows = connection.execute(
            "SELECT e.originator_id, e.originator_version, e.topic, e.state, c.notification_id,"
            " c.stream_digest, c.global_digest, c.partition_key FROM stored_events e"
            " JOIN event_chain c USING (notification_id) WHERE notification_id > %s"
            " ORDER BY notification_id", (after,)).fetchall()
    by_event = {(r[0], r[1]): r for r in rows}
    transactions: list[Transaction] = []
    for command in commands:
        events = [by_event[(command[1], v)] for v in range(command[2], command[3] + 1)
                  if (command[1], v) in by_event]
        if events:
            transactions.append((command, [e[:4] for e in events],
                                 [(e[4], e[0], e[1], e[5], e[6], e[7]) for e in events]))
    transactions.sort(key=lambda t: t[2][0][0])
    return transactions


def hold_dispatched(url: str, effects: int) -> None:
    """Fill the outbox with `effects` dispatched effects, as kept for a day, analysed."""
    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        connection.execute(
            "INSERT INTO outbox (command_id, kind, effect, dispatched, dispatched_at)"
            " SELECT 'held:' || n, 'wake', '\\x00', true, extract(epoch FROM now())"
            " FROM generate_series(1, %s) AS n", (effects,))
        connection.execute("ANALYZE outbox")


def raw_insert(url: str, transactions: list[Transaction]) -> tuple[float, float]:
    """Seconds and server CPU seconds for psycopg to write `transactions` into fresh tables of
    the test schema, one transaction each."""
    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        for statement in RAW_TABLES:
            connection.execute(statement)
        pid = backend_pid(connection)
        cpu = process_cpu(pid)
        assert cpu is not None
        start = time.perf_counter()
        for command, events, chain in transactions:
            with connection.transaction(), connection.cursor() as cursor:
                cursor.executemany("INSERT INTO raw_events (originator_id, originator_version,"
                                   " topic, state) VALUES (%s, %s, %s, %s)", events)
                cursor.executemany("INSERT INTO raw_chain VALUES (%s, %s, %s, %s, %s, %s)",
                                   chain)
                cursor.execute("INSERT INTO raw_commands VALUES (%s, %s, %s, %s)", command)
        elapsed = time.perf_counter() - start
        spent = process_cpu(pid)
        assert spent is not None
        return elapsed, spent - cpu


@pytest.mark.bench
def test_server_cpu_per_event(postgres_url: str, redis_url: str, results: Results) -> None:
    if not server_is_local(postgres_url):
        pytest.skip("PostgreSQL runs elsewhere: its backends' CPU cannot be read here")
    name = f"sabot-bench-{uuid.uuid4().hex[:8]}"
    with tagged(name), service(postgres_url, env={"SABOT_BROKER_URL": redis_url}) as svc:
        svc.effects.mark_batch = MARK_BATCH
        tables = [seated_table(svc, f"pg-cost-{i}") for i in range(TABLES)]
        hold_dispatched(postgres_url, HELD)
        head = svc.recorder.max_notification_id() or 0
        cpu = BackendCpu(postgres_url, name)
        cpu.start()
        started = time.perf_counter()
        for table_id in tables:
            play_coups(svc, table_id, b"pg-cost", "bench", until=COUPS)
        svc.effects.flush()
        elapsed = time.perf_counter() - started
        spent = cpu.stop()
    transactions = written(postgres_url, head)
    events = sum(len(t[1]) for t in transactions)
    assert events > 0 and spent > 0
    raw_elapsed, raw_spent = raw_insert(postgres_url, transactions)
    assert raw_spent >= 0
    per_event, raw_per_event = spent / events * 1e6, max(raw_spent, 1e-3) / events * 1e6
    results.report(f"PostgreSQL CPU per event, bots playing ({len(transactions)} commands,"
                   f" {events} events, {events / elapsed:.0f} events/s)", per_event, "µs",
                   baseline=raw_per_event, baseline_label="raw psycopg, same rows",
                   goal=at_most(2))
    results.report("commands/s, the same run", len(transactions) / elapsed, "commands/s",
                   baseline=len(transactions) / raw_elapsed,
                   baseline_label="raw psycopg, same rows")
