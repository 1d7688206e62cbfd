"""Chemin de fer as 000 and 001 write it, where the engine once departed from them.

Each test quotes the sentence it checks and plays it through `TableState`: the croupier's and
the players' own steps, with the cards of a physical shoe chosen for the case.
"""

from __future__ import annotations

import pytest

from domain.errors import OutOfTurn, RuleViolation
from domain.game.cards import card
from domain.game.coup import Outcome, Side
from domain.table.state import Phase, TableState
from tests.unit.play import physical_table, play_coup

P = Side.PUNTER
# A coup's four cards (punter, banker, punter, banker), decided by naturals.
PUNTERS_WIN = ["9s", "2h", "Ts", "3h"]  # punter 9 against 5
BANKER_WINS = ["2s", "9h", "3s", "Th"]  # banker 9 against 5
TIE = ["9s", "9h", "Ts", "Th"]  # 9 against 9
TIE_ON_SEVEN = ["4s", "3h", "3s", "4h"]  # 7 against 7: both stand, no natural


def table(**overrides: object) -> TableState:
    """p0 banks 100; p1..p3 seated in rotation from the banker's right; `s` stands."""
    players = {"p0": 1000, "p1": 1000, "p2": 1000, "p3": 1000, "s": 1000}
    state = physical_table("chemin-de-fer", players, standing={"s"}, **overrides)
    state.award_bank("p0", 100)
    return state


def engaged(state: TableState) -> list[tuple[str, int]]:
    assert state.covered is not None
    return [(s.player, s.amount) for s in state.covered.engaged]


# --- "Un joueur debout peut faire banco tout seul mais il n'est pas prioritaire" (001) ---


def test_un_joueur_debout_nest_pas_prioritaire_seated_stakes_come_first() -> None:
    """001: "Un joueur debout peut faire banco tout seul mais il n'est pas prioritaire": the
    seated stakes are covered first, in order from the shoe; the standing caller covers only
    what they leave."""
    state = table()
    state.call_banco("s")
    state.place_stake("p2", P, 30)
    state.place_stake("p1", P, 20)
    state.close_betting()
    assert state.covered is not None and state.covered.banco is None
    assert engaged(state) == [("p1", 20), ("p2", 30), ("s", 50)]
    assert state.covered.hand_holders == {P: "s"}  # the largest stake holds the cards (001)
    assert [(s.player, s.amount) for s in state.covered.returned] == []


def test_un_joueur_debout_peut_faire_banco_tout_seul() -> None:
    """001: "Un joueur debout peut faire banco tout seul": with no seated stake, his banco
    covers the whole bank, and any stake of his goes back."""
    state = table()
    state.place_stake("s", P, 10)
    state.call_banco("s")
    state.close_betting()
    assert state.covered is not None and state.covered.banco == "s"
    assert engaged(state) == [("s", 100)]


def test_a_seated_banco_outranks_a_standing_one_even_the_banco_suivi() -> None:
    """001: "Si un joueur veut faire banco tout seul il est prioritaire", and the standing
    player "n'est pas prioritaire": a standing banco suivi yields to a seated caller."""
    state = table()
    state.call_banco("s")
    assert play_coup(state, BANKER_WINS) == {P: Outcome.BANKER}
    assert state.banco_suivi == "s"
    state.call_banco("s")
    state.call_banco("p3")
    state.close_betting()
    assert state.covered is not None and state.covered.banco == "p3"


def test_a_standing_players_banco_beats_the_standing_stakes() -> None:
    """000: "les pontes debout sont toujours les derniers": after the seated stakes, the
    standing caller's banco comes before the other standing stakes."""
    players = {"p0": 1000, "p1": 1000, "s": 1000, "t": 1000}
    state = physical_table("chemin-de-fer", players, standing={"s", "t"})
    state.award_bank("p0", 100)
    state.place_stake("t", P, 80)
    state.place_stake("p1", P, 40)
    state.call_banco("s")
    state.close_betting()
    assert engaged(state) == [("p1", 40), ("s", 60)]
    assert state.covered is not None
    assert [(s.player, s.amount) for s in state.covered.returned] == [("t", 80)]


# --- "on refait le coup en donnant de nouvelles cartes" (001) ----------------------------


def test_on_refait_le_coup_en_donnant_de_nouvelles_cartes() -> None:
    """001: "si les deux points sont identiques il y a égalité, on refait le coup en donnant
    de nouvelles cartes": the stakes stay where they are and the coup is dealt again."""
    state = table()
    state.place_stake("p1", P, 60)
    state.place_stake("p2", P, 40)
    assert play_coup(state, TIE_ON_SEVEN) == {P: Outcome.TIE}
    assert state.phase is Phase.BETTING and state.tie_replay
    assert [(s.player, s.amount) for s in state.stakes] == [("p1", 60), ("p2", 40)]
    assert (state.banker, state.bank) == ("p0", 100)
    for refused in (lambda: state.place_stake("p3", P, 10), lambda: state.call_banco("p3")):
        with pytest.raises(RuleViolation) as error:
            refused()
        assert error.value.rule == "tie-replay"
    assert play_coup(state, PUNTERS_WIN) == {P: Outcome.PUNTER}
    assert (state.seat_of("p1").chips, state.seat_of("p2").chips) == (1060, 1040)
    assert not state.tie_replay and state.stakes == []


def test_egalite_dabattage_le_jeu_reprend_with_the_banco_and_the_banco_suivi() -> None:
    """001: "Si le banquier a le même point d'abattage que le Ponte, il y a égalité, le jeu
    reprend": the same punter, his banco suivi with him, plays again with new cards."""
    state = table()
    state.call_banco("p2")
    assert play_coup(state, BANKER_WINS) == {P: Outcome.BANKER}
    assert (state.banco_suivi, state.bank) == ("p2", 195)
    state.call_banco("p1")
    state.call_banco("p2")  # the banco suivi has priority over p1
    assert play_coup(state, TIE) == {P: Outcome.TIE}
    assert state.banco_suivi == "p2" and state.banco_calls == ["p1", "p2"]
    state.close_betting()
    assert state.covered is not None and state.covered.banco == "p2"
    assert engaged(state) == [("p2", 195)]


def test_a_tie_on_the_last_coup_of_the_taille_returns_the_stakes() -> None:
    """The coup cannot be played again once the shoe is done: the stakes go back."""
    state = table()
    state.place_stake("p1", P, 60)
    assert state.shoe is not None
    state.shoe.last_coup = True
    play_coup(state, TIE)
    assert state.phase is Phase.NO_SHOE and not state.tie_replay
    assert state.stakes == [] and state.seat_of("p1").chips == 1000


# --- "une somme égale à celle que retire le banquier qui s'en va" (000) ------------------


@pytest.mark.parametrize("amount", [194, 196, 500])
def test_celui_qui_prend_la_main_met_une_somme_egale(amount: int) -> None:
    """000: "celui qui prend la main doit mettre au jeu une somme égale à celle que retire le
    banquier qui s'en va, la mise première comprise": exactly that sum, no more, no less."""
    state = table()
    state.place_stake("p1", P, 100)
    play_coup(state, BANKER_WINS)
    state.retire_bank("p0")  # withdraws 195: the first stake of 100 and the 95 won
    assert (state.bank_offered_to, state.bank_required) == ("p1", 195)
    with pytest.raises(RuleViolation) as error:
        state.award_bank("p1", amount)
    assert error.value.rule in ("bank-too-small", "bank-not-equal")
    state.award_bank("p1", 195)
    assert (state.banker, state.bank) == ("p1", 195)


def test_a_punter_leaving_a_tied_coup_takes_his_stake_back() -> None:
    """The tie moved nothing: a punter may leave before the coup is played again (a
    tournament's round ends), his stake going back; the others' stakes stay."""
    state = table()
    state.place_stake("p1", P, 60)
    state.place_stake("p2", P, 40)
    play_coup(state, TIE)
    assert state.leave("p1") == 1000
    assert [(s.player, s.amount) for s in state.stakes] == [("p2", 40)] and state.tie_replay
    state.retire_bank("p0")  # the banker may still retire: the replay is void
    assert state.stakes == [] and not state.tie_replay
    assert state.chips_accounted()


def test_a_punter_moved_away_from_a_tied_coup_takes_his_stake_back() -> None:
    """The same for a tournament's move, whose chips go out before the player leaves: the
    chips taken from a stake that waits for the replay take the stake back (the director
    balancing tables after a tie was refused "chips in play" and the tournament stalled);
    chips in play in a coup being dealt stay."""
    state = table()
    state.place_stake("p1", P, 60)
    state.place_stake("p2", P, 40)
    play_coup(state, TIE)
    state.adjust_chips("p2", -1000)
    assert state.leave("p2") == 0
    assert [(s.player, s.amount) for s in state.stakes] == [("p1", 60)] and state.tie_replay
    state.close_betting()
    with pytest.raises(OutOfTurn) as error:
        state.adjust_chips("p1", -1000)
    assert error.value.rule == "chips-in-play"


# --- "5 Facultatif / au choix" (001), and the house rule that fixes it ---------------------

PUNTER_5_BANKER_6 = ["2s", "3h", "3s", "3d"]  # punter 5, banker 6: no natural


@pytest.mark.parametrize("draw", [True, False])
def test_5_facultatif_au_choix(draw: bool) -> None:
    """001's punter table: "5 Facultatif / au choix": the hand holder may draw or stand."""
    state = table()
    state.place_stake("p1", P, 10)
    state.close_betting()
    for code in PUNTER_5_BANKER_6:
        state.deal(card(code))
    state.show_naturals()
    state.decide("p1", P, draw)
    assert state.coup is not None and state.coup.decided[P].value == ("draw" if draw else "stand")


@pytest.mark.parametrize(("rule", "refused"), [("stand", True), ("draw", False)])
def test_a_house_that_imposes_the_move_on_5(rule: str, refused: bool) -> None:
    """Where a casino fixes the punters' 5 (setting `punter_five`), the other move is refused."""
    state = table(punter_five=rule)
    state.place_stake("p1", P, 10)
    state.close_betting()
    for code in PUNTER_5_BANKER_6:
        state.deal(card(code))
    state.show_naturals()
    with pytest.raises(RuleViolation) as error:
        state.decide("p1", P, refused)
    assert error.value.rule == f"punter-{'draw' if refused else 'stand'}-forbidden"
    state.decide("p1", P, not refused)
