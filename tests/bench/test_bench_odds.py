"""Benchmark of the exact odds (domain.odds): every shoe size, against the same-run baseline."""

from __future__ import annotations

from functools import partial

import pytest

from domain.odds import exact_odds
from domain.settings import TableSettings, Variant
from tests.bench.harness import (
    BASELINE_INTEGERS,
    baseline_seconds,
    measure,
    milliseconds,
    print_table,
    ratio,
)


@pytest.mark.bench
def test_bench_exact_odds() -> None:
    baseline = baseline_seconds()
    rows: list[dict[str, object]] = [
        {
            "case": f"baseline: sum {BASELINE_INTEGERS:,} integers",
            "best": milliseconds(baseline),
            "ratio": ratio(baseline, baseline),
        }
    ]
    cases = [(Variant.PUNTO_BANCO, decks) for decks in range(1, 9)]
    cases += [(Variant.CHEMIN_DE_FER, 6), (Variant.SIMPLIFIED, 6)]
    for variant, decks in cases:
        settings = TableSettings.default(variant, decks=decks)
        cards = 52 * decks
        sequences = cards * (cards - 1) * (cards - 2) * (cards - 3) * (cards - 4) * (cards - 5)
        assert exact_odds(settings).total == sequences
        seconds = measure(partial(exact_odds, settings), repeat=5)
        rows.append(
            {
                "case": f"exact_odds {variant.value}, {decks} deck{'s' if decks > 1 else ''}",
                "best": milliseconds(seconds),
                "ratio": ratio(seconds, baseline),
            }
        )
    print_table("exact odds: best of 5, ratio to the baseline of this run", rows)
