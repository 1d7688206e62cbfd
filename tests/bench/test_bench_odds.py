"""Benchmark of the exact odds (domain.game.odds): every shoe size, against the same-run
baseline."""

from __future__ import annotations

from functools import partial

import pytest

from domain.game.odds import exact_odds
from domain.game.settings import TableSettings, Variant
from tests.bench.harness import (
    BASELINE_INTEGERS,
    QUICK,
    Results,
    baseline_seconds,
    measure,
)


@pytest.mark.bench
def test_bench_exact_odds(results: Results) -> None:
    baseline = baseline_seconds() * 1000
    decks = (1, 2) if QUICK else (1, 6, 8)
    cases = [(Variant.PUNTO_BANCO, n) for n in decks]
    cases += [(Variant.CHEMIN_DE_FER, decks[-1]), (Variant.SIMPLIFIED, decks[-1])]
    for variant, n in cases:
        settings = TableSettings.default(variant, decks=n)
        cards = 52 * n
        sequences = cards * (cards - 1) * (cards - 2) * (cards - 3) * (cards - 4) * (cards - 5)
        assert exact_odds(settings).total == sequences
        seconds = measure(partial(exact_odds, settings), repeat=3 if QUICK else 5)
        results.report(f"exact_odds {variant.value}, {n} deck{'s' if n > 1 else ''}",
                       seconds * 1000, "ms", baseline=baseline,
                       baseline_label=f"sum {BASELINE_INTEGERS:,} integers")
