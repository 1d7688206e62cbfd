"""The coup state machine: random walks over its legal steps, and the seeds' worked examples.

The property test deals a random card sequence and, at every point, takes a step chosen at
random among `legal_steps()`; before that, it tries a step that is not legal and checks that
the coup refuses it without changing. Whatever the choices, the rules hold: never a fourth
card, a natural ends the drawing, the decisions offered are the drawing table's.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import DomainError, OutOfTurn, RuleViolation
from domain.game.cards import RANKS, SUITS, Card, card, is_natural, point, value
from domain.game.coup import Coup, LegalStep, Outcome, Side, Step, compare
from domain.game.drawing import Rule
from domain.game.settings import TableSettings, Variant
from domain.game.variants import banker_rule, punter_rule

CODES = [rank + suit for rank in RANKS for suit in SUITS]
TABLES = [
    TableSettings.default(Variant.PUNTO_BANCO),
    TableSettings.default(Variant.CHEMIN_DE_FER),
    TableSettings.default(Variant.CHEMIN_DE_FER, banker_options=True),
    TableSettings.default(Variant.DEUX_TABLEAUX),
    TableSettings.default(Variant.SIMPLIFIED),
]
RANK = "TA23456789"  # a rank for each value 0-9


def hand(*values: int, suit: str = "s") -> list[Card]:
    return [card(RANK[v] + suit) for v in values]


def snapshot(coup: Coup) -> object:
    return msgspec.to_builtins(coup)


def attempt(coup: Coup, step: Step, side: Side | None) -> Callable[[], object]:
    match step:
        case Step.DEAL:
            return lambda: coup.deal(card("Kh"))
        case Step.SHOW_NATURALS:
            return coup.show_naturals
        case Step.DRAW:
            assert side is not None
            return lambda: coup.draw(side)
        case Step.STAND:
            assert side is not None
            return lambda: coup.stand(side)
        case Step.SETTLE:
            return coup.settle
        case Step.OFFER:
            return coup.offer
        case Step.SHOW_DOWN:
            return coup.show_down
    raise AssertionError(step)


def candidates(coup: Coup) -> list[tuple[Step, Side | None]]:
    """Every step the coup knows of, with every hand it could be asked for."""
    sides = [(step, side) for step in (Step.DRAW, Step.STAND) for side in coup.deal_order]
    return [(Step.DEAL, None), (Step.SHOW_NATURALS, None), (Step.SETTLE, None),
            (Step.OFFER, Side.BANKER), (Step.SHOW_DOWN, Side.BANKER), *sides]


def is_legal(legal: list[LegalStep], step: Step, side: Side | None) -> bool:
    if step is Step.DEAL:
        return any(s.step is Step.DEAL for s in legal)
    return any(s.step is step and s.side is side for s in legal)


def expected_decision(coup: Coup, side: Side) -> set[tuple[Step, bool]]:
    """What the drawing table lets this hand do, from the seeds' tables (domain.game.drawing)."""
    own = point(coup.hands[side])
    if side is Side.BANKER:
        given = None
        if len(coup.tableaux) == 1:
            punter = coup.hands[coup.tableaux[0]]
            given = value(punter[2]) if len(punter) == 3 else None
        rule = banker_rule(coup.settings, own, given)
    else:
        rule = punter_rule(coup.settings, own)
    if rule is Rule.CHOICE:
        return {(Step.DRAW, False), (Step.STAND, False)}
    return {(Step.DRAW if rule is Rule.DRAW else Step.STAND, True)}


def check_refusal(coup: Coup, step: Step, side: Side | None) -> None:
    """An illegal step raises the right DomainError and leaves the coup exactly as it was."""
    before = snapshot(coup)
    decision = step in (Step.DRAW, Step.STAND) and side is not None
    # 002: "Les pontes ne peuvent tirer une carte que sur l'offre du banquier"
    no_offer = decision and coup.awaits_offer() and side is not Side.BANKER
    rule_forbids = decision and side is coup.to_act() and not coup.awaits_offer()
    with pytest.raises(DomainError) as refused:
        attempt(coup, step, side)()
    assert snapshot(coup) == before
    assert refused.value.rule
    if no_offer:
        assert isinstance(refused.value, RuleViolation)
        assert refused.value.rule == "no-offer"
    elif rule_forbids:
        assert isinstance(refused.value, RuleViolation)
        assert refused.value.rule.endswith("-forbidden")
    else:
        assert isinstance(refused.value, OutOfTurn)


@settings(max_examples=200, deadline=None)
@given(
    table=st.sampled_from(TABLES),
    cards=st.lists(st.sampled_from(CODES), min_size=9, max_size=9),
    data=st.data(),
)
def test_random_walks_keep_the_rules(
    table: TableSettings, cards: list[str], data: st.DataObject
) -> None:
    coup = Coup.start(table)
    shoe = iter(cards)
    steps_taken = 0
    while not coup.is_settled:
        legal = coup.legal_steps()
        illegal = [c for c in candidates(coup) if not is_legal(legal, *c)]
        check_refusal(coup, *data.draw(st.sampled_from(illegal), label="illegal"))

        side = coup.to_act()
        if coup.awaits_offer():  # 002: the banker speaks first, "Je donne" or shows down
            assert {(s.step, s.forced, s.side) for s in legal} == {
                (Step.OFFER, False, Side.BANKER), (Step.SHOW_DOWN, False, Side.BANKER)}
        elif side is not None:
            # The decisions offered are the drawing table's, and in order: every tableau
            # still in play, in deal order, then the banker.
            offered = {(s.step, s.forced) for s in legal}
            assert offered == expected_decision(coup, side)
            assert all(s.side is side for s in legal)
            if side is Side.BANKER:
                assert coup.in_play() and all(t in coup.decided for t in coup.in_play())

        chosen = data.draw(st.sampled_from(legal), label="step")
        match chosen.step:
            case Step.DEAL:
                dealt_to = coup.deal(card(next(shoe)))
                assert dealt_to is chosen.side
            case Step.SHOW_NATURALS:
                coup.show_naturals()
            case Step.DRAW:
                assert chosen.side is not None
                coup.draw(chosen.side)
            case Step.STAND:
                assert chosen.side is not None
                coup.stand(chosen.side)
            case Step.SETTLE:
                coup.settle()
            case Step.OFFER:
                coup.offer()
            case Step.SHOW_DOWN:
                coup.show_down()
        steps_taken += 1
        assert steps_taken < 30

    check_settled(coup, cards)
    for step, side in candidates(coup):
        check_refusal(coup, step, side)


def check_settled(coup: Coup, cards: list[str]) -> None:
    hands, banker = coup.hands, coup.hands[Side.BANKER]
    order = coup.deal_order
    # The first two cards went one at a time in deal order.
    for k in range(2):
        for i, side in enumerate(order):
            assert hands[side][k] == cards[k * len(order) + i]
    # Never a fourth card; only a hand that asked for one has a third.
    for side, cards_held in hands.items():
        assert 2 <= len(cards_held) <= 3
        assert (len(cards_held) == 3) == (coup.decided.get(side) is Step.DRAW)
    assert coup.cards_dealt <= 3 * len(order)
    # A natural ends the drawing: the banker's for everybody, a single tableau's for the coup.
    if is_natural(banker[:2]) or (len(coup.tableaux) == 1 and coup.naturals):
        assert all(len(h) == 2 for h in hands.values())
        assert not coup.decided
    # A tableau with a natural draws nothing and is decided against the banker's two cards.
    for side in coup.tableaux:
        two = hands[side][:2]
        if is_natural(two):
            assert len(hands[side]) == 2
            assert coup.outcomes is not None
            assert coup.outcomes[side] is compare(two, banker[:2], natural_beats_three=False)
        else:
            expected = compare(hands[side], banker,
                               natural_beats_three=coup.settings.variant is Variant.SIMPLIFIED)
            assert coup.outcomes is not None and coup.outcomes[side] is expected
    # The banker draws only when some tableau played on.
    if len(banker) == 3:
        assert any(not is_natural(hands[t][:2]) for t in coup.tableaux)


# --- the seeds' worked examples ----------------------------------------------------------


def deal_two(coup: Coup, hands: dict[Side, list[Card]]) -> None:
    """Deal the two-card hands one card at a time in deal order, then show naturals."""
    for k in range(2):
        for side in coup.deal_order:
            coup.deal(hands[side][k])
    coup.show_naturals()
    if coup.awaits_offer():  # à deux tableaux, the banker says "Je donne" (002)
        coup.offer()


def forced(step: Step, side: Side) -> list[LegalStep]:
    return [LegalStep(step, side, forced=True)]


@pytest.mark.parametrize(("banker", "must"), [(2, Step.DRAW), (3, Step.STAND)])
def test_seed_001_punter_draws_an_eight(banker: int, must: Step) -> None:
    """001: "Le Ponte a X, il tire 8. Le banquier a 2, il doit tirer; le banquier a 3, il doit
    rester. Voilà pourquoi le tableau est important: à un point près la décision est
    radicalement opposée." """
    coup = Coup.start(TableSettings.default(Variant.CHEMIN_DE_FER))
    deal_two(coup, {Side.PUNTER: hand(1, 0), Side.BANKER: hand(banker, 0, suit="h")})
    coup.draw(Side.PUNTER)
    coup.deal(card("8c"))
    assert coup.legal_steps() == forced(must, Side.BANKER)
    refused = Step.STAND if must is Step.DRAW else Step.DRAW
    before = snapshot(coup)
    with pytest.raises(RuleViolation) as error:
        attempt(coup, refused, Side.BANKER)()
    assert error.value.rule == f"banker-{refused.value}-forbidden"
    assert snapshot(coup) == before


@pytest.mark.parametrize(("banker", "must"), [(6, Step.STAND), (5, Step.DRAW)])
def test_seed_001_punter_stands(banker: int, must: Step) -> None:
    """001: "Le Ponte reste 6 ou 7 peut-être 5: le Banquier a 6, il reste; a 5, il tire"."""
    for punter in (6, 7, 5):
        coup = Coup.start(TableSettings.default(Variant.CHEMIN_DE_FER))
        deal_two(coup, {Side.PUNTER: hand(punter, 0), Side.BANKER: hand(banker, 0, suit="h")})
        coup.stand(Side.PUNTER)
        assert coup.legal_steps() == forced(must, Side.BANKER)


def seed_000_coup(banker: list[Card], right: list[Card], left: list[Card]) -> Coup:
    """An à deux tableaux coup where every hand stands on its two cards."""
    coup = Coup.start(TableSettings.default(Variant.DEUX_TABLEAUX))
    deal_two(coup, {Side.RIGHT: right, Side.LEFT: left, Side.BANKER: banker})
    while coup.to_act() is not None:
        side = coup.to_act()
        assert side is not None
        coup.stand(side)
    return coup


@pytest.mark.parametrize(
    ("right", "left", "expected"),
    [
        # "le banquier se trouve avoir 6, l'un des pontes 5, l'autre 7: le banquier gagne avec
        # le premier ponte, et perd avec le second."
        (5, 7, {Side.RIGHT: Outcome.BANKER, Side.LEFT: Outcome.PUNTER}),
        # "Si l'un et l'autre ponte avaient 8 et 7, le banquier n'ayant que 6, celui-ci
        # payerait tout le monde" (the 8 a natural, turned over at once).
        (8, 7, {Side.RIGHT: Outcome.PUNTER, Side.LEFT: Outcome.PUNTER}),
        # "mais s'ils n'avaient que 5, le banquier prendrait la totalité de l'argent engagé"
        (5, 5, {Side.RIGHT: Outcome.BANKER, Side.LEFT: Outcome.BANKER}),
        # "Si les pontes avaient 6, le banquier ayant le même point, il y aura égalité partout"
        (6, 6, {Side.RIGHT: Outcome.TIE, Side.LEFT: Outcome.TIE}),
    ],
)
def test_seed_000_banker_on_six(right: int, left: int, expected: dict[Side, Outcome]) -> None:
    coup = seed_000_coup(hand(6, 0, suit="d"), hand(right, 0), hand(left, 0, suit="h"))
    assert coup.settle() == expected


def test_seed_000_banker_six_against_a_three_card_eight() -> None:
    """The same "8 et 7" when the right tableau reaches 8 with a third card."""
    coup = Coup.start(TableSettings.default(Variant.DEUX_TABLEAUX))
    deal_two(coup, {Side.RIGHT: hand(2, 0), Side.LEFT: hand(7, 0, suit="h"),
                    Side.BANKER: hand(6, 0, suit="d")})
    assert coup.legal_steps() == forced(Step.DRAW, Side.RIGHT)  # 0-4 must draw
    coup.draw(Side.RIGHT)
    coup.deal(card("6c"))
    assert coup.legal_steps() == forced(Step.STAND, Side.LEFT)  # never draws on 6-7
    coup.stand(Side.LEFT)
    assert {s.step for s in coup.legal_steps()} == {Step.DRAW, Step.STAND}  # free banker
    coup.stand(Side.BANKER)
    assert coup.settle() == {Side.RIGHT: Outcome.PUNTER, Side.LEFT: Outcome.PUNTER}


@pytest.mark.parametrize(
    ("banker", "right", "left", "expected"),
    [
        # "Si le banquier a 9 et que les pontes n'aient pas un point semblable, il ramasse tout"
        ((9, 0), (8, 0), (5, 0), {Side.RIGHT: Outcome.BANKER, Side.LEFT: Outcome.BANKER}),
        # "S'il n'a que 8, il gagne, à moins que les pontes n'abattent 9; s'ils abattent 8,
        # il n'y a rien de fait."
        ((8, 0), (9, 0), (8, 0), {Side.RIGHT: Outcome.PUNTER, Side.LEFT: Outcome.TIE}),
    ],
)
def test_seed_000_banker_natural_ends_the_coup(
    banker: tuple[int, int], right: tuple[int, int], left: tuple[int, int],
    expected: dict[Side, Outcome],
) -> None:
    coup = Coup.start(TableSettings.default(Variant.DEUX_TABLEAUX))
    deal_two(coup, {Side.RIGHT: hand(*right), Side.LEFT: hand(*left, suit="h"),
                    Side.BANKER: hand(*banker, suit="d")})
    assert coup.legal_steps() == [LegalStep(Step.SETTLE, forced=True)]
    assert coup.settle() == expected


def test_seed_000_each_tableau_is_independent() -> None:
    """000: "Je suis à gauche; j'abats 9, le banquier me payera à moins qu'il n'abatte
    également 9 ... Je n'ai pas à m'occuper de l'autre tableau." The left natural is decided
    against the banker's two cards, even if his third card later makes 9."""
    coup = Coup.start(TableSettings.default(Variant.DEUX_TABLEAUX))
    deal_two(coup, {Side.RIGHT: hand(3, 0), Side.LEFT: hand(9, 0, suit="h"),
                    Side.BANKER: hand(5, 0, suit="d")})
    assert coup.naturals == [Side.LEFT]
    assert coup.in_play() == [Side.RIGHT]
    coup.draw(Side.RIGHT)
    coup.deal(card("Tc"))
    coup.draw(Side.BANKER)
    coup.deal(card("4c"))  # the banker makes 9
    assert point(coup.hands[Side.BANKER]) == 9
    assert coup.settle() == {Side.RIGHT: Outcome.BANKER, Side.LEFT: Outcome.PUNTER}


@pytest.mark.parametrize(
    ("punter", "banker", "expected"),
    [
        ((9, 0), (4, 0), Outcome.PUNTER),  # Ponte turns over: the best hand wins
        ((4, 0), (8, 0), Outcome.BANKER),  # Banque turns over even before the Ponte draws
        ((8, 0), (8, 0), Outcome.TIE),  # both keep their stakes
    ],
)
def test_seed_003_naturals(
    punter: tuple[int, int], banker: tuple[int, int], expected: Outcome
) -> None:
    coup = Coup.start(TableSettings.default(Variant.SIMPLIFIED))
    deal_two(coup, {Side.PUNTER: hand(*punter), Side.BANKER: hand(*banker, suit="h")})
    assert coup.legal_steps() == [LegalStep(Step.SETTLE, forced=True)]
    assert coup.settle() == {Side.PUNTER: expected}


def test_seed_003_five_is_a_choice_for_both() -> None:
    coup = Coup.start(TableSettings.default(Variant.SIMPLIFIED))
    deal_two(coup, {Side.PUNTER: hand(5, 0), Side.BANKER: hand(5, 0, suit="h")})
    assert {s.step for s in coup.legal_steps()} == {Step.DRAW, Step.STAND}
    coup.draw(Side.PUNTER)
    coup.deal(card("3c"))
    assert {s.step for s in coup.legal_steps()} == {Step.DRAW, Step.STAND}
    coup.stand(Side.BANKER)
    assert coup.settle() == {Side.PUNTER: Outcome.PUNTER}


def test_seed_003_two_card_eight_beats_three_card_eight() -> None:
    """003: "un 8 en deux cartes l'emporte sur un 8 en trois cartes, idem pour le 9"."""
    for eight in (8, 9):
        natural, three = hand(eight, 0), hand(eight, 0, 0, suit="h")
        assert compare(natural, three, natural_beats_three=True) is Outcome.PUNTER
        assert compare(three, natural, natural_beats_three=True) is Outcome.BANKER
        assert compare(natural, three, natural_beats_three=False) is Outcome.TIE


def test_punto_banco_has_no_decision() -> None:
    """004: every move is fixed; the player draws on 0-5, the banker by the table."""
    coup = Coup.start(TableSettings.default(Variant.PUNTO_BANCO))
    deal_two(coup, {Side.PUNTER: hand(5, 0), Side.BANKER: hand(3, 0, suit="h")})
    assert coup.legal_steps() == forced(Step.DRAW, Side.PUNTER)
    coup.draw(Side.PUNTER)
    coup.deal(card("8c"))
    assert coup.legal_steps() == forced(Step.STAND, Side.BANKER)  # 3 stands against an 8
    coup.stand(Side.BANKER)
    assert coup.settle() == {Side.PUNTER: Outcome.TIE}  # 5 + 8 makes 3, against 3
