"""The drawing tables, written out as literal grids from the seeds and checked cell by cell.

Each banker grid has a row per banker's two-card point 0-7 and a column per third card given
to the punter: first `-` (the punter stood), then the values 0 to 9. `D` draws, `S` stands,
`C` is the banker's choice. A grid is typed from the seed, not computed, so that a slip in
`domain.game.drawing` cannot hide behind the same slip in the test.
"""

from __future__ import annotations

import pytest

from domain.game.drawing import Rule
from domain.game.policies import banker_draws, punter_draws
from domain.game.settings import TableSettings, Variant
from domain.game.variants import banker_rule, punter_rule

CELL = {"D": Rule.DRAW, "S": Rule.STAND, "C": Rule.CHOICE}
GIVEN: tuple[int | None, ...] = (None, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)

# 004 (punto banco): 0-2 draw; 3 draws unless an 8 was given; 4 draws on 2-7; 5 on 4-7;
# 6 on 6-7; 7 stands. When the player stood: draw on 0-5, stand on 6-7.
PUNTO_BANCO = """
      - 0123456789
   0: D DDDDDDDDDD
   1: D DDDDDDDDDD
   2: D DDDDDDDDDD
   3: D DDDDDDDDSD
   4: D SSDDDDDDSS
   5: D SSSSDDDDSS
   6: S SSSSSSDDSS
   7: S SSSSSSSSSS
"""

# 001's "Tableau du Banquier", by the card given: 0/1 stands on 4-7; 9 and 8 stand on 3-7;
# 7/6 stands on 7; 5/4 stands on 6-7; 3/2 stands on 5-7; the punter stood: stands on 6-7.
CHEMIN_DE_FER = """
      - 0123456789
   0: D DDDDDDDDDD
   1: D DDDDDDDDDD
   2: D DDDDDDDDDD
   3: D DDDDDDDDSS
   4: D SSDDDDDDSS
   5: D SSSSDDDDSS
   6: S SSSSSSDDSS
   7: S SSSSSSSSSS
"""

# The same with the setting "banker options": 3 against a 9 and 5 against a 4 are free.
CHEMIN_DE_FER_OPTIONS = """
      - 0123456789
   0: D DDDDDDDDDD
   1: D DDDDDDDDDD
   2: D DDDDDDDDDD
   3: D DDDDDDDDSC
   4: D SSDDDDDDSS
   5: D SSSSCDDDSS
   6: S SSSSSSDDSS
   7: S SSSSSSSSSS
"""

# 003's annex, phase 2 (la Banque): 0-4 draws, 5 chooses, 6-7 stands, whatever was given.
SIMPLIFIED = """
      - 0123456789
   0: D DDDDDDDDDD
   1: D DDDDDDDDDD
   2: D DDDDDDDDDD
   3: D DDDDDDDDDD
   4: D DDDDDDDDDD
   5: C CCCCCCCCCC
   6: S SSSSSSSSSS
   7: S SSSSSSSSSS
"""

# 000: the banker of à deux tableaux decides freely, seeing both tableaux.
DEUX_TABLEAUX = """
      - 0123456789
   0: C CCCCCCCCCC
   1: C CCCCCCCCCC
   2: C CCCCCCCCCC
   3: C CCCCCCCCCC
   4: C CCCCCCCCCC
   5: C CCCCCCCCCC
   6: C CCCCCCCCCC
   7: C CCCCCCCCCC
"""

# The punters' hand by its two-card point 0-7: 004 (the player draws on 0-5, stands on 6-7);
# 001, 000/002 and 003 (0-4 draws, 5 is the punter's choice, 6-7 stands).
PUNTER = {
    Variant.PUNTO_BANCO: "DDDDDDSS",
    Variant.CHEMIN_DE_FER: "DDDDDCSS",
    Variant.DEUX_TABLEAUX: "DDDDDCSS",
    Variant.SIMPLIFIED: "DDDDDCSS",
}


def parse(grid: str) -> dict[tuple[int, int | None], Rule]:
    """A literal grid as {(banker point, given): rule}."""
    rows = [line.split(":") for line in grid.strip().splitlines()[1:]]
    table: dict[tuple[int, int | None], Rule] = {}
    for label, cells in rows:
        letters = cells.replace(" ", "")
        assert len(letters) == len(GIVEN), f"row {label} has {len(letters)} cells"
        for given, letter in zip(GIVEN, letters, strict=True):
            table[int(label), given] = CELL[letter]
    assert sorted({p for p, _ in table}) == list(range(8))
    return table


def cells(grid: str) -> list[tuple[int, int | None, Rule]]:
    return [(p, g, rule) for (p, g), rule in parse(grid).items()]


def settings(variant: Variant, **overrides: object) -> TableSettings:
    return TableSettings.default(variant, **overrides)


@pytest.mark.parametrize(("banker", "given", "rule"), cells(PUNTO_BANCO))
def test_punto_banco_banker_table(banker: int, given: int | None, rule: Rule) -> None:
    assert banker_rule(settings(Variant.PUNTO_BANCO), banker, given) is rule


@pytest.mark.parametrize(("banker", "given", "rule"), cells(CHEMIN_DE_FER))
def test_chemin_de_fer_banker_table(banker: int, given: int | None, rule: Rule) -> None:
    assert banker_rule(settings(Variant.CHEMIN_DE_FER), banker, given) is rule


@pytest.mark.parametrize(("banker", "given", "rule"), cells(CHEMIN_DE_FER_OPTIONS))
def test_chemin_de_fer_banker_table_with_options(
    banker: int, given: int | None, rule: Rule
) -> None:
    table = settings(Variant.CHEMIN_DE_FER, banker_options=True)
    assert banker_rule(table, banker, given) is rule


@pytest.mark.parametrize(("banker", "given", "rule"), cells(SIMPLIFIED))
def test_family_game_banque_table(banker: int, given: int | None, rule: Rule) -> None:
    assert banker_rule(settings(Variant.SIMPLIFIED), banker, given) is rule


@pytest.mark.parametrize(("banker", "given", "rule"), cells(DEUX_TABLEAUX))
def test_deux_tableaux_banker_is_always_free(banker: int, given: int | None, rule: Rule) -> None:
    assert banker_rule(settings(Variant.DEUX_TABLEAUX), banker, given) is rule


def test_options_change_exactly_the_two_cases_of_casino_practice() -> None:
    plain, options = parse(CHEMIN_DE_FER), parse(CHEMIN_DE_FER_OPTIONS)
    changed = {cell for cell in plain if plain[cell] is not options[cell]}
    assert changed == {(3, 9), (5, 4)}
    assert (plain[3, 9], plain[5, 4]) == (Rule.STAND, Rule.DRAW)


def test_chemin_de_fer_differs_from_punto_banco_only_on_three_against_a_nine() -> None:
    """001's table and 004's agree everywhere but one cell: 3 against a 9 (001 stands)."""
    pb, cf = parse(PUNTO_BANCO), parse(CHEMIN_DE_FER)
    assert {cell for cell in pb if pb[cell] is not cf[cell]} == {(3, 9)}


def test_seed_001_worked_examples() -> None:
    """001: "Le Ponte a X, il tire 8: le banquier a 2, il doit tirer; a 3, il doit rester."
    And: "Le Ponte reste 6 ou 7: le Banquier a 6, il reste; a 5, il tire"."""
    table = settings(Variant.CHEMIN_DE_FER)
    assert banker_rule(table, 2, 8) is Rule.DRAW
    assert banker_rule(table, 3, 8) is Rule.STAND
    assert banker_rule(table, 6, None) is Rule.STAND
    assert banker_rule(table, 5, None) is Rule.DRAW


@pytest.mark.parametrize("variant", list(Variant))
@pytest.mark.parametrize("own", range(8))
def test_punter_rule(variant: Variant, own: int) -> None:
    assert punter_rule(settings(variant), own) is CELL[PUNTER[variant][own]]


@pytest.mark.parametrize("variant", list(Variant))
def test_default_policies_follow_every_fixed_cell(variant: Variant) -> None:
    """Where the table fixes the move, the default policy makes it; on a choice the documented
    default: the punters' hand stands on 5, the family game's Banque stands on 5, chemin de
    fer's optional cases follow 001's table."""
    for overrides in ({}, {"banker_options": True}):
        table = settings(variant, **overrides)
        for own in range(8):
            rule = punter_rule(table, own)
            expected = rule is Rule.DRAW if rule is not Rule.CHOICE else False
            assert punter_draws(table, own) is expected
        if variant is Variant.DEUX_TABLEAUX:
            continue
        fixed = parse(CHEMIN_DE_FER) if variant is Variant.CHEMIN_DE_FER else None
        for banker in range(8):
            for given in GIVEN:
                rule = banker_rule(table, banker, given)
                if rule is not Rule.CHOICE:
                    expected = rule is Rule.DRAW
                elif fixed is not None:
                    expected = fixed[banker, given] is Rule.DRAW
                else:
                    expected = False
                assert banker_draws(table, banker, given) is expected, (banker, given)


def test_choice_defaults_follow_the_settings() -> None:
    assert punter_draws(settings(Variant.CHEMIN_DE_FER, punter_draws_on_five=True), 5)
    assert banker_draws(settings(Variant.SIMPLIFIED, banker_draws_on_five=True), 5, None)
    with pytest.raises(ValueError, match="banker_expectation"):
        banker_draws(settings(Variant.DEUX_TABLEAUX), 5, None)
