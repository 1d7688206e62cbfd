"""The variants' rule objects: each variant is assembled once, in `domain.game.variants`, and
nothing else compares a variant's name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain.game.coup import Side
from domain.game.settings import TableSettings, Variant
from domain.game.variants import rules_for
from domain.table.state import TableState

ROOT = Path(__file__).resolve().parents[2]
COMPARISON = re.compile(r"variant\s*(?:is not|is|==|!=|not in|in)\s*[(\[{]?\s*Variant\.")
ASSEMBLY = {"domain/game/variants.py"}


def test_no_code_outside_the_assembly_compares_a_variant() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("domain", "infra", "api", "workers", "projections")
        for path in sorted((ROOT / package).rglob("*.py"))
        if str(path.relative_to(ROOT)) not in ASSEMBLY
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if COMPARISON.search(line)
    ]
    assert found == []


def test_the_pattern_finds_a_comparison() -> None:
    assert COMPARISON.search("if settings.variant is Variant.DEUX_TABLEAUX:")
    assert COMPARISON.search("if variant in (Variant.CHEMIN_DE_FER, Variant.DEUX_TABLEAUX)")
    assert not COMPARISON.search("rules_for(settings.variant).tableaux")


@pytest.mark.parametrize("variant", list(Variant))
def test_a_table_asks_the_rules_of_its_settings(variant: Variant) -> None:
    settings = TableSettings.default(variant)
    state = TableState(settings=settings)
    assert state.rules is rules_for(settings) is rules_for(variant)
    assert state.banks_with_player is rules_for(variant).has_bank
    assert state.house_banks is not state.banks_with_player


def test_each_variant_s_rules() -> None:
    pb, cdf, dt, fam = (rules_for(v) for v in (Variant.PUNTO_BANCO, Variant.CHEMIN_DE_FER,
                                               Variant.DEUX_TABLEAUX, Variant.SIMPLIFIED))
    assert [r.tableaux for r in (pb, cdf, dt, fam)] == [
        (Side.PUNTER,), (Side.PUNTER,), (Side.RIGHT, Side.LEFT), (Side.PUNTER,)]
    assert [r.has_bank for r in (pb, cdf, dt, fam)] == [False, True, True, False]
    assert [r.tie_bet for r in (pb, cdf, dt, fam)] == [True, False, False, True]
    assert [r.replays_ties for r in (pb, cdf, dt, fam)] == [False, True, False, False]
    assert [r.bancos_per_bank for r in (pb, cdf, dt, fam)] == [None, None, 2, None]
    assert [r.natural_beats_three for r in (pb, cdf, dt, fam)] == [False, False, False, True]
    assert [r.drawing.banker_free for r in (pb, cdf, dt, fam)] == [False, False, True, False]
    assert [r.passing.shoe_passes for r in (pb, cdf, dt, fam)] == [False, True, False, False]
    assert [r.seats_on_sides for r in (pb, cdf, dt, fam)] == [False, False, True, False]
    assert [r.coverage is None for r in (pb, cdf, dt, fam)] == [True, False, False, True]

