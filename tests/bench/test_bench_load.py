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
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from domain.bots import next_command, playable
from domain.commands import SeatPlayer
from domain.settings import TableSettings, Variant
from domain.table import Phase
from domain.table_aggregate import Table
from infra.service import TableService, fork, seeds_from
from tests.bench.harness import measure, milliseconds, print_table

SECRET = bytes(range(32))
SHORT_COUPS = 10
LONG_COUPS = int(os.environ.get("SABOT_BENCH_LONG_COUPS", "10000"))
THROUGHPUT_COMMANDS = int(os.environ.get("SABOT_BENCH_COMMANDS", "1500"))
BATCH = 5000
PLAYERS = 4
CHIPS = 10**15  # bots stake up to a tenth of their chips: nobody goes broke in 10,000 coups
NO_CACHE = {"AGGREGATE_CACHE_MAXSIZE": "", "SABOT_KEPT_AGGREGATES": "0"}


class NoSnapshots(TableService):
    snapshotting_intervals: ClassVar[dict[type, int]] = {}  # type: ignore[misc]


class MemoryVault:
    """Seeds in a dict: the baseline's stand-in for the vault's SQL."""

    def __init__(self) -> None:
        self.seeds: dict[str, bytes] = {}

    def store(self, shoe_id: str, seed: bytes) -> None:
        self.seeds[shoe_id] = seed

    def unseal(self, shoe_id: str) -> bytes:
        return self.seeds[shoe_id]


def service(url: str, env: dict[str, str] | None = None,
            cls: type[TableService] = TableService) -> TableService:
    svc = cls(env=env, url=url, secret_key=SECRET)
    svc.seed_source = seeds_from(b"bench")
    return svc


def seated_table(svc: TableService, name: str) -> uuid.UUID:
    settings = TableSettings.default(Variant.PUNTO_BANCO)
    table_id = svc.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(PLAYERS):
        svc.execute(table_id, SeatPlayer(command_id=f"{name}:seat:{i}", player=f"p{i}",
                                         chips=CHIPS))
    return table_id


def ids(prefix: str) -> Callable[[int], Callable[[str], str]]:
    return lambda n: lambda label: f"{prefix}:{n}:{label}"


def in_memory_game(svc: TableService, table: Table, coups: int, prefix: str,
                   save_every: int | None) -> int:
    """Bots play `table` through the service's deciding, in memory; saved every
    `save_every` events (None: never). Returns the commands sent."""
    rng = random.Random(1)
    command_id = ids(prefix)
    sent = 0
    batch = 0
    state = table.state
    while state.coup_number < coups or state.coup is not None or (
        state.phase is Phase.TAILLE_OVER
    ):
        assert state.coup is not None or playable(state)
        table.execute(next_command(state, rng, command_id(sent)), svc.cards)
        sent += 1
        if save_every is None:
            table.collect_events()
        elif len(table._pending_events) >= save_every:
            svc.save(table, command_id=f"{prefix}:batch:{batch}")
            batch += 1
        state = table.state
    if save_every is not None and table._pending_events:
        svc.save(table, command_id=f"{prefix}:batch:{batch}")
    return sent


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


def load_row(label: str, svc: TableService, table_id: uuid.UUID, repeat: int) -> dict[str, Any]:
    seconds = measure(lambda: svc.table(table_id), repeat=repeat)
    table = svc.table(table_id)
    snapshot = None
    if svc.snapshots is not None:
        latest = list(svc.snapshots.get(table_id, desc=True, limit=1))
        snapshot = latest[0].originator_version if latest else None
    replayed = table.version - (snapshot or 0)
    return {"table": label, "coups": f"{table.state.coup_number:,}",
            "events": f"{table.version:,}", "snapshot at": f"{snapshot or '-'}",
            "events replayed": f"{replayed:,}", "load": milliseconds(seconds),
            "_seconds": seconds, "_replayed": replayed}


@pytest.mark.bench
def test_bench_load_short_and_long_tables(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/bench.db"
    with service(url) as writer:
        short = seated_table(writer, "short")
        in_memory_game(writer, fork(writer.table(short)), SHORT_COUPS, "short", save_every=1)
        long = seated_table(writer, "long")
        started = time.perf_counter()
        table = fork(writer.table(long))
        commands = in_memory_game(writer, table, LONG_COUPS, "long", BATCH)
        built = time.perf_counter() - started
        align(writer, table, writer.table(short).version % 100, "align")
    print(f"\nbuilt the long table: {LONG_COUPS:,} coups, {commands:,} commands in "
          f"{built:.1f} s")

    with service(url, NO_CACHE) as reader, service(url, NO_CACHE, NoSnapshots) as raw:
        rows = [load_row("short", reader, short, repeat=20),
                load_row("long", reader, long, repeat=20),
                load_row("long, snapshots off", raw, long, repeat=1)]
        assert reader.repository.cache is None and raw.snapshots is None
        assert not reader.kept_aggregates
        assert reader.table(long).state.coup_number >= LONG_COUPS
    for row in rows[:2]:
        assert row["_replayed"] < 100  # the latest snapshot, then fewer than 100 events
    ratio = rows[1]["_seconds"] / rows[0]["_seconds"]
    without = rows[2]["_seconds"] / rows[1]["_seconds"]
    print_table("loading a table (SQLite, no aggregate cache): best of 20",
                [{k: v for k, v in row.items() if not k.startswith("_")} for row in rows])
    print(f"load(long) / load(short) = {ratio:.2f}; snapshots off / on (long) = {without:.0f}")


def play_through(svc: TableService, name: str, commands: int) -> tuple[float, int]:
    """`sabot play`'s loop: the bot's command, execute, re-read the state."""
    table_id = seated_table(svc, name)
    rng = random.Random(2)
    command_id = ids(name)
    events = 0
    state = svc.state(table_id)
    started = time.perf_counter()
    for n in range(commands):
        events += len(svc.execute(table_id, next_command(state, rng, command_id(n))).events)
        state = svc.state(table_id)
    return time.perf_counter() - started, events


def baseline(commands: int) -> tuple[float, int]:
    """The same bot loop on an in-memory Table aggregate: no store, no vault I/O."""
    with service("sqlite:///:memory:") as svc:
        svc._vault = MemoryVault()  # type: ignore[assignment]
        table = Table(name="baseline", settings=TableSettings.default(Variant.PUNTO_BANCO),
                      tournament=None, actor="@bench", command_id="open")
        for i in range(PLAYERS):
            table.execute(SeatPlayer(command_id=f"seat-{i}", actor="@bench", player=f"p{i}",
                                     chips=CHIPS), svc.cards)
        table.collect_events()
        rng = random.Random(2)
        command_id = ids("baseline")
        events = 0
        started = time.perf_counter()
        for n in range(commands):
            table.execute(next_command(table.state, rng, command_id(n)), svc.cards)
            events += len(table.collect_events())
        return time.perf_counter() - started, events


@pytest.mark.bench
def test_bench_commands_per_second(tmp_path: Path) -> None:
    n = THROUGHPUT_COMMANDS
    base_seconds, base_events = baseline(n)
    rows = [{"loop": "baseline: in-memory aggregate, no store", "commands": f"{n:,}",
             "events": f"{base_events:,}", "commands/s": f"{n / base_seconds:,.0f}",
             "events/s": f"{base_events / base_seconds:,.0f}", "ratio": "1.00x"}]
    for label, env in (("TableService, aggregate cache", None),
                       ("TableService, no cache", NO_CACHE)):
        with service(f"sqlite:///{tmp_path}/{len(rows)}.db", env) as svc:
            seconds, events = play_through(svc, f"play-{len(rows)}", n)
        rows.append({"loop": label, "commands": f"{n:,}", "events": f"{events:,}",
                     "commands/s": f"{n / seconds:,.0f}", "events/s": f"{events / seconds:,.0f}",
                     "ratio": f"{seconds / base_seconds:.1f}x"})
    print_table("sabot play's loop on SQLite: commands per second (ratio: time per command "
                "over the baseline's)", rows)
