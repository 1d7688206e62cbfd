"""Benchmark of one table command's path: store reads, aggregate copies and time per command.

Bots play a chemin de fer table through `infra.services.autoplay.play_coups` (the path of `sabot
play`, the tournament's table workers and the tests), on SQLite and on PostgreSQL. For each
command it counts:

- reads: SELECTs of events or snapshots (a load from the cache is one read of the events after
  the cached version; a load without it is one read of the snapshot and one of the events),
  and look-ups of a command id (was it applied before?);
- copies: aggregates copied (eventsourcing's `deepcopy` from its cache, or a cheap fork);
- time per command, and its ratio to the raw driver (`sqlite3`, `psycopg`) writing the same
  rows, one transaction a command, in the same run.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import eventsourcing.application as es_application
import pytest

import infra.services.tables as service_module
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from infra.services.autoplay import play_coups, play_step
from infra.services.tables import TableService, fork, seeds_from
from tests.bench.baselines import Row, raw_psycopg, raw_sqlite
from tests.bench.harness import Goal, Results, at_least, at_most, sized
from tests.bench.tables import SECRET, in_memory_game, seated_table, service

COUPS = int(os.environ.get("SABOT_BENCH_COMMAND_COUPS", sized(30, 5)))
LONG_COUPS = int(os.environ.get("SABOT_BENCH_LONG_COUPS", sized(10_000, 300)))


class Counts:
    def __init__(self) -> None:
        self.reads = 0
        self.copies = 0


@contextmanager
def counted(service: TableService) -> Iterator[Counts]:
    """Count the store's SELECTs of events and snapshots, and the aggregates copied."""
    counts = Counts()
    recorders = [service.recorder]
    if service.snapshots is not None:
        recorders.append(service.snapshots.recorder)  # type: ignore[arg-type]
    saved: list[tuple[Any, str, Any]] = []

    def wrap(owner: Any, name: str, bump: Callable[[], None]) -> None:
        original = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bump()
            return original(*args, **kwargs)

        saved.append((owner, name, original))
        setattr(owner, name, wrapper)

    def read() -> None:
        counts.reads += 1

    def copied() -> None:
        counts.copies += 1

    for recorder in recorders:
        wrap(recorder, "select_events", read)
    wrap(service.chained_recorder, "recorded_command", read)
    wrap(es_application, "deepcopy", copied)
    if hasattr(service_module, "fork"):
        wrap(service_module, "fork", copied)
    try:
        yield counts
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def a_table(service: TableService, name: str) -> uuid.UUID:
    settings = TableSettings.default(Variant.CHEMIN_DE_FER, decks=1)
    table_id = service.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(4):
        service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{i}", player=f"p{i}",
                                               chips=10**9))
    return table_id


def rows_written(service: TableService, table_id: uuid.UUID,
                 after: int) -> list[list[Row]]:
    """The stored rows after version `after`, grouped by the command that wrote them."""
    grouped: dict[str, list[Row]] = {}
    for stored, event in zip(service.recorder.select_events(table_id, gt=after),
                             service.events_of(table_id, gt=after), strict=True):
        grouped.setdefault(event.command_id, []).append(
            (table_id, stored.originator_version, stored.topic, stored.state))
    return list(grouped.values())


def run(store: str, url: str, raw: Callable[[list[list[Any]]], float],
        results: Results, goal: Goal | None) -> None:
    with TableService(url=url, secret_key=SECRET) as service:
        service.seed_source = seeds_from(b"bench-command")
        table_id = a_table(service, "bench")
        version = service.table(table_id).version
        with counted(service) as counts:
            start = time.perf_counter()
            play_coups(service, table_id, b"bench", "bench", until=COUPS)
            elapsed = time.perf_counter() - start
        commands = rows_written(service, table_id, version)
    n = len(commands)
    assert n
    baseline = raw(commands)
    results.report(f"per-command path, play_coups (chemin de fer, {store})", n / elapsed,
                   "commands/s", baseline=n / baseline,
                   baseline_label=f"raw {'psycopg' if store == 'postgres' else 'sqlite3'}, "
                   "same rows", goal=goal)
    results.report(f"per-command path: store reads a command ({store})", counts.reads / n,
                   "reads")
    results.report(f"per-command path: aggregates copied a command ({store})",
                   counts.copies / n, "copies")


@pytest.mark.bench
def test_command_path_on_sqlite(tmp_path: Any, results: Results) -> None:
    run("sqlite", f"sqlite:///{tmp_path}/sabot.db",
        lambda commands: raw_sqlite(f"{tmp_path}/raw.db", commands), results, None)


@pytest.mark.bench
def test_command_path_on_postgres(postgres_url: str, results: Results) -> None:
    run("postgres", postgres_url, lambda commands: raw_psycopg(postgres_url, commands),
        results, at_least(0.4))


def per_command_after(svc: TableService, table_id: uuid.UUID, commands: int) -> float:
    """Seconds per command of `commands` bot steps through the command path (`play_step`)."""
    play_step(svc, table_id, b"flat", "warm")
    started = time.perf_counter()
    for _ in range(commands):
        play_step(svc, table_id, b"flat", "flat")
    return (time.perf_counter() - started) / commands


def flat(url: str, store: str, results: Results) -> None:
    """The cost of a command on a table of 10 coups and on one of `LONG_COUPS` (its history
    written in batches, fast), through the same command path."""
    commands = sized(300, 60)
    with service(url) as svc:
        short = seated_table(svc, "short")
        in_memory_game(svc, fork(svc.table(short)), 10, "short", save_every=500)
        long = seated_table(svc, "long")
        in_memory_game(svc, fork(svc.table(long)), LONG_COUPS, "long", save_every=5000)
        assert svc.state(long).coup_number >= LONG_COUPS
        short_s = min(per_command_after(svc, short, commands) for _ in range(2))
        long_s = min(per_command_after(svc, long, commands) for _ in range(2))
    results.report(f"per-command cost at {LONG_COUPS:,} coups ({store})", long_s * 1000, "ms",
                   baseline=short_s * 1000, baseline_label="at 10 coups", goal=at_most(1.2))


@pytest.mark.bench
def test_per_command_cost_flat_on_sqlite(tmp_path: Any, results: Results) -> None:
    flat(f"sqlite:///{tmp_path}/flat.db", "sqlite", results)


@pytest.mark.bench
def test_per_command_cost_flat_on_postgres(postgres_url: str, results: Results) -> None:
    flat(postgres_url, "postgres", results)
