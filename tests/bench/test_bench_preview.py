"""Benchmark of a format's preview: one run on the pure engine against the same run through a
store.

The preview plays each run in memory (`infra.services.preview.play_once`: the aggregates in a dict,
the director's decisions of `infra.services.direction`); the baseline is the same tournament, same
seed, played by the real director through a SQLite store (the preview's way before the pure engine:
`tests.integration.test_preview.play_on_the_store`). Both must give the same run; the row is
the time of one run and its ratio to the store's (lower is better).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from domain.tournament.presets import preset
from infra.services.preview import play_once
from tests.bench.harness import Results, at_most, sized
from tests.integration.test_preview import play_on_the_store

PLAYERS = sized(40, 12)
COUPS = sized(15, 3)  # a round's coups: the preset's, or fewer in the quick mode
PACE = 45


@pytest.mark.bench
def test_bench_preview_run(results: Results, tmp_path: Path) -> None:
    settings = preset("punto-banco-heats", coups_per_round=COUPS)
    start = time.process_time()
    in_memory = play_once(settings, PLAYERS, b"bench", PACE)
    memory_seconds = time.process_time() - start
    start = time.process_time()
    stored = play_on_the_store(f"sqlite:///{tmp_path}/bench.db", settings, PLAYERS, b"bench",
                               PACE)
    store_seconds = time.process_time() - start
    assert in_memory == stored and in_memory.coups == 4 * COUPS
    results.report(f"preview, one run of punto-banco-heats, {PLAYERS} players "
                   f"({in_memory.coups} steps), CPU", memory_seconds, "s",
                   baseline=store_seconds, baseline_label="the same run through SQLite",
                   goal=at_most(0.25))
