"""Coverage: which stakes the bank takes on, in which order, and which go back (000, 001).

Unit tests of `domain.game.coverage` with the priority orders written out, then the same rules seen
through a table (`TableState.close_betting`), which works the orders out from the seats.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.coup import Side
from domain.game.coverage import Stake, banco_winner, chemin_de_fer, deux_tableaux
from domain.game.settings import HandHolder
from domain.table.state import TableState
from tests.unit.play import physical_table, play_coup

P, R, L = Side.PUNTER, Side.RIGHT, Side.LEFT
ORDER = ["a", "b", "c", "d", "standing"]  # from the banker's right; standing punters last


def amounts(stakes: tuple[Stake, ...]) -> list[tuple[str, int]]:
    return [(s.player, s.amount) for s in stakes]


# --- chemin de fer -----------------------------------------------------------------------


def test_banco_priority_banco_suivi_then_seat_order_standing_last() -> None:
    """000/001: the banco suivi first, then seat order from the banker's right; "un joueur
    debout peut faire banco tout seul mais il n'est pas prioritaire"."""
    assert banco_winner(["c", "b", "standing"], ORDER, suivi=None) == "b"
    assert banco_winner(["c", "b", "standing"], ORDER, suivi="c") == "c"
    assert banco_winner(["standing", "d"], ORDER, suivi=None) == "d"
    assert banco_winner(["standing"], ORDER, suivi=None) == "standing"
    assert banco_winner(["b", "c"], ORDER, suivi="a") == "b"  # a suivi who does not call
    assert banco_winner([], ORDER, suivi="a") is None


def test_stakes_are_covered_in_order_until_the_bank_is_covered() -> None:
    """001: "Si le banco est inférieur aux sommes déposées sur la table, les plus près du
    sabot dans le sens de la marche sont prioritaires." The excess is not engaged."""
    stakes = [Stake("standing", P, 50), Stake("c", P, 40), Stake("a", P, 30), Stake("b", P, 50)]
    covered = chemin_de_fer(100, stakes, ORDER, None, HandHolder.LARGEST_STAKE)
    assert amounts(covered.engaged) == [("a", 30), ("b", 50), ("c", 20)]
    assert Counter(dict(amounts(covered.returned))) == Counter({"c": 20, "standing": 50})
    assert covered.engaged_on(P) == 100
    assert covered.banco is None


def test_an_uncovered_bank_is_not_at_risk() -> None:
    covered = chemin_de_fer(100, [Stake("b", P, 30), Stake("a", P, 20)], ORDER, None,
                            HandHolder.LARGEST_STAKE)
    assert amounts(covered.engaged) == [("a", 20), ("b", 30)]
    assert covered.returned == ()
    assert covered.engaged_on(P) == 50


def test_a_banco_covers_the_bank_alone_and_every_stake_goes_back() -> None:
    stakes = [Stake("a", P, 30), Stake("c", P, 50)]
    covered = chemin_de_fer(100, stakes, ORDER, "c", HandHolder.LARGEST_STAKE)
    assert amounts(covered.engaged) == [("c", 100)]
    assert covered.returned == tuple(stakes)
    assert covered.banco == "c"
    assert covered.hand_holders == {P: "c"}


def test_hand_holder_is_the_largest_stake_by_default() -> None:
    """001: the banker gives the cards "en général à celui qui a misé le plus cher"; between
    equal stakes, the one with priority."""
    stakes = [Stake("a", P, 20), Stake("b", P, 40), Stake("c", P, 40)]
    covered = chemin_de_fer(100, stakes, ORDER, None, HandHolder.LARGEST_STAKE)
    assert covered.hand_holders == {P: "b"}


def test_hand_holder_counts_all_of_a_punters_stakes() -> None:
    """A punter who staked twice (30 and 30) staked more than one who staked 50 once."""
    stakes = [Stake("b", P, 30), Stake("c", P, 50), Stake("b", P, 30)]
    covered = chemin_de_fer(200, stakes, ORDER, None, HandHolder.LARGEST_STAKE)
    assert amounts(covered.engaged) == [("b", 30), ("b", 30), ("c", 50)]
    assert covered.hand_holders == {P: "b"}


def test_hand_holder_setting_bankers_right_is_the_first_engaged() -> None:
    """000: "c'est toujours le premier joueur à droite du banquier qui a la main"."""
    stakes = [Stake("c", P, 90), Stake("b", P, 10)]
    covered = chemin_de_fer(100, stakes, ORDER, None, HandHolder.BANKERS_RIGHT)
    assert covered.hand_holders == {P: "b"}


stake_lists = st.lists(
    st.tuples(st.sampled_from(ORDER), st.integers(1, 200)), max_size=8
).map(lambda pairs: [Stake(player, P, amount) for player, amount in pairs])


@settings(max_examples=100, deadline=None)
@given(bank=st.integers(1, 500), stakes=stake_lists,
       banco=st.none() | st.sampled_from(ORDER), holder=st.sampled_from(HandHolder))
def test_chemin_de_fer_coverage_moves_no_chip(
    bank: int, stakes: list[Stake], banco: str | None, holder: HandHolder
) -> None:
    """Whatever the stakes: at most the bank is engaged, every chip staked is either engaged
    or returned, and the engaged stakes keep the priority order."""
    covered = chemin_de_fer(bank, stakes, ORDER, banco, holder)
    engaged = sum(s.amount for s in covered.engaged)
    if banco is not None:
        assert engaged == bank
        assert covered.returned == tuple(stakes)
        return
    staked = sum(s.amount for s in stakes)
    assert engaged == min(bank, staked)
    assert engaged + sum(s.amount for s in covered.returned) == staked
    per_player = Counter[str]()
    for s in stakes:
        per_player[s.player] += s.amount
    back = Counter[str]()
    for s in (*covered.engaged, *covered.returned):
        back[s.player] += s.amount
    assert back == per_player
    positions = [ORDER.index(s.player) for s in covered.engaged]
    assert positions == sorted(positions)
    assert all(s.amount > 0 for s in (*covered.engaged, *covered.returned))
    assert (P in covered.hand_holders) == bool(covered.engaged)


# --- à deux tableaux ---------------------------------------------------------------------

ORDERS = {
    R: ["r1", "r2", "l1", "l2", "standing"],  # hand holder, same side outward, other, standing
    L: ["l1", "l2", "r1", "r2", "standing"],
}


def test_everything_is_covered_when_the_bank_suffices() -> None:
    stakes = [Stake("r1", R, 60), Stake("l1", L, 10), Stake("r2", R, 20)]
    covered = deux_tableaux(100, stakes, ORDERS, None, {R: "r1", L: "l1"})
    # paid right and left alternately, nearest the banker first (000)
    assert amounts(covered.engaged) == [("r1", 60), ("l1", 10), ("r2", 20)]
    assert covered.returned == ()
    assert covered.hand_holders == {R: "r1", L: "l1"}


def test_halves_when_the_bank_falls_short_odd_chip_to_the_right() -> None:
    """000: "la banque sera partagée en deux parties égales, une moitié sera attribuée au
    tableau de droite et l'autre moitié au tableau de gauche, sans qu'il y ait à se préoccuper
    s'il y a plus ou moins de pontes sur tel ou tel tableau"."""
    stakes = [Stake("r1", R, 40), Stake("r2", R, 40), Stake("l1", L, 5), Stake("l2", L, 20)]
    covered = deux_tableaux(101, stakes, ORDERS, None, {R: "r1", L: "l1"})
    assert covered.engaged_on(R) == 51  # the odd chip goes right
    assert covered.engaged_on(L) == 25  # the left half (50) is not filled, and not lent
    assert amounts(covered.engaged) == [("r1", 40), ("l1", 5), ("r2", 11), ("l2", 20)]
    assert amounts(covered.returned) == [("r2", 29)]


def test_per_tableau_order_goes_from_the_hand_holder_outward() -> None:
    """000: the hand holder, then his side's seated punters outward, then the other side's
    seated punters staking on this tableau, then standing punters."""
    stakes = [Stake("standing", L, 20), Stake("r1", L, 20), Stake("l2", L, 20),
              Stake("l1", L, 20), Stake("r2", R, 200)]
    covered = deux_tableaux(100, stakes, ORDERS, None, {R: "r2", L: "l1"})
    assert amounts(covered.engaged) == [("r2", 50), ("l1", 20), ("l2", 20), ("r1", 10)]
    assert Counter(dict(amounts(covered.returned))) == Counter(
        {"r2": 150, "r1": 10, "standing": 20})


def test_banco_covers_both_tableaux() -> None:
    """000: "faire banco, en d'autres termes faire tout ce qu'il y a en banque sur les deux
    tableaux ... il prime sur tous les autres pontes"."""
    stakes = [Stake("r1", R, 30), Stake("l1", L, 30)]
    covered = deux_tableaux(101, stakes, ORDERS, "l2", {R: "r1", L: "l1"})
    assert [(s.player, s.tableau, s.amount) for s in covered.engaged] == [
        ("l2", R, 51), ("l2", L, 50)]
    assert covered.returned == tuple(stakes)
    assert covered.hand_holders == {R: "l2", L: "l2"}


two_tableau_stakes = st.lists(
    st.tuples(st.sampled_from(ORDERS[R]), st.sampled_from([R, L]), st.integers(1, 120)),
    max_size=8,
).map(lambda rows: [Stake(player, side, amount) for player, side, amount in rows])


@settings(max_examples=100, deadline=None)
@given(bank=st.integers(1, 400), stakes=two_tableau_stakes)
def test_deux_tableaux_coverage_moves_no_chip(bank: int, stakes: list[Stake]) -> None:
    covered = deux_tableaux(bank, stakes, ORDERS, None, {})
    staked = sum(s.amount for s in stakes)
    engaged = sum(s.amount for s in covered.engaged)
    assert engaged + sum(s.amount for s in covered.returned) == staked
    if staked <= bank:
        assert engaged == staked
    else:
        assert covered.engaged_on(R) <= bank - bank // 2
        assert covered.engaged_on(L) <= bank // 2
    for side in (R, L):
        positions = [ORDERS[side].index(s.player) for s in covered.engaged if s.tableau is side]
        assert positions == sorted(positions)


# --- the same, worked out by a table from its seats ---------------------------------------


def chemin_de_fer_table(**overrides: Any) -> TableState:
    players = {"p0": 500, "p1": 500, "p2": 500, "p3": 500, "p4": 500, "s": 500}
    state = physical_table("chemin-de-fer", players, standing={"s"}, **overrides)
    state.award_bank("p2", 100)
    return state


def test_table_orders_punters_from_the_bankers_right_standing_last() -> None:
    state = chemin_de_fer_table()
    assert state.punter_order() == ["p3", "p4", "p0", "p1", "s"]
    for player, amount in (("s", 60), ("p1", 30), ("p4", 40), ("p0", 50)):
        state.place_stake(player, P, amount)
    state.close_betting()
    assert state.covered is not None
    assert amounts(state.covered.engaged) == [("p4", 40), ("p0", 50), ("p1", 10)]
    assert state.covered.hand_holders == {P: "p0"}  # the largest stake holds the cards


def test_table_gives_the_banco_suivi_priority() -> None:
    """000: "le ponte perdant a encore le droit de faire un nouveau banco"."""
    state = chemin_de_fer_table()
    state.call_banco("p1")
    play_coup(state, ["2h", "9s", "3h", "Ts"])  # the banker's natural 9 beats the banco
    assert state.banker == "p2" and state.banco_suivi == "p1"
    assert state.bank == 195  # doubled, less the 5% cagnotte on the 100 won
    state.call_banco("p3")  # first in seat order, but not the banco suivi
    state.call_banco("p1")
    state.close_betting()
    assert state.covered is not None and state.covered.banco == "p1"
    assert amounts(state.covered.engaged) == [("p1", 195)]


def test_table_bankers_right_setting_gives_the_hand_to_the_first_engaged() -> None:
    state = chemin_de_fer_table(hand_holder="bankers-right")
    state.place_stake("p0", P, 90)
    state.place_stake("p4", P, 10)
    state.close_betting()
    assert state.covered is not None and state.covered.hand_holders == {P: "p4"}


def test_table_deux_tableaux_order_per_tableau() -> None:
    players = {"b": 500, "r1": 500, "r2": 500, "l1": 500, "l2": 500, "s": 500}
    sides = {"b": R, "r1": R, "r2": R, "l1": L, "l2": L}
    state = physical_table("deux-tableaux", players, sides=sides, standing={"s"})
    state.award_bank("b", 100)
    for player, side, amount in (("s", R, 30), ("l1", R, 30), ("r2", R, 30), ("r1", R, 30),
                                 ("l2", L, 60), ("l1", L, 20)):
        state.place_stake(player, side, amount)
    state.close_betting()
    assert state.covered is not None
    engaged = [(s.player, s.tableau, s.amount) for s in state.covered.engaged]
    assert engaged == [("r1", R, 30), ("l1", L, 20), ("r2", R, 20), ("l2", L, 30)]
    assert state.covered.hand_holders == {R: "r1", L: "l1"}
