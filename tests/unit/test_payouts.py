"""Settlement in chips: punto banco's house bets (004), the family game's payouts (003), a
player's bank with the cagnotte (000, 001), and chip conservation for any input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.coup import Outcome, Side
from domain.game.coverage import Stake
from domain.game.payouts import (
    BOX_UNITS,
    Bet,
    Payout,
    Settlement,
    Spot,
    against_bank,
    commission_on,
    duel,
    house_bets,
)
from domain.game.settings import TableSettings, Variant
from tests.unit.play import physical_table, play_coup

PUNTO_BANCO = TableSettings.default(Variant.PUNTO_BANCO)
FAMILY = TableSettings.default(Variant.SIMPLIFIED)
CHEMIN_DE_FER = TableSettings.default(Variant.CHEMIN_DE_FER)
DEUX_TABLEAUX = TableSettings.default(Variant.DEUX_TABLEAUX)

BETS = [Bet("a", Spot.PUNTER, 100), Bet("b", Spot.BANKER, 100), Bet("c", Spot.TIE, 10)]


def nets(settlement: Settlement) -> dict[str, int]:
    return {p.player: p.net for p in settlement.payouts}


# --- punto banco (004) --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (Outcome.PUNTER, {"a": 100, "b": -100, "c": -10}),  # Player pays 1:1
        (Outcome.BANKER, {"a": -100, "b": 95, "c": -10}),  # Banker 1:1 less 5%
        (Outcome.TIE, {"a": 0, "b": 0, "c": 80}),  # Tie pays 8:1; Player and Banker push
    ],
)
def test_punto_banco_pays(outcome: Outcome, expected: dict[str, int]) -> None:
    settlement = house_bets(PUNTO_BANCO, outcome, BETS)
    assert nets(settlement) == expected
    assert settlement.house_net == -sum(expected.values())
    assert settlement.banker_net == 0
    assert settlement.commission == (5 if outcome is Outcome.BANKER else 0)


@pytest.mark.parametrize(
    ("amount", "percent", "commission", "box"),
    [(100, 5, 5, 0), (30, 5, 2, 5_000), (19, 5, 1, 500), (20, 5, 1, 0), (39, 5, 2, 500),
     (100, 4, 4, 0), (49, 4, 2, 400), (24, 4, 1, 400), (1, 5, 1, 9_500), (100, 0, 0, 0)],
)
def test_banker_commission_is_never_rounded_away(amount: int, percent: int, commission: int,
                                                 box: int) -> None:
    """A winning Banker bet of 1 to 19 chips pays a commission too: the house takes whole
    chips, rounded up, and keeps the change in the player's box (ten-thousandths of a
    chip) against his next commission."""
    table = TableSettings.default(Variant.PUNTO_BANCO, commission_percent=percent)
    settlement = house_bets(table, Outcome.BANKER, [Bet("b", Spot.BANKER, amount)])
    assert settlement.payouts == (
        Payout("b", amount, amount - commission, commission, "bet on banker"),
    )
    assert settlement.commission == commission
    assert (commission - 1) * 100 < amount * percent <= commission * 100
    assert settlement.boxes.get("b", 0) == box
    assert commission * BOX_UNITS == amount * percent * 100 + box


def test_the_box_pays_the_next_commission_first() -> None:
    """Two Banker wins of 10 chips at 5%: 1 chip on the first (0.5 owed, 0.5 kept in the box),
    nothing on the second (the box pays its 0.5): 1 chip in all, 5% of 20 exactly."""
    bet = [Bet("b", Spot.BANKER, 10)]
    first = house_bets(PUNTO_BANCO, Outcome.BANKER, bet)
    second = house_bets(PUNTO_BANCO, Outcome.BANKER, bet, first.boxes)
    assert (first.commission, first.boxes) == (1, {"b": 5_000})
    assert (second.commission, second.boxes) == (0, {"b": 0})
    assert nets(second) == {"b": 10}


def test_tie_odds_setting() -> None:
    table = TableSettings.default(Variant.PUNTO_BANCO, tie_pays=9)
    assert nets(house_bets(table, Outcome.TIE, [Bet("c", Spot.TIE, 10)])) == {"c": 90}


# --- the family game (003) ----------------------------------------------------------------

FAMILY_BETS = [Bet("x", Spot.BANKER, 10), Bet("y", Spot.PUNTER, 20), Bet("z", Spot.TIE, 5)]


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        # "si la Banque gagne: il paye 1 fois la mise de ceux ayant parié sur Banque et
        # ramasse les mises Ponte et Égalité"
        (Outcome.BANKER, {"x": 10, "y": -20, "z": -5}),
        # "si le Ponte gagne: ... le reverse"
        (Outcome.PUNTER, {"x": -10, "y": 20, "z": -5}),
        # "s'il y a égalité: il paye 5 fois la mise de ceux ayant parié sur Égalité et ramasse
        # les mises Ponte et Banque"
        (Outcome.TIE, {"x": -10, "y": -20, "z": 25}),
    ],
)
def test_family_game_bets(outcome: Outcome, expected: dict[str, int]) -> None:
    settlement = house_bets(FAMILY, outcome, FAMILY_BETS)
    assert nets(settlement) == expected
    assert settlement.commission == 0
    assert settlement.house_net == -sum(expected.values())


@pytest.mark.parametrize(
    ("outcome", "banque", "ponte"),
    [(Outcome.BANKER, 10, -10), (Outcome.PUNTER, -10, 10), (Outcome.TIE, 0, 0)],
)
def test_family_game_duel(outcome: Outcome, banque: int, ponte: int) -> None:
    """003: "Le gagnant remporte la mise de l'autre. S'il y a égalité, le Ponte et la Banque
    conservent leurs mises." """
    settlement = duel(outcome, "banque", "ponte", 10)
    assert nets(settlement) == {"banque": banque, "ponte": ponte}
    assert (settlement.banker_net, settlement.house_net) == (0, 0)


def test_family_game_payouts_through_the_table() -> None:
    """A whole coup at a family-game table: the duel and the side bets, chips conserved."""
    state = physical_table("simplified", {"banque": 100, "ponte": 100, "x": 100, "y": 100})
    assert state.duel == ["banque", "ponte"]
    state.place_bet("x", Spot.BANKER, 10)
    state.place_bet("y", Spot.TIE, 10)
    # Ponte 2 + T = 2 draws a 3 (5); Banque 4 + T = 4 draws a 2 (6): Banque wins.
    outcomes = play_coup(state, ["2s", "4h", "Ts", "Th", "3c", "2c"])
    assert outcomes == {Side.PUNTER: Outcome.BANKER}
    chips = {s.player: s.chips for s in state.seats}
    assert chips == {"banque": 110, "ponte": 90, "x": 110, "y": 90}
    assert state.house_result == 0
    assert state.duel == ["banque", "x"]  # the loser gives up the seat


# --- against a player's bank (000, 001) ---------------------------------------------------

STAKES = [Stake("a", Side.PUNTER, 60), Stake("b", Side.PUNTER, 40)]


def test_chemin_de_fer_banker_wins_less_the_cagnotte() -> None:
    """001: the bank takes every engaged stake, less the 5% cagnotte on the winnings."""
    settlement = against_bank(CHEMIN_DE_FER, {Side.PUNTER: Outcome.BANKER}, STAKES)
    assert nets(settlement) == {"a": -60, "b": -40}
    assert (settlement.banker_net, settlement.commission, settlement.house_net) == (95, 5, 5)


def test_chemin_de_fer_punters_win_out_of_the_bank() -> None:
    settlement = against_bank(CHEMIN_DE_FER, {Side.PUNTER: Outcome.PUNTER}, STAKES)
    assert nets(settlement) == {"a": 60, "b": 40}
    assert (settlement.banker_net, settlement.commission, settlement.house_net) == (-100, 0, 0)


def test_chemin_de_fer_tie_moves_nothing() -> None:
    """001: "si les deux points sont identiques il y a égalité, on refait le coup"."""
    settlement = against_bank(CHEMIN_DE_FER, {Side.PUNTER: Outcome.TIE}, STAKES)
    assert nets(settlement) == {"a": 0, "b": 0}
    assert (settlement.banker_net, settlement.commission, settlement.house_net) == (0, 0, 0)


def test_seed_000_banker_wins_one_tableau_and_loses_the_other() -> None:
    """000: banker on 6, right 5, left 7: the banker takes the right, pays the left; each
    tableau settles on its own, in pay order."""
    stakes = [Stake("r1", Side.RIGHT, 30), Stake("r2", Side.RIGHT, 20),
              Stake("l1", Side.LEFT, 25)]
    outcomes = {Side.RIGHT: Outcome.BANKER, Side.LEFT: Outcome.PUNTER}
    settlement = against_bank(DEUX_TABLEAUX, outcomes, stakes)
    assert [(p.player, p.net) for p in settlement.payouts] == [("r1", -30), ("r2", -20),
                                                               ("l1", 25)]
    assert (settlement.banker_net, settlement.house_net) == (25, 0)


def test_cagnotte_is_on_the_net_winnings_of_the_coup() -> None:
    table = TableSettings.default(Variant.DEUX_TABLEAUX, commission_percent=5)
    stakes = [Stake("r1", Side.RIGHT, 100), Stake("l1", Side.LEFT, 40)]
    outcomes = {Side.RIGHT: Outcome.BANKER, Side.LEFT: Outcome.PUNTER}
    settlement = against_bank(table, outcomes, stakes)
    assert (settlement.banker_net, settlement.commission) == (57, 3)  # 5% of 60, whole chips
    losing = against_bank(table, {Side.RIGHT: Outcome.PUNTER, Side.LEFT: Outcome.BANKER},
                          stakes)
    assert (losing.banker_net, losing.commission) == (-60, 0)  # no cagnotte on a loss


# --- conservation for any input -----------------------------------------------------------

outcomes = st.sampled_from(Outcome)
house_tables = st.builds(
    lambda variant, percent, tie, push: TableSettings.default(
        variant, commission_percent=percent, tie_pays=tie, push_on_tie=push),
    st.sampled_from([Variant.PUNTO_BANCO, Variant.SIMPLIFIED]), st.integers(0, 25),
    st.integers(0, 10), st.booleans(),
)
bets = st.lists(st.builds(Bet, st.sampled_from("abcde"), st.sampled_from(Spot),
                          st.integers(1, 10_000)), max_size=10)
stakes = st.lists(st.builds(Stake, st.sampled_from("abcde"),
                            st.sampled_from([Side.RIGHT, Side.LEFT]), st.integers(1, 10_000)),
                  max_size=10)


@settings(max_examples=100, deadline=None)
@given(table=house_tables, outcome=outcomes, placed=bets)
def test_house_bets_conserve_chips(table: TableSettings, outcome: Outcome,
                                   placed: list[Bet]) -> None:
    settlement = house_bets(table, outcome, placed)
    assert settlement.check() is settlement
    assert [p.staked for p in settlement.payouts] == [b.amount for b in placed]
    for bet, payout in zip(placed, settlement.payouts, strict=True):
        assert payout.net >= -bet.amount  # nobody loses more than the stake
        # rounded up, never more than a chip over the rate
        assert 0 <= payout.commission <= -(-payout.staked * table.commission_percent // 100)
    assert settlement.commission == sum(p.commission for p in settlement.payouts)


@settings(max_examples=100, deadline=None)
@given(percent=st.integers(0, 25), right=outcomes, left=outcomes, engaged=stakes)
def test_against_bank_conserves_chips(percent: int, right: Outcome, left: Outcome,
                                      engaged: list[Stake]) -> None:
    table = TableSettings.default(Variant.DEUX_TABLEAUX, commission_percent=percent)
    settlement = against_bank(table, {Side.RIGHT: right, Side.LEFT: left}, engaged)
    assert settlement.check() is settlement
    assert all(abs(p.net) in (0, p.staked) for p in settlement.payouts)
    winnings = -sum(p.net for p in settlement.payouts)
    assert settlement.commission == commission_on(winnings, percent * 100)[0]
    assert settlement.house_net == settlement.commission
    assert settlement.banker_net == winnings - settlement.commission


@settings(max_examples=50, deadline=None)
@given(outcome=outcomes, stake=st.integers(0, 10_000))
def test_duel_conserves_chips(outcome: Outcome, stake: int) -> None:
    settlement = duel(outcome, "banque", "ponte", stake)
    assert settlement.check() is settlement
    assert sum(p.net for p in settlement.payouts) == 0


def test_check_refuses_a_settlement_that_loses_a_chip() -> None:
    with pytest.raises(AssertionError, match="chips not conserved"):
        Settlement((Payout("a", 10, 10),), banker_net=-9, commission=0, house_net=0).check()
