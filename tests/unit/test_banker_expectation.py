"""The à deux tableaux banker's exact-expectation policy (domain.game.banker_expectation)."""

from __future__ import annotations

import random
from fractions import Fraction
from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.banker_expectation import banker_expectations, banker_should_draw
from domain.game.cards import Card, card, fresh_decks, point, value, value_counts
from domain.game.coup import Coup, Side
from domain.game.policies import punter_draws
from domain.game.settings import TableSettings

TABLE = TableSettings.default("deux-tableaux")
RANK = "TA23456789"  # the rank dealt for each value 0-9
NATURAL = "natural"
Tableau = int | None | str  # the value given as third card, None if it stood, or NATURAL


def _coup(banker: int, right: Tableau, left: Tableau, table: TableSettings = TABLE) -> Coup:
    """A coup at the banker's decision. The tableaux' hidden cards are placeholders."""
    coup = Coup.start(table)
    for k in range(2):
        coup.deal(card(_hidden(right)[k] + "s"))
        coup.deal(card(_hidden(left)[k] + "h"))
        coup.deal(card((RANK[banker] + "T")[k] + "d"))
    coup.show_naturals()
    if coup.awaits_offer():
        coup.offer()  # "Je donne" (002)
    for side, third in ((Side.RIGHT, right), (Side.LEFT, left)):
        if third is None:
            coup.stand(side)
        elif isinstance(third, int):
            coup.draw(side)
            coup.deal(card(RANK[third] + "c"))
    assert coup.to_act() is Side.BANKER
    return coup


def _hidden(tableau: Tableau) -> str:
    """Two ranks: a natural, a 6 that stands, or an ace that draws."""
    if tableau == NATURAL:
        return "9T"
    return "T6" if tableau is None else "AT"


def _seen_by_banker(coup: Coup) -> list[Card]:
    seen = list(coup.hands[Side.BANKER])
    for side in coup.tableaux:
        cards = coup.hands[side]
        seen += cards if side in coup.naturals else cards[2:]
    return seen


def _unseen(coup: Coup, decks: int = 3) -> list[int]:
    counts = value_counts(decks)
    for c in _seen_by_banker(coup):
        counts[value(c)] -= 1
    return counts


# 000's rules of thumb for one punter, as (rule, value given or None, banker's point, draws).
# Only the claims the exact computation confirms are here. Not asserted, because it contradicts
# them: rule 2 (a bûche given, stand on 3: drawing is better by 0.062 a chip) and rule 6 (a four
# given, draw on 5: standing is better by 0.0004 a chip, a coin flip that the banker's own cards
# can turn either way). Rule 9's "tire sur 8" is read as 5, since 8 is a natural.
CONFIRMED = [
    (1, None, 5, True),
    (3, 1, 4, False),
    (4, 2, 5, False),
    (5, 3, 5, False),
    (7, 5, 5, True),
    (7, 5, 6, False),  # "Cependant il est plus probable que la carte ... diminuera"
    (8, 6, 6, True),
    (9, 7, 5, True),
    (9, 7, 6, True),
    (10, 8, 5, False),
    (10, 8, 4, False),
    (10, 8, 3, False),
    (10, 9, 5, False),
    (10, 9, 4, False),
    (10, 9, 3, False),
]


@pytest.mark.parametrize(("rule", "given_value", "banker", "draws"), CONFIRMED)
def test_rules_of_thumb_000_that_the_exact_computation_confirms(
    rule: int, given_value: int | None, banker: int, draws: bool
) -> None:
    coup = _coup(banker, right=given_value, left=NATURAL)
    stakes = {Side.RIGHT: 10, Side.LEFT: 10}  # the left, decided by its natural, counts nothing
    assert banker_should_draw(coup, stakes, _unseen(coup)) is draws, f"000 rule {rule}"


def test_rules_2_and_6_of_000_are_contradicted() -> None:
    buche = _coup(3, right=0, left=NATURAL)
    draw, stand = banker_expectations(buche, {Side.RIGHT: 1}, _unseen(buche))
    assert draw - stand == pytest.approx(0.0616, abs=1e-4)
    four = _coup(5, right=4, left=NATURAL)
    draw, stand = banker_expectations(four, {Side.RIGHT: 1}, _unseen(four))
    assert draw - stand == pytest.approx(-0.0004, abs=1e-4)


def test_a_tableau_that_stood_on_a_given_point_beats_a_banker_who_stands_below() -> None:
    # A bûche given to a hand that drew on 0-4 leaves it 0-4: the banker on 5 cannot lose.
    coup = _coup(5, right=0, left=NATURAL)
    _, stand = banker_expectations(coup, {Side.RIGHT: 7}, _unseen(coup))
    assert stand == 7


def test_the_sacrifice_of_000_flips_with_the_stakes() -> None:
    # Right given a bûche, left a seven, banker on 5: standing wins the right for sure, drawing
    # is better against the seven; 000 stands, "car il compromettrait sa chance sur le tableau
    # de droite".
    coup = _coup(5, right=0, left=7)
    unseen = _unseen(coup)
    assert not banker_should_draw(coup, {Side.RIGHT: 100, Side.LEFT: 100}, unseen)
    assert not banker_should_draw(coup, {Side.RIGHT: 100, Side.LEFT: 300}, unseen)
    assert banker_should_draw(coup, {Side.RIGHT: 100, Side.LEFT: 400}, unseen)
    assert banker_should_draw(coup, {Side.RIGHT: 0, Side.LEFT: 1}, unseen)
    decisions = [
        banker_should_draw(coup, {Side.RIGHT: 100, Side.LEFT: left}, unseen)
        for left in range(0, 1001, 25)
    ]
    assert decisions == sorted(decisions), "once the left's weight makes him draw, more keeps it"


def test_expectations_are_linear_in_the_stakes() -> None:
    coup = _coup(2, right=3, left=None)
    unseen = _unseen(coup)
    right = banker_expectations(coup, {Side.RIGHT: 1}, unseen)
    left = banker_expectations(coup, {Side.LEFT: 1}, unseen)
    both = banker_expectations(coup, {Side.RIGHT: 3, Side.LEFT: 5}, unseen)
    assert both == (3 * right[0] + 5 * left[0], 3 * right[1] + 5 * left[1])


def _brute_force(
    coup: Coup, stakes: dict[Side, int], unseen: list[int]
) -> tuple[Fraction, Fraction]:
    """Average over every ordered deal of individual cards to the hidden places and the banker's
    third card, keeping the deals that agree with what the tableaux did."""
    cards = [v for v, n in enumerate(unseen) for _ in range(n)]
    playing = coup.in_play()
    banker = point(coup.hands[Side.BANKER])
    kept = draw = stand = 0
    for deal in permutations(range(len(cards)), 2 * len(playing) + 1):
        finals = []
        for k, side in enumerate(playing):
            two = (cards[deal[2 * k]] + cards[deal[2 * k + 1]]) % 10
            given_value = coup.given(side)
            if two >= 8 or punter_draws(coup.settings, two) != (given_value is not None):
                break
            finals.append((side, two if given_value is None else (two + given_value) % 10))
        else:
            kept += 1
            third = (banker + cards[deal[-1]]) % 10
            for side, final in finals:
                stand += stakes.get(side, 0) * ((banker > final) - (banker < final))
                draw += stakes.get(side, 0) * ((third > final) - (third < final))
    return Fraction(draw, kept), Fraction(stand, kept)


@pytest.mark.parametrize(
    ("banker", "right", "left", "unseen"),
    [
        (5, 0, 7, [3, 1, 1, 1, 0, 1, 1, 1, 0, 0]),
        (3, None, 2, [2, 1, 0, 2, 1, 0, 1, 0, 1, 1]),
        (6, 4, NATURAL, [1, 2, 1, 0, 1, 1, 0, 1, 1, 1]),
        (0, None, None, [2, 0, 1, 1, 1, 2, 1, 0, 0, 1]),
    ],
)
def test_exact_against_every_permutation_of_a_tiny_pool(
    banker: int, right: Tableau, left: Tableau, unseen: list[int]
) -> None:
    coup = _coup(banker, right, left)
    stakes = {Side.RIGHT: 3, Side.LEFT: 2}
    assert banker_expectations(coup, stakes, unseen) == _brute_force(coup, stakes, unseen)


@settings(max_examples=40, deadline=None)
@given(
    banker=st.integers(0, 7),
    right=st.sampled_from([None, NATURAL, *range(10)]),
    left=st.sampled_from([None, *range(10)]),
    unseen=st.lists(st.integers(0, 2), min_size=10, max_size=10).filter(lambda u: 6 <= sum(u) <= 8),
    stakes=st.tuples(st.integers(0, 9), st.integers(0, 9)),
    draws_on_five=st.booleans(),
)
def test_exact_against_brute_force_on_random_tiny_pools(
    banker: int,
    right: Tableau,
    left: Tableau,
    unseen: list[int],
    stakes: tuple[int, int],
    draws_on_five: bool,
) -> None:
    coup = _coup(banker, right, left, TableSettings.default("deux-tableaux",
                                                            punter_draws_on_five=draws_on_five))
    by_side = {Side.RIGHT: stakes[0], Side.LEFT: stakes[1]}
    try:
        expected = _brute_force(coup, by_side, unseen)
    except ZeroDivisionError:  # no deal agrees with the tableaux: the fallback, tested below
        return
    assert banker_expectations(coup, by_side, unseen) == expected


def test_hands_the_pool_cannot_hide_fall_back_on_no_natural() -> None:
    # Only threes are unseen: the right's hidden pair is 3+3 = 6, which the policy stands on,
    # yet it drew. The banker still knows it has 6 + 0 = 6, and that his own third card is a 3.
    coup = _coup(4, right=0, left=NATURAL)
    draw, stand = banker_expectations(coup, {Side.RIGHT: 5}, [0, 0, 0, 3, 0, 0, 0, 0, 0, 0])
    assert (draw, stand) == (Fraction(5), Fraction(-5))


def _random_coup(rng: random.Random, table: TableSettings) -> tuple[Coup, list[int]] | None:
    """Deal a coup from a shuffled shoe with the default punter policy, after a few earlier
    cards (face up) and a burn (face down); None if it never reaches the banker's decision."""
    shoe = fresh_decks(table.decks)
    rng.shuffle(shoe)
    earlier, burned = rng.randrange(0, 60), rng.randrange(0, 6)
    cards = iter(shoe[earlier + burned :])
    coup = Coup.start(table)
    for _ in range(6):
        coup.deal(next(cards))
    coup.show_naturals()
    if coup.awaits_offer():
        coup.offer()  # "Je donne" (002)
    while (side := coup.to_act()) not in (None, Side.BANKER):
        if punter_draws(table, point(coup.hands[side])):
            coup.draw(side)
            coup.deal(next(cards))
        else:
            coup.stand(side)
    if side is None:
        return None
    unseen = value_counts(table.decks)
    for c in shoe[:earlier] + _seen_by_banker(coup):
        unseen[value(c)] -= 1
    return coup, unseen


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), right=st.integers(0, 500), left=st.integers(0, 500),
       decks=st.sampled_from([2, 3]), draws_on_five=st.booleans())
def test_the_chosen_move_is_never_the_worse(
    seed: int, right: int, left: int, decks: int, draws_on_five: bool
) -> None:
    table = TableSettings.default("deux-tableaux", decks=decks, punter_draws_on_five=draws_on_five)
    dealt = _random_coup(random.Random(seed), table)
    if dealt is None:
        return
    coup, unseen = dealt
    stakes = {Side.RIGHT: right, Side.LEFT: left}
    draw, stand = banker_expectations(coup, stakes, unseen)
    chosen, other = (draw, stand) if banker_should_draw(coup, stakes, unseen) else (stand, draw)
    assert chosen >= other
    at_risk = sum(stakes[side] for side in coup.in_play())
    assert -at_risk <= min(draw, stand) <= max(draw, stand) <= at_risk

    # The banker cannot see the tableaux' hidden cards: other cards there change nothing.
    for side in coup.in_play():
        coup.hands[side][:2] = [card("Ts"), card("Th")]
    assert banker_expectations(coup, stakes, unseen) == (draw, stand)


def test_equal_expectations_stand() -> None:
    coup = _coup(5, right=0, left=7)
    draw, stand = banker_expectations(coup, {}, _unseen(coup))
    assert draw == stand == 0
    assert not banker_should_draw(coup, {}, _unseen(coup))


@pytest.mark.parametrize(
    ("stakes", "unseen", "message"),
    [
        ({Side.RIGHT: -1}, value_counts(3), "negative"),
        ({}, [4] * 9, "10 non-negative counts"),
        ({}, [1, 1, 1, 1, 0, 0, 0, 0, 0, 0], "cannot hold 4 hidden cards"),
        ({}, [0, 0, 0, 0, 5, 0, 0, 0, 0, 0], "cannot hold the tableaux' hidden hands"),  # 4+4: 8
    ],
)
def test_refuses_impossible_inputs(
    stakes: dict[Side, int], unseen: list[int], message: str
) -> None:
    coup = _coup(5, right=0, left=None)
    with pytest.raises(ValueError, match=message):
        banker_expectations(coup, stakes, unseen)


def test_refuses_a_coup_not_at_the_banker_decision() -> None:
    coup = Coup.start(TABLE)
    with pytest.raises(ValueError, match="banker's decision"):
        banker_expectations(coup, {}, value_counts(3))
    chemin = Coup.start(TableSettings.default("chemin-de-fer"))
    with pytest.raises(ValueError, match="à deux tableaux"):
        banker_expectations(chemin, {}, value_counts(6))
