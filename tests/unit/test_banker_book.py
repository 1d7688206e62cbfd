"""000's book for the à deux tableaux banker, as a banker strategy, and what it costs."""

from __future__ import annotations

from fractions import Fraction

import pytest

from domain.game.banker_book import STANDS_FROM, book_cost, book_draws
from domain.game.coup import Side
from domain.game.settings import TableSettings
from tests.unit.play import physical_table, play_coup

R, L = Side.RIGHT, Side.LEFT


@pytest.mark.parametrize(("given", "stands_from", "rule"), [
    (None, 6, '1. "le banquier doit en tirer une, quand bien même il aurait cinq"'),
    (0, 3, '2. "reçoit une figure ou un dix ... le banquier se contentera de trois"'),
    (1, 4, '3. "a reçu un as, le banquier se contentera du point de 4"'),
    (2, 5, '4. "reçoit un deux, le banquier se contentera du point de 5"'),
    (3, 5, '5. "reçoit un trois, le banquier doit se contenter à 5"'),
    (4, 6, '6. "donnant le point de 4 ... doit tirer ... quoiqu\'il ait déjà cinq"'),
    (5, 6, '7. "a reçu un cinq, le banquier ne peut pas se contenter à 5"'),
    (6, 7, '8. "donne au ponte le point de 6, le banquier doit tirer, quoique possédant aussi '
           'le même point"'),
    (7, 7, '9. "Lorsque le ponte reçoit un sept, le banquier tire ... même sur 6"'),
    (8, 3, '10. "un huit ou un neuf, il doit lui-même se contenter du point de cinq, même de '
           'quatre et de trois"'),
    (9, 3, "10. (the nine)"),
])
def test_the_book_is_000s_numbered_rules(given: int | None, stands_from: int, rule: str) -> None:
    assert STANDS_FROM[given] == stands_from, rule
    assert all(book_draws(b, given) == (b < stands_from) for b in range(8)), rule


def test_following_the_book_costs_two_cells() -> None:
    """Against one tableau from a full 3-deck shoe the book parts from the exact optimum in
    two cells: on 3 against a bûche (the book stands, drawing is better) and on 5 against a
    four (the book draws, standing is better)."""
    cost = book_cost(TableSettings.default("deux-tableaux"))
    assert [(c.given, c.banker, c.book_draws) for c in cost.cells] == [(0, 3, False),
                                                                      (4, 5, True)]
    assert all(c.cost > 0 and 0 < c.probability < 1 for c in cost.cells)
    assert cost.per_coup == sum(c.probability * c.cost for c in cost.cells)
    assert Fraction(9, 10_000) < cost.per_coup < Fraction(10, 10_000)  # 0.0963% of the stake
    assert 0 < cost.per_coup < cost.optimum


@pytest.mark.parametrize(("strategy", "banker_draws"), [("book", False), ("exact", True)])
def test_the_book_as_the_bankers_strategy(strategy: str, banker_draws: bool) -> None:
    """000, rule 2: "Si le ponte demandant carte reçoit une figure ou un dix ... le banquier
    se contentera de trois": the book stands where the exact optimum draws."""
    players = {"b": 1000, "r": 1000, "l": 1000}
    state = physical_table("deux-tableaux", players, sides={"b": R, "r": R, "l": L},
                           banker_strategy=strategy)
    state.award_bank("b", 100)
    state.place_stake("r", R, 10)
    state.place_stake("l", L, 10)
    # right 2+2 = 4 draws a bûche; left 9, a natural, is decided at once; the banker has 3
    cards = ["2s", "9h", "Td", "2c", "Th", "3d", "Ks"] + (["5c"] if banker_draws else [])
    play_coup(state, cards, pay=False)
    assert state.coup is not None
    assert len(state.coup.hands[Side.BANKER]) == (3 if banker_draws else 2)
