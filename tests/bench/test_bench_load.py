"""Benchmark of the table store on SQLite: loading a table is bounded by its snapshots, not
by its history; and commands per second through `TableService` (`sabot play`'s loop).

1. Loading: a table after 10 coups against one after `SABOT_BENCH_LONG_COUPS` (10,000 by
   default). The long history is built quickly: the aggregate's own `execute` runs in a tight
   loop on one in-memory aggregate and the events are saved in batches (snapshots every 100
   events are taken as usual). Loads are timed on a service without the aggregate cache, so
   each load reads the latest snapshot and the events after it (the long table is played on
   until it lies as far past its latest snapshot as the short one); the ratio long/short
   should be near 1. The long table is also loaded once with snapshots off, to show what they save.
2. Throughput: bots drive a fresh table through `TableService.execute` and re-read its state
   after each command, as `sabot play` does, with the aggregate cache (the default) and
   without; the baseline is the same bot loop on an in-memory Table aggregate (TableState
   and its events, no store, seeds from a dict instead of the vault).
"""

from __future__ import annotations

import os
import random
import time
import uuid
from pathlib import Path
from typing import ClassVar

import pytest

from domain.bots import next_command
from domain.game.settings import Variant
from domain.table.aggregate import Table
from infra.services.tables import TableService, fork
from tests.bench.baselines import memory_table
from tests.bench.harness import Results, at_least, measure, sized
from tests.bench.tables import ids, in_memory_game, seated_table, service

SHORT_COUPS = 10
LONG_COUPS = int(os.environ.get("SABOT_BENCH_LONG_COUPS", sized(10_000, 300)))
THROUGHPUT_COMMANDS = int(os.environ.get("SABOT_BENCH_COMMANDS", sized(1500, 200)))
BATCH = 5000
NO_CACHE = {"AGGREGATE_CACHE_MAXSIZE": "", "SABOT_KEPT_AGGREGATES": "0"}


class NoSnapshots(TableService):
    snapshotting_intervals: ClassVar[dict[type, int]] = {}  # type: ignore[misc]


def align(svc: TableService, table: Table, offset: int, prefix: str) -> None:
    """Play on, saving each command, until `table` lies about `offset` events past its
    latest snapshot: a load reads the snapshot and the events after it (0 to 99), so two
    tables are compared at the same distance from their snapshots."""
    rng = random.Random(3)
    command_id = ids(prefix)
    for n in range(1000):
        if abs(table.version % 100 - offset) <= 2:
            return
        table.execute(next_command(table.state, rng, command_id(n)), svc.cards)
        svc.save(table, command_id=f"{prefix}:{n}")
    raise AssertionError("never came near the offset")


def load_row(svc: TableService, table_id: uuid.UUID, repeat: int) -> tuple[float, int, int]:
    """The best load time, the table's coups and the events a load replays."""
    seconds = measure(lambda: svc.table(table_id), repeat=repeat)
    table = svc.table(table_id)
    snapshot = None
    if svc.snapshots is not None:
        latest = list(svc.snapshots.get(table_id, desc=True, limit=1))
        snapshot = latest[0].originator_version if latest else None
    return seconds, table.state.coup_number, table.version - (snapshot or 0)


@pytest.mark.bench
def test_bench_load_short_and_long_tables(tmp_path: Path, results: Results) -> None:
    url = f"sqlite:///{tmp_path}/bench.db"
    with service(url) as writer:
        short = seated_table(writer, "short")
        in_memory_game(writer, fork(writer.table(short)), SHORT_COUPS, "short", save_every=1)
        long = seated_table(writer, "long")
        table = fork(writer.table(long))
        in_memory_game(writer, table, LONG_COUPS, "long", BATCH)
        align(writer, table, writer.table(short).version % 100, "align")

    with service(url, NO_CACHE) as reader, service(url, NO_CACHE, NoSnapshots) as raw:
        short_s, _, short_replayed = load_row(reader, short, repeat=20)
        long_s, coups, long_replayed = load_row(reader, long, repeat=20)
        off_s, _, _ = load_row(raw, long, repeat=1)
        assert reader.repository.cache is None and raw.snapshots is None
        assert not reader.kept_aggregates
        assert coups >= LONG_COUPS
    assert short_replayed < 100 and long_replayed < 100  # the latest snapshot, then < 100
    results.report(f"load a table of {coups:,} coups, no cache (SQLite)", long_s * 1000, "ms",
                   baseline=short_s * 1000, baseline_label=f"{SHORT_COUPS} coups")
    results.report(f"load a table of {coups:,} coups, snapshots off (SQLite)", off_s * 1000,
                   "ms", baseline=long_s * 1000, baseline_label="snapshots on")


def play_through(svc: TableService, name: str, commands: int) -> float:
    """`sabot play`'s loop: the bot's command, execute, re-read the state."""
    table_id = seated_table(svc, name)
    rng = random.Random(2)
    command_id = ids(name)
    state = svc.state(table_id)
    started = time.perf_counter()
    for n in range(commands):
        svc.execute(table_id, next_command(state, rng, command_id(n)))
        state = svc.state(table_id)
    return time.perf_counter() - started


def baseline(commands: int) -> float:
    """The same bot loop on an in-memory Table aggregate: no store, no vault I/O."""
    with service("sqlite:///:memory:") as svc:
        table = memory_table(svc, "baseline")
        rng = random.Random(2)
        command_id = ids("baseline")
        started = time.perf_counter()
        for n in range(commands):
            table.execute(next_command(table.state, rng, command_id(n)), svc.cards)
            table.collect_events()
        return time.perf_counter() - started


@pytest.mark.bench
def test_bench_commands_per_second(tmp_path: Path, results: Results) -> None:
    n = THROUGHPUT_COMMANDS
    base = n / baseline(n)
    for label, env in (("aggregate cache", None), ("no cache", NO_CACHE)):
        with service(f"sqlite:///{tmp_path}/{label}.db", env) as svc:
            seconds = play_through(svc, f"play-{label}", n)
        results.report(f"sabot play's loop, TableService, {label} (SQLite)", n / seconds,
                       "commands/s", baseline=base, baseline_label="in-memory aggregate")


@pytest.mark.bench
@pytest.mark.parametrize("variant", [Variant.PUNTO_BANCO, Variant.CHEMIN_DE_FER])
def test_bench_pure_engine_with_bots(results: Results, variant: Variant) -> None:
    """The pure engine: bots play coups on an in-memory aggregate, events collected and
    dropped (no store), on one core."""
    coups = sized(2000, 300)
    with service("sqlite:///:memory:") as svc:
        table = memory_table(svc, "engine", variant)
        started = time.process_time()
        in_memory_game(svc, table, coups, "engine", save_every=None)
        cpu = time.process_time() - started
    assert table.state.coup_number >= coups
    results.report(f"pure engine with bots ({variant.value}, one core)", coups / cpu, "coups/s",
                   goal=at_least(10_000, of_ratio=False))  # issue 39
