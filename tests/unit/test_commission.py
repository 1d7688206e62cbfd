"""The commission box: a commission is exact for every stake, never rounded away.

Punto banco (004) pays every winning hand 1:1, "Les mains gagnantes sont payées 1:1", and
names no commission: 0% reproduces it, 5% on a winning Banker bet is the house setting.
Chemin de fer (001) takes "les 5% de prélèvement qui tombaient au fond du trou de la
cagnotte" on the bank's winnings. Every coup here is played through `TableState` with the
cards of a physical shoe, as a croupier records them.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil, gcd

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.cards import SUITS
from domain.game.coup import Outcome, Side
from domain.game.odds import Outcome as Bet
from domain.game.odds import exact_odds
from domain.game.payouts import BOX_UNITS, Spot
from domain.table.state import CROUPIER, TableState
from tests.unit.play import CoupRecord, Driver, physical_table, play_coup


def banker_natural(i: int) -> list[str]:
    """Cards for the i-th coup of a shoe that the bank wins with a natural 9 against 5 (the
    punters' 2 and 3 stand no chance to draw): a different suit and bûche each coup."""
    suit, buche = SUITS[i % 4], "TJQK"[(i // 4) % 4]
    return [f"2{suit}", f"9{suit}", f"3{suit}", f"{buche}{suit}"]


def win_on_banker(state: TableState, stakes: list[int]) -> list[int]:
    """Bet each stake on Banker in turn and let Banker win; the commission of each coup."""
    taken = []
    for i, stake in enumerate(stakes):
        if i and i % 30 == 0:  # a new shoe: the box carries over from one taille to the next
            state.end_taille()
            state.shuffle(decks=state.settings.decks, algorithm="", commitment="",
                          physical=True)
            state.cut(CROUPIER, 1)
        state.place_bet("b", Spot.BANKER, stake)
        before = state.commission_total
        assert play_coup(state, banker_natural(i)) == {Side.PUNTER: Outcome.BANKER}
        taken.append(state.commission_total - before)
    return taken


rates = st.sampled_from([500, 400, 200, 125, 0])  # basis points: 5%, 4%, 2%, 1.25%, 004


@settings(max_examples=60, deadline=None)
@given(bp=rates, stakes=st.lists(st.integers(1, 500), min_size=1, max_size=30))
def test_banker_commission_over_any_run_is_within_a_chip_and_never_favours_the_player(
    bp: int, stakes: list[int],
) -> None:
    """After every Banker win, what the player has paid differs from the rate times his
    winnings by less than one chip, and is never less: he has paid ceil(rate x winnings)."""
    state = physical_table("punto-banco", {"b": 1_000_000}, commission_basis_points=bp)
    taken = win_on_banker(state, stakes)
    rate = Fraction(bp, 10_000)
    for n in range(1, len(stakes) + 1):
        exact = rate * sum(stakes[:n])
        paid = sum(taken[:n])
        assert 0 <= paid - exact < 1
        assert paid == ceil(exact)
    assert Fraction(state.commission_box.get("b", 0), BOX_UNITS) == sum(taken) - exact
    assert state.seat_of("b").chips == 1_000_000 + sum(stakes) - sum(taken)
    assert state.chips_accounted()


@settings(max_examples=40, deadline=None)
@given(stake=st.integers(1, 1000), bp=st.sampled_from([500, 400, 125]))
def test_the_banker_bet_costs_the_published_commission_at_every_stake_size(
    stake: int, bp: int,
) -> None:
    """Whatever the stake, a run of Banker wins long enough for the rate to come to whole
    chips pays exactly the rate: the small bet no longer wins the commission back."""
    wins = BOX_UNITS // gcd(stake * bp, BOX_UNITS)
    state = physical_table("punto-banco", {"b": 10 * stake * wins}, commission_basis_points=bp)
    taken = win_on_banker(state, [stake] * wins)
    assert sum(taken) * BOX_UNITS == stake * wins * bp
    assert state.commission_box["b"] == 0


def test_the_banker_bets_expectation_is_the_published_one() -> None:
    """The per-coup commission averages exactly 5% of the stake, so a Banker bet of any size
    is worth stake x (P(banker) x 0.95 - P(player)): the edge `sabot odds` publishes."""
    odds = exact_odds(physical_table("punto-banco", {}).settings)
    for stake in (1, 7, 19, 20, 33, 100):
        wins = BOX_UNITS // gcd(stake * 500, BOX_UNITS)
        state = physical_table("punto-banco", {"b": 10 * stake * wins})
        per_win = Fraction(sum(win_on_banker(state, [stake] * wins)), wins)
        worth = (odds.probability(Bet.BANKER) * (stake - per_win)
                 - odds.probability(Bet.PLAYER) * stake)
        edge = odds.edge(Bet.BANKER)
        assert edge is not None and worth == -edge * stake


def test_no_commission_reproduces_004() -> None:
    """004: "Les mains gagnantes sont payées 1:1": at 0% a Banker win pays even money."""
    state = physical_table("punto-banco", {"b": 100}, commission_percent=0)
    assert win_on_banker(state, [19, 1]) == [0, 0]
    assert state.seat_of("b").chips == 120


def test_the_cagnotte_is_taken_on_small_bank_wins_too() -> None:
    """001: the banker pays "les 5% de prélèvement" on every win of the bank: a 10-chip win
    pays 1 chip and keeps 0.5 in the banker's box; the next 10-chip win pays nothing more."""
    state = physical_table("chemin-de-fer", {"bank": 100, "p": 100, "q": 100})
    state.award_bank("bank", 10)
    state.place_stake("p", Side.PUNTER, 10)
    assert play_coup(state, banker_natural(0)) == {Side.PUNTER: Outcome.BANKER}
    assert (state.bank, state.commission_total) == (19, 1)
    assert state.commission_box == {"bank": 5_000}
    state.place_stake("q", Side.PUNTER, 10)
    assert play_coup(state, banker_natural(1)) == {Side.PUNTER: Outcome.BANKER}
    assert (state.bank, state.commission_total) == (29, 1)  # 5% of 20 is 1 chip in all
    assert state.commission_box == {"bank": 0}
    assert state.chips_accounted()


def test_a_credit_in_the_box_lapses_when_the_player_leaves() -> None:
    state = physical_table("punto-banco", {"b": 100})
    win_on_banker(state, [10])
    assert state.commission_box == {"b": 5_000}
    assert state.leave("b") == 109
    assert state.commission_box == {}
    assert state.chips_accounted()


def exact_commission(record: CoupRecord, bp: int) -> int:
    """The exact commission of a played coup, in BOX_UNITS: on each winning Banker bet, or
    on the bank's net winnings."""
    if record.covered is None:
        won = record.outcomes[Side.PUNTER] is Outcome.BANKER
        return sum(p.staked * bp for p in record.settlement.payouts
                   if won and p.reason == "bet on banker")
    return max(0, -sum(p.net for p in record.settlement.payouts)) * bp


@pytest.mark.parametrize("variant", ["punto-banco", "chemin-de-fer"])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_the_box_accounts_for_every_fraction_over_whole_tailles(variant: str, seed: int) -> None:
    """Over whole tailles of random play, what the house took is the exact commission plus
    the players' boxes, each box under one chip: nothing is rounded away, either way."""
    driver = Driver(variant, seed, players=5, unit=7)
    driver.taille()
    bp = driver.state.settings.commission_bp
    exact = sum(exact_commission(r, bp) for r in driver.records)
    boxes = driver.state.commission_box
    assert driver.state.commission_total * BOX_UNITS == exact + sum(boxes.values())
    assert all(0 <= box < BOX_UNITS for box in boxes.values())
    assert driver.chips_accounted() == driver.issued
