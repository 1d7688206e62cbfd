"""Benchmark: a complete `sabot audit verify` costs the same per event on a long stream as on
a short one (issue 28: it was quadratic, each snapshot replayed from version 0).

Two SQLite stores of one punto banco table each, written by bots command by command, each
saved with its own command id (`one_table_store`: what the service records for a command,
the table kept in memory between commands to write 100,000 events in minutes): a short
stream (`SMALL` events; quick mode 500) and a long one (`LARGE`; quick mode 5,000). Each is
verified completely, as `sabot audit verify` does (chain, tree, signatures, checkpoints,
shoes re-dealt, vault, snapshots, command log; no projection ran on these stores, so the
views check has nothing to rebuild). Rows: the per-event cost on the long
stream, its baseline the short one's (goal ≤ 1.2×); the long stream's events a second
(goal ≥ 20,000), beside the bare hash chain's of the same store. Times are CPU seconds,
the best of a few runs (the machine is shared).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from domain.bots import next_command
from domain.table.commands import AdjustChips, TableCommand
from infra.audit.checks import complete_checks
from infra.audit.report import AuditReport
from infra.audit.shoes import ShoeAudit
from infra.audit.verify import verify
from infra.services.tables import fork
from infra.store.checkpointer import write_checkpoint
from projections.audit_port import PROJECTIONS
from tests.bench.harness import Results, at_least, at_most, sized
from tests.bench.tables import CHIPS, SECRET, ids, seated_table, service

SMALL = sized(1_000, 500)
LARGE = sized(100_000, 5_000)


def one_table_store(url: str, events: int) -> int:
    """Bots play one table until it holds `events` events: each command decided by the
    aggregate and saved with its own command id (events, command log, signatures, a snapshot
    every 100 events, as the service records a command), the table kept in memory between
    commands (a fork) instead of loaded for each; players down to half their chips topped up
    between coups; a checkpoint at the end."""
    rng = random.Random(1)
    with service(url) as svc:
        table = fork(svc.table(seated_table(svc, "bench")))
        written = sent = 0
        while written < events:
            state = table.state
            commands: list[TableCommand] = [AdjustChips(
                command_id=f"bench:{sent}:top-up:{seat.player}", actor="@system",
                player=seat.player, delta=CHIPS - seat.chips, reason="bench")
                for seat in state.seats if state.coup is None and seat.chips < CHIPS // 2]
            commands.append(next_command(state, rng, ids("bench")(sent)))
            for command in commands:
                table.execute(command, svc.cards)
                written += len(table._pending_events)
                svc.save(table, command_id=command.command_id)
            sent += 1
        write_checkpoint(svc)
        return written


def complete(url: str) -> AuditReport:
    report = verify(url, extra_checks=[ShoeAudit(), *complete_checks(PROJECTIONS)])
    assert report.ok and "snapshots" in report.checks, report.findings
    return report


def per_event(run: Callable[[], AuditReport], repeat: int = 3) -> tuple[float, AuditReport]:
    """The least CPU seconds an event of `repeat` runs of `run` (the machine is shared: wall
    time includes waiting for a core), and a report."""
    best, report = float("inf"), None
    for _ in range(repeat):
        started = time.process_time()
        report = run()
        best = min(best, (time.process_time() - started) / report.events)
    assert report is not None
    return best, report


@pytest.mark.bench
@pytest.mark.timeout(1800)  # the 100,000-event store takes minutes to write
def test_bench_complete_verify_linear(tmp_path: Path, results: Results,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABOT_SECRET_KEY", SECRET.hex())  # the vault's seals are opened
    small_url, large_url = f"sqlite:///{tmp_path}/small.db", f"sqlite:///{tmp_path}/large.db"
    one_table_store(small_url, SMALL)
    one_table_store(large_url, LARGE)
    small, small_report = per_event(lambda: complete(small_url))
    large, large_report = per_event(lambda: complete(large_url), repeat=sized(2, 3))
    bare, _ = per_event(lambda: verify(large_url, signatures=False))
    results.report(f"complete verify, per event: one stream of {large_report.events:,} "
                   "events (SQLite)", large * 1e6, "µs",
                   baseline=small * 1e6,
                   baseline_label=f"one stream of {small_report.events:,}",
                   goal=at_most(1.2))
    results.report(f"complete verify, one stream of {large_report.events:,} events (SQLite)",
                   1 / large, "events/s", baseline=1 / bare,
                   baseline_label="bare hash chain", goal=at_least(20_000, of_ratio=False))
