"""Baccara à deux tableaux as 000 and 002 write it, where the engine once departed from them.

Each test quotes the sentence it checks and plays it through `TableState`: the croupier's,
the banker's and the punters' own steps, with the cards of a physical shoe chosen for the case.
"""

from __future__ import annotations

import pytest

from domain.errors import OutOfTurn, RuleViolation
from domain.game.cards import card
from domain.game.coup import Outcome, Side
from domain.table.state import Phase, TableState
from tests.unit.play import physical_table, play_coup

R, L = Side.RIGHT, Side.LEFT
# Deal order right, left, banker, twice; naturals only, so nobody draws.
BOTH_LOSE = ["2s", "2h", "9d", "3s", "3h", "Td"]  # 5 and 5 against the banker's 9
BOTH_WIN = ["9s", "9h", "2d", "Ts", "Th", "3d"]  # 9 and 9 against 5


def table(bank: int = 200) -> TableState:
    players = {"b": 5000, "r1": 5000, "l1": 5000, "r2": 5000, "l2": 5000, "s": 5000}
    sides = {"b": R, "r1": R, "l1": L, "r2": R, "l2": L}
    state = physical_table("deux-tableaux", players, sides=sides, standing={"s"}, decks=8)
    state.award_bank("b", bank)
    return state


def refused(state: TableState, player: str) -> str:
    with pytest.raises(RuleViolation) as error:
        state.call_banco(player)
    return error.value.rule


# --- "Après le second banco, chaque tableau reprend son droit" (000) ---------------------


def test_apres_le_second_banco_chaque_tableau_reprend_son_droit() -> None:
    """000: "si la banque gagne ... le ponte perdant a encore le droit de faire un nouveau
    banco; et, à son défaut, tout autre ponte ... Après le second banco, chaque tableau
    reprend son droit, et il n'est plus permis à un seul joueur de faire le banco": two
    bancos on a bank at most, ordinary coups between them or not."""
    state = table()
    state.call_banco("l2")
    assert play_coup(state, BOTH_LOSE) == {R: Outcome.BANKER, L: Outcome.BANKER}
    state.call_banco("r1")  # failing the loser, any other punter
    play_coup(state, BOTH_LOSE)
    assert state.bank == 800
    assert refused(state, "l2") == "banco-third"
    state.place_stake("r1", R, 10)
    play_coup(state, BOTH_LOSE)  # an ordinary coup does not give the banco back
    assert refused(state, "r2") == "banco-third"


def test_a_new_bank_starts_with_the_banco_restored() -> None:
    """000: the right lapses for "le banco" of that bank: a bank broken and given afresh
    can be bancoed again."""
    state = table()
    for _ in range(2):
        state.call_banco("l2")
        play_coup(state, BOTH_LOSE)
    state.place_stake("r1", R, 400)
    state.place_stake("l1", L, 400)
    assert play_coup(state, BOTH_WIN) == {R: Outcome.PUNTER, L: Outcome.PUNTER}
    assert (state.banker, state.phase) == (None, Phase.NO_BANK)  # the bank is broken
    state.award_bank("r2", 100)
    state.call_banco("l1")
    state.close_betting()
    assert state.covered is not None and state.covered.banco == "l1"


# --- "on commence toujours par couvrir les pontes à droite et à gauche" (000) ------------


def test_on_commence_par_couvrir_les_pontes_a_droite_et_a_gauche() -> None:
    """000: "on commence toujours par couvrir les pontes à droite et à gauche, en commençant
    par celui qui est assis le plus près du banquier"; a punter seated on one side staking
    on the other "n'est payé qu'après les pontes assis du côté de ce tableau; mais il est
    payé avant les pontes debout qui sont toujours payés les derniers"."""
    state = table()
    for player, tableau in (("s", L), ("s", R), ("l1", R), ("l2", L), ("r2", R), ("l1", L),
                            ("r1", R)):
        state.place_stake(player, tableau, 10)
    play_coup(state, BOTH_WIN, pay=False)
    assert state.settlement is not None
    paid = [(p.player, p.reason) for p in state.settlement.payouts]
    assert paid == [("r1", "stake on right"), ("l1", "stake on left"),
                    ("r2", "stake on right"), ("l2", "stake on left"),
                    ("l1", "stake on right"),
                    ("s", "stake on right"), ("s", "stake on left")]


def test_a_short_bank_is_halved_and_each_half_covered_alternately() -> None:
    """000: "la banque sera partagée en deux parties égales" and "le banquier payera le
    premier joueur de droite et ensuite le premier joueur de gauche"."""
    state = table(bank=60)
    for player, tableau in (("r1", R), ("r2", R), ("l1", L), ("l2", L)):
        state.place_stake(player, tableau, 20)
    state.close_betting()
    assert state.covered is not None
    assert [(s.player, s.amount) for s in state.covered.engaged] == [
        ("r1", 20), ("l1", 20), ("r2", 10), ("l2", 10)]


# --- the banker speaks first: "Je donne", or he shows his cards (002) ----------------------

# Right 3, left 6, banker 5; no natural.
RIGHT_3_LEFT_6_BANKER_5 = ["3s", "6h", "2d", "Ts", "Th", "3d"]


def dealt(state: TableState, cards: list[str]) -> None:
    state.close_betting()
    for code in cards:
        state.deal(card(code))
    state.show_naturals()


def test_le_banquier_a_le_droit_dabattre_son_jeu_du_premier_coup() -> None:
    """002: "Quel que soit son jeu, et à perte ou à gain, le banquier a le droit d'abattre
    son jeu du premier coup": on 5 he shows down, losing to the left's 6, beating the
    right's 3; nobody draws."""
    state = table()
    state.place_stake("r1", R, 10)
    state.place_stake("l1", L, 10)
    outcomes = play_coup(state, RIGHT_3_LEFT_6_BANKER_5, show_down=True)
    assert outcomes == {R: Outcome.BANKER, L: Outcome.PUNTER}
    assert state.seat_of("r1").chips == 4990 and state.seat_of("l1").chips == 5010


def test_les_pontes_ne_peuvent_tirer_une_carte_que_sur_loffre_du_banquier() -> None:
    """002: "Les pontes ne peuvent tirer une carte que sur l'offre du banquier", who says
    "Je donne"; only the banker may say it."""
    state = table()
    state.place_stake("r1", R, 10)
    state.place_stake("l1", L, 10)
    dealt(state, RIGHT_3_LEFT_6_BANKER_5)
    assert [(a.step, a.actor) for a in state.legal_actions()] == [
        ("offer", "b"), ("show-down", "b")]
    with pytest.raises(RuleViolation) as error:
        state.decide("r1", R, True)
    assert error.value.rule == "no-offer"
    with pytest.raises(OutOfTurn):
        state.offer_card("r1")
    state.offer_card("b")
    state.decide("r1", R, True)  # on 3 the right draws
    assert state.coup is not None and state.coup.awaiting_card is R


def test_a_banker_natural_needs_no_offer() -> None:
    """002: "Si, du premier coup, le banquier a 8 ou 9, il abat son jeu": nothing to offer."""
    state = table()
    state.place_stake("r1", R, 10)
    assert play_coup(state, BOTH_LOSE) == {R: Outcome.BANKER, L: Outcome.BANKER}
