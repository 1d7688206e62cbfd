"""Benchmark of the proofs handed over: a coup's dossier and a table's export, written and
checked offline, as ratios to `verify` of the same store (chain, Merkle tree, checkpoints).

The store: a chemin de fer table played `COUPS` coups, after `FILLER` other events, so that
every proof climbs a tree of that size (`SABOT_BENCH_QUICK=1`: a tenth).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from domain.game.settings import Variant
from infra.audit import offline_check
from infra.audit.dossier import dossier
from infra.audit.export import export
from infra.audit.verify import verify
from infra.store.opening import open_store
from projections.audit_port import PROJECTIONS
from tests.bench.harness import Results, sized
from tests.bench.test_bench_audit import fill
from tests.integration.test_table_service import a_service, open_table, play

FILLER = sized(20_000, 2_000)
COUPS = sized(400, 40)


def timed(fn: object) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(3):
        start = time.perf_counter()
        result = fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best, result


@pytest.mark.bench
def test_bench_dossier_and_export(tmp_path: Path, results: Results) -> None:
    url = f"sqlite:///{tmp_path}/proofs.db"
    fill(url, FILLER)
    with a_service(url) as service:
        table_id = open_table(service, "bench", Variant.CHEMIN_DE_FER, decks=1)
        play(service, table_id, COUPS)
    base, _ = timed(lambda: verify(url))
    out = tmp_path / "bundle"
    with open_store(url, create=False) as store:
        build, document = timed(lambda: dossier(store, table_id, 3))
        exported, _ = timed(lambda: export(store, out, recall=PROJECTIONS, table="bench"))
    events = sum(1 for _ in (out / "events.jsonl").open())
    check, report = timed(lambda: offline_check.check_dossier(document))
    bundle, bundle_report = timed(lambda: offline_check.check_path(out))
    assert report.ok and bundle_report.ok  # type: ignore[attr-defined]
    baseline = f"verify the store, {FILLER + events:,} events"
    for work, seconds in (("write one coup's dossier", build),
                          ("check the dossier offline", check),
                          (f"export the table ({events:,} events)", exported),
                          ("check the export offline", bundle)):
        results.report(f"proofs: {work} (SQLite)", seconds * 1000, "ms",
                       baseline=base * 1000, baseline_label=baseline)
