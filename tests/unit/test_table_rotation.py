"""The table's state machine: rotation (who holds the bank and the hand) and the end of the
taille (the seed wanted, the burned cards, the cut card).

Scripted coups deal chosen cards from a physical shoe (`tests.unit.play.physical_table`); the
property tests play from random seeds with `tests.unit.play.Driver`. Whole tailles and refused
steps are in `test_table_state.py`; what both share, in `tests.unit.table_scripts`.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import RuleViolation
from domain.game.cards import value
from domain.game.coup import Outcome
from domain.game.settings import Variant
from domain.game.shoe import shoe_order
from domain.table.state import CROUPIER, Action, Phase, TableState
from tests.unit.play import Driver, Stalled, physical_table, play_coup
from tests.unit.table_scripts import (
    BANKER_WINS,
    PUNTERS_WIN,
    TIE,
    VARIANTS,
    L,
    P,
    R,
    check_refused,
    chemin_de_fer,
    refusals,
)

# --- rotation -------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 8))
def test_chemin_de_fer_shoe_passes_when_the_punters_win(seed: int, players: int) -> None:
    """000: "Aussitôt que le banquier perd un coup, la main passe, quand bien même il lui
    resterait une somme plus ou moins considérable en banque"; a winning banker keeps the
    shoe with the bank grown by his winnings, less the cagnotte; a tie changes nothing."""
    driver = Driver(Variant.CHEMIN_DE_FER, seed, players=players, banco_rate=0.1)
    state = driver.state
    try:
        while state.taille < 2:
            if state.phase is not Phase.BETTING:
                driver.step()
                continue
            banker, bank = state.banker, state.bank
            assert banker is not None
            chips = state.seat_of(banker).chips
            record = driver.coup()
            outcome, net = record.outcomes[P], record.settlement.banker_net
            if outcome is Outcome.PUNTER:
                following = [p for p in state.rotation_after(banker) if p != banker]
                assert state.banker is None and state.bank == 0
                assert state.bank_offered_to == following[0]
                assert state.seat_of(banker).chips == chips + bank + net
            else:
                assert record.covered is not None
                assert (state.banker, state.bank) == (banker, bank + net)
                assert net == (0 if outcome is Outcome.TIE else
                               record.covered.engaged_on(P) - record.settlement.commission)
    except Stalled:
        pass
    assert driver.records


def test_chemin_de_fer_passed_hand_returns_to_the_player_who_would_have_had_it() -> None:
    """000: whoever takes a passed hand "doit mettre au jeu une somme égale à celle que retire
    le banquier qui s'en va"; and "aussitôt que celui qui l'a prise a perdu un coup, elle
    reste au joueur qui aurait dû l'avoir"."""
    state = chemin_de_fer()
    state.place_stake("p1", P, 100)
    play_coup(state, BANKER_WINS)
    assert (state.banker, state.bank) == ("p0", 195)
    state.retire_bank("p0")
    assert state.seat_of("p0").chips == 1095
    assert state.phase is Phase.NO_BANK
    assert (state.bank_offered_to, state.bank_required) == ("p1", 195)
    check_refused(state, ("less", lambda: state.award_bank("p1", 194), RuleViolation,
                          "bank-too-small"))
    state.decline_bank("p1")
    assert state.bank_offered_to == "p2"
    state.award_bank("p2", 195)
    state.place_stake("p3", P, 50)
    play_coup(state, BANKER_WINS)
    assert state.banker == "p2"  # the taker keeps it while winning
    state.place_stake("p3", P, 50)
    play_coup(state, PUNTERS_WIN)
    assert state.banker is None
    assert state.bank_offered_to == "p1"  # not p3, next after p2 in rotation
    state.award_bank("p1", 100)
    state.place_stake("p2", P, 50)
    play_coup(state, PUNTERS_WIN)
    assert state.bank_offered_to == "p2"  # and then the rotation resumes


def test_chemin_de_fer_passed_hand_taken_by_the_next_player_rotates_normally() -> None:
    state = chemin_de_fer()
    state.retire_bank("p0")
    state.award_bank("p1", 100)
    state.place_stake("p3", P, 50)
    play_coup(state, PUNTERS_WIN)
    assert state.bank_offered_to == "p2"


def test_chemin_de_fer_tie_keeps_the_shoe() -> None:
    state = chemin_de_fer()
    state.place_stake("p1", P, 60)
    play_coup(state, TIE)
    assert (state.banker, state.bank, state.seat_of("p1").chips) == ("p0", 100, 1000)


def deux_tableaux() -> TableState:
    players = {"b": 1000, "r1": 1000, "l1": 1000, "r2": 1000, "l2": 1000, "r3": 1000}
    sides = {"b": R, "r1": R, "l1": L, "r2": R, "l2": L, "r3": R}
    state = physical_table("deux-tableaux", players, sides=sides, decks=8)
    state.award_bank("b", 200)
    return state


def stake_everyone(state: TableState) -> None:
    for player in ("r1", "r2", "r3"):
        state.place_stake(player, R, 10)
    for player in ("l1", "l2"):
        state.place_stake(player, L, 10)


# Deal order right, left, banker, twice; naturals only, so nobody draws.
RIGHT_LOSES_LEFT_WINS = ["2s", "9h", "8d", "3s", "Th", "Td"]  # right 5, left 9, banker 8
BOTH_LOSE = ["2s", "2h", "9d", "3s", "3h", "Td"]  # 5 and 5 against 9


def test_deux_tableaux_losing_hand_holder_passes_the_hand_on_his_side() -> None:
    """000: "Si le ponte de droite a gagné, il garde la main, s'il a perdu, il perd ... la
    main, c'est-à-dire que le droit ... passe au ponte suivant"; the hand holder is paid
    first, and "le ponte le plus rapproché du banquier qui était le premier est maintenant le
    dernier si le deuxième ponte du tableau a la main"."""
    state = deux_tableaux()
    assert state.hand_holders == {R: "r1", L: "l1"}
    stake_everyone(state)
    assert play_coup(state, RIGHT_LOSES_LEFT_WINS) == {R: Outcome.BANKER, L: Outcome.PUNTER}
    assert state.hand_holders == {R: "r2", L: "l1"}
    stake_everyone(state)
    play_coup(state, BOTH_LOSE, pay=False)
    assert state.covered is not None
    assert state.covered.hand_holders == {R: "r2", L: "l1"}
    assert state.settlement is not None
    # right and left alternately, each side from its hand holder outward (000)
    assert [p.player for p in state.settlement.payouts] == ["r2", "l1", "r3", "l2", "r1"]
    for payout in state.settlement.payouts:
        state.pay(payout)
    state.close_coup()
    assert state.hand_holders == {R: "r3", L: "l2"}


def test_deux_tableaux_a_banco_leaves_the_tableaux_hands_alone() -> None:
    """000: after the bancos "chaque tableau reprend son droit": a banco by a left punter,
    lost, does not take the right tableau's hand from the punter who holds it."""
    state = deux_tableaux()
    stake_everyone(state)
    play_coup(state, RIGHT_LOSES_LEFT_WINS)
    assert state.hand_holders == {R: "r2", L: "l1"}
    state.call_banco("l2")
    assert play_coup(state, BOTH_LOSE) == {R: Outcome.BANKER, L: Outcome.BANKER}
    stake_everyone(state)
    state.close_betting()
    assert state.covered is not None
    assert state.covered.hand_holders[R] == "r2"


def test_deux_tableaux_banker_keeps_the_bank_until_broken_or_the_taille_ends() -> None:
    state = deux_tableaux()
    state.place_stake("r1", R, 200)
    state.place_stake("l1", L, 200)
    play_coup(state, ["9s", "9h", "2d", "Ts", "Th", "3d"])  # both tableaux win: bank broken
    assert (state.banker, state.bank, state.phase) == (None, 0, Phase.NO_BANK)
    assert state.seat_of("b").chips == 800


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 8))
def test_family_game_loser_gives_up_the_seat(seed: int, players: int) -> None:
    """003: "S'il a perdu, le joueur de la Banque passe sa place à un autre joueur; de même si
    c'est le Ponte qui a perdu"; on a tie both stay."""
    driver = Driver(Variant.SIMPLIFIED, seed, players=players)
    records = driver.taille()
    duels = [record.duel for record in records] + [tuple(driver.state.duel)]
    for record, after in zip(records, duels[1:], strict=True):
        banque, ponte = record.duel
        outcome = record.outcomes[P]
        if outcome is Outcome.TIE or players == 2:
            assert after == (banque, ponte)
            continue
        place = 1 if outcome is Outcome.BANKER else 0
        assert after[1 - place] == record.duel[1 - place]  # the winner keeps the place
        assert after[place] != record.duel[place]  # the loser gives it up
        assert after[place] not in record.duel


# --- the end of the taille ------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_taille_ends_and_the_table_wants_the_seed(variant: Variant, seed: int) -> None:
    """When the taille is over the table wants the seed revealed, and the revealed seed
    recomputes every card burned and dealt."""
    driver = Driver(variant, seed)
    records = driver.taille()
    state = driver.state
    assert state.phase is Phase.TAILLE_OVER
    assert state.legal_actions() == [Action("reveal-seed", CROUPIER, forced=True)]
    assert state.shoe is not None and records[-1].end == state.shoe.position
    cards = shoe_order(state.shoe.public(), driver.seeds[-1])
    assert state.shoe.burned + state.shoe.dealt == cards[: state.shoe.position]
    cut_card = state.shoe.cut_card_at
    if cut_card is None:  # 002: the taille lasts until the cards run out
        assert state.shoe.remaining < state.cards_per_coup()
    else:
        assert records[-1].end > cut_card
    for refusal in refusals(state):
        check_refused(state, refusal)
    moves = [(driver.step(), driver.state.phase, driver.state.taille) for _ in range(2)]
    assert moves == [("reveal-seed", Phase.NO_SHOE, 1), ("shuffle", Phase.SHUFFLED, 2)]


@pytest.mark.parametrize("variant", VARIANTS)
def test_burned_cards(variant: Variant) -> None:
    """Punto banco turns the first card and burns that many more, 10 for a bûche; the others
    burn nothing by default, but chemin de fer (tested apart)."""
    for seed in range(6):
        driver = Driver(variant, seed)
        while driver.state.phase in (Phase.NO_SHOE, Phase.SHUFFLED, Phase.BURNING):
            driver.step()
        shoe = driver.state.shoe
        assert shoe is not None and not shoe.dealt
        if variant is Variant.PUNTO_BANCO:
            assert len(shoe.burned) == 1 + (value(shoe.burned[0]) or 10)
        elif variant is not Variant.CHEMIN_DE_FER:
            assert shoe.burned == []
