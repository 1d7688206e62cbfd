"""Benchmark: a complete `sabot audit verify` costs the same per event on a long stream as on
a short one (issue 28: it was quadratic, each snapshot replayed from version 0).

Two SQLite stores of one punto banco table each, written by bots through the command path
(`infra.services.autoplay.play_coups`, as `sabot play` does: events, command log, signatures,
a snapshot every 100 events, a checkpoint at the end): a short
stream (`SMALL` events; quick mode 500) and a long one (`LARGE`; quick mode 5,000). Each is
verified completely, as `sabot audit verify` does (chain, tree, signatures, checkpoints,
shoes re-dealt, vault, snapshots, command log, views). Rows: the per-event cost on the long
stream, its baseline the short one's (goal ≤ 1.2×); the long stream's events a second
(goal ≥ 20,000), beside the bare hash chain's of the same store. Times are CPU seconds,
the best of a few runs (the machine is shared).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from domain.table.commands import AdjustChips
from infra.audit.checks import complete_checks
from infra.audit.report import AuditReport
from infra.audit.shoes import ShoeAudit
from infra.audit.verify import verify
from infra.services.autoplay import play_coups
from infra.store.checkpoints import write_checkpoint
from projections.audit_port import PROJECTIONS
from tests.bench.harness import Results, at_least, at_most, sized
from tests.bench.tables import CHIPS, SECRET, seated_table, service

SMALL = sized(1_000, 500)
LARGE = sized(100_000, 5_000)


def one_table_store(url: str, events: int) -> int:
    """Bots play one table through the command path until it holds `events` events (players
    down to half their chips topped up between rounds of coups); a checkpoint at the end."""
    with service(url) as svc:
        table_id = seated_table(svc, "bench")
        written = top_ups = 0
        while written < events:
            state = svc.state(table_id)
            for seat in state.seats:
                if seat.chips < CHIPS // 2:
                    svc.execute(table_id, AdjustChips(
                        command_id=f"top-up:{top_ups}", actor="@system", player=seat.player,
                        delta=CHIPS - seat.chips, reason="bench"))
                    top_ups += 1
            played = play_coups(svc, table_id, b"bench", "bench", until=state.coup_number + 50)
            assert played, "the bots cannot go on"
            written += played
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
