"""The table's state machine: whole tailles, refused steps, and bugs once found.

The property tests play whole tailles of every variant with `tests.unit.play.Driver` from random
seeds; the scripted ones deal chosen cards from a physical shoe (`tests.unit.play.physical_table`).
Every chip issued must stay on a seat, in the bank or in the house's result; a refused step
raises a `DomainError` with a rule key and leaves the table exactly as it was. Rotation and the
end of the taille are in `test_table_rotation.py`; what both share (the scripted cards and
tables, the refusals), in `tests.unit.table_scripts`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import DomainError, OutOfTurn, RuleViolation
from domain.game.cards import Card
from domain.game.coup import Side
from domain.game.payouts import Payout, Spot
from domain.game.settings import TableSettings, Variant
from domain.game.shoe import ALGORITHM, commitment, order, shoe_order
from domain.table.state import CROUPIER, Phase, TableState
from tests.unit.play import CoupRecord, Driver, Stalled, physical_table, play_coup
from tests.unit.table_scripts import (
    PUNTERS_WIN,
    VARIANTS,
    P,
    check_refused,
    chemin_de_fer,
    refusals,
    snapshot,
)


def driver_for(variant: Variant, seed: int, shape: int) -> Driver:
    """A driver of `variant` whose table shape and habits `shape` picks."""
    return Driver(
        variant, seed,
        players=2 + shape % 7,
        standing=shape % 3,
        random_choices=shape % 2 == 1,
        retire_rate=0.1 if shape % 4 == 3 else 0.0,
        banco_rate=0.1,
    )


# --- whole tailles ------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), shape=st.integers(0, 99))
def test_whole_tailles_conserve_chips(variant: Variant, seed: int, shape: int) -> None:
    """After every step (except while payouts are being made) every chip issued is on a seat,
    in the bank or in the house's result; each settlement balances."""
    driver = driver_for(variant, seed, shape)
    coups = 0
    try:
        while driver.state.taille < 2 or driver.state.phase is not Phase.TAILLE_OVER:
            driver.step()
            if driver.state.phase is not Phase.SETTLED:
                assert driver.chips_accounted() == driver.issued
                assert driver.state.chips_accounted()
            if len(driver.records) > coups:
                coups = len(driver.records)
                driver.records[-1].settlement.check()
    except Stalled:
        pass
    assert driver.chips_accounted() == driver.issued
    assert coups > 0
    assert all(seat.chips >= 0 for seat in driver.state.seats)


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32), shape=st.integers(0, 99))
def test_the_same_seed_plays_the_same_game(variant: Variant, seed: int, shape: int) -> None:
    games = [driver_for(variant, seed, shape) for _ in range(2)]
    for game in games:
        with contextlib.suppress(Stalled):
            game.taille()
    first, second = games
    assert snapshot(first.state) == snapshot(second.state)
    assert first.records == second.records
    other = driver_for(variant, seed + 1, shape)
    other.step()
    assert other.seeds[0] != first.seeds[0]


@settings(max_examples=30, deadline=None)
@given(
    seed=st.binary(min_size=32, max_size=32),
    entropy=st.lists(st.binary(min_size=1, max_size=64), min_size=1, max_size=3),
    cut=st.integers(1, 311),
)
def test_same_seed_and_contributions_give_the_same_shoe(
    seed: bytes, entropy: list[bytes], cut: int
) -> None:
    """Recomputed from the public record and the revealed seed, two tables shuffled with the
    same seed and contributions hold the same shoe; change one contribution and it differs."""

    def shuffled(contributions: list[bytes]) -> TableState:
        state = TableState(settings=TableSettings.default(Variant.CHEMIN_DE_FER))
        state.seat("a", 100, None, False)
        state.shuffle(decks=state.settings.decks, algorithm=ALGORITHM,
                      commitment=commitment(seed), physical=False)
        for contribution in contributions:
            state.contribute("a", contribution.hex())
        state.cut("a", cut)
        return state

    one, two = shuffled(entropy), shuffled(entropy)
    assert one.shoe is not None and two.shoe is not None
    cards = shoe_order(one.shoe.public(), seed)
    assert cards == shoe_order(two.shoe.public(), seed)
    assert cards == order(seed, entropy, decks=6, cut=cut)
    changed = [*entropy[:-1], bytes([entropy[-1][0] ^ 1]) + entropy[-1][1:]]
    other = shuffled(changed)
    assert other.shoe is not None
    assert shoe_order(other.shoe.public(), seed) != cards


# --- refused steps --------------------------------------------------------------------------



STOPS: dict[str, Callable[[TableState], bool]] = {
    "a decision": lambda s: s.coup is not None and s.coup.to_act() is not None,
    "betting": lambda s: s.phase is Phase.BETTING,
    "a coup in play": lambda s: s.phase is Phase.PLAYING,
    "payouts": lambda s: s.phase is Phase.SETTLED,
    "no bank": lambda s: s.phase is Phase.NO_BANK,
}


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), shape=st.integers(0, 99), stop=st.sampled_from(list(STOPS)),
       skip=st.integers(0, 40))
def test_refused_steps_leave_the_table_unchanged(
    variant: Variant, seed: int, shape: int, stop: str, skip: int
) -> None:
    """Play to the `skip`-th time the table is at `stop` (or as far as 2000 steps go), then
    try every step the table must refuse there."""
    driver = driver_for(variant, seed, shape)
    with contextlib.suppress(Stalled):
        for _ in range(2000):
            if STOPS[stop](driver.state):
                if skip == 0:
                    break
                skip -= 1
            driver.step()
    tried = refusals(driver.state)
    assert tried
    for refusal in tried:
        check_refused(driver.state, refusal)
    with contextlib.suppress(Stalled):
        driver.step()  # and the table plays on


def test_bet_beyond_chips_is_refused() -> None:
    state = physical_table("punto-banco", {"a": 100})
    state.place_bet("a", Spot.PUNTER, 60)
    check_refused(state, ("bet", lambda: state.place_bet("a", Spot.BANKER, 41), RuleViolation,
                          "chips-short"))
    state.place_bet("a", Spot.BANKER, 40)


def test_bet_on_a_settled_coup_is_refused() -> None:
    state = physical_table("punto-banco", {"a": 100})
    state.place_bet("a", Spot.PUNTER, 10)
    play_coup(state, PUNTERS_WIN, pay=False)
    assert state.phase is Phase.SETTLED
    check_refused(state, ("bet", lambda: state.place_bet("a", Spot.PUNTER, 10), OutOfTurn,
                          "out-of-turn"))


def test_largest_stake_holds_the_cards_counting_every_stake_of_a_punter() -> None:
    state = physical_table("chemin-de-fer", {f"p{i}": 1000 for i in range(4)})
    state.award_bank("p0", 200)
    state.place_stake("p1", P, 30)
    state.place_stake("p2", P, 50)
    state.place_stake("p1", P, 30)
    state.close_betting()
    assert state.covered is not None and state.covered.hand_holders == {P: "p1"}
    assert state.legal_actions()[0].step == "deal"


def test_moves_out_of_turn_and_forbidden_draws_are_refused() -> None:
    state = chemin_de_fer()
    state.place_stake("p1", P, 100)
    state.close_betting()
    check_refused(state, ("settle", state.settle, OutOfTurn, "out-of-turn"))
    for c in ("7s", "2h", "Ts", "3h"):  # punter 7, banker 5
        state.deal(Card(c))
    check_refused(state, ("decide", lambda: state.decide("p1", P, True), OutOfTurn,
                          "out-of-turn"))  # before the naturals are shown
    state.show_naturals()
    check_refused(state, ("draw on 7", lambda: state.decide("p1", P, True), RuleViolation,
                          "punter-draw-forbidden"))
    check_refused(state, ("the banker first", lambda: state.decide("p0", Side.BANKER, True),
                          OutOfTurn, "out-of-turn"))
    check_refused(state, ("wrong actor", lambda: state.decide("p2", P, False), OutOfTurn,
                          "not-your-turn"))
    state.decide("p1", P, False)
    check_refused(state, ("stand on 5", lambda: state.decide("p0", Side.BANKER, False),
                          RuleViolation, "banker-stand-forbidden"))
    check_refused(state, ("wrong actor", lambda: state.decide("p1", Side.BANKER, True),
                          OutOfTurn, "not-your-turn"))
    state.decide("p0", Side.BANKER, True)


def test_banco_beyond_chips_is_refused() -> None:
    state = physical_table("chemin-de-fer", {"p0": 1000, "p1": 99, "p2": 1000})
    state.award_bank("p0", 100)
    check_refused(state, ("banco", lambda: state.call_banco("p1"), RuleViolation,
                          "chips-short"))
    state.place_stake("p1", P, 99)  # what he has, he may stake
    state.place_stake("p2", P, 950)
    state.call_banco("p2")  # 50 free, but the 950 staked come back to him under a banco
    state.close_betting()
    assert state.covered is not None
    assert [(s.player, s.amount) for s in state.covered.engaged] == [("p2", 100)]


# --- bugs once found in domain/table/state.py, now fixed -----------------------------------


def test_chemin_de_fer_burns_five_cards() -> None:
    """001: "Il brûle 5 cartes et la partie peut commencer." """
    driver = Driver(Variant.CHEMIN_DE_FER, 0)
    while driver.state.phase in (Phase.NO_SHOE, Phase.SHUFFLED, Phase.BURNING):
        driver.step()
    assert driver.state.shoe is not None
    assert len(driver.state.shoe.burned) == 5


def coup_with_the_cut_card(records: list[CoupRecord], cut_card: int) -> int:
    """The index of the coup during which the cut card came out (before card `cut_card`)."""
    return next(i for i, r in enumerate(records) if r.start <= cut_card < r.end)


@pytest.mark.parametrize("seed", range(3))
def test_punto_banco_deals_one_more_coup_after_the_cut_card(seed: int) -> None:
    """RULES.md, punto banco: the cut card lies 16 cards from the end; "when it appears, the
    coup in progress ends and one more coup is dealt"."""
    driver = Driver(Variant.PUNTO_BANCO, seed)
    records = driver.taille()
    shoe = driver.state.shoe
    assert shoe is not None and shoe.cut_card_at == 52 * 8 - 16
    appeared = coup_with_the_cut_card(records, shoe.cut_card_at)
    assert len(records) - 1 - appeared == 1


def test_only_the_payouts_owed_are_paid() -> None:
    state = physical_table("punto-banco", {"a": 100, "b": 100})
    state.place_bet("a", Spot.PUNTER, 10)
    play_coup(state, PUNTERS_WIN, pay=False)
    assert state.settlement is not None
    owed = state.settlement.payouts[0]
    state.pay(owed)
    for payout in (owed, Payout("b", 10, 1000)):
        before = snapshot(state)
        with pytest.raises(DomainError):
            state.pay(payout)
        assert snapshot(state) == before


def test_the_coup_closes_only_once_every_payout_is_made() -> None:
    state = physical_table("punto-banco", {"a": 100})
    state.place_bet("a", Spot.PUNTER, 10)
    play_coup(state, PUNTERS_WIN, pay=False)
    before = snapshot(state)
    with pytest.raises(DomainError):
        state.close_coup()
    assert snapshot(state) == before


def test_a_duellist_never_stakes_chips_he_lacks() -> None:
    """003: Banque and Ponte each put up the same stake; a player with fewer chips than the
    duel stake cannot duel, or the chips he loses are chips he never had."""
    state = physical_table("simplified", {"short": 5, "b": 100, "c": 100})
    play_coup(state, PUNTERS_WIN)  # Ponte wins the duel against Banque
    assert all(seat.chips >= 0 for seat in state.seats)


def test_a_passed_hand_nobody_can_match_goes_back_to_auction() -> None:
    """000: whoever takes a passed hand puts up the same sum; when every player has let the
    shoe pass, that sum lapses and the bank is given afresh (no endless round of refusals)."""
    state = TableState(settings=TableSettings.default(Variant.CHEMIN_DE_FER))
    for player, chips in (("rich", 1000), ("a", 50), ("b", 50)):
        state.seat(player, chips, None, False)
    state.phase = Phase.NO_BANK
    state.award_bank("rich", 400)
    state.retire_bank("rich")
    assert (state.bank_offered_to, state.bank_required) == ("a", 400)
    state.decline_bank("a")
    state.decline_bank("b")
    assert state.bank_offered_to == "rich"
    state.decline_bank("rich")
    assert (state.bank_offered_to, state.bank_required, state.phase) == (None, 0, Phase.NO_BANK)
    with pytest.raises(OutOfTurn) as refused:
        state.decline_bank(CROUPIER)
    assert refused.value.rule == "no-offer"
    state.award_bank("a", 40)  # the sum has lapsed
    assert (state.banker, state.bank) == ("a", 40)


def test_the_croupier_ends_a_taille_between_coups_only() -> None:
    driver = Driver(Variant.PUNTO_BANCO, 5)
    while driver.state.phase is not Phase.BETTING:
        driver.step()
    state = driver.state
    state.place_bet(state.players()[0], Spot.PUNTER, 10)
    with pytest.raises(OutOfTurn) as refused:
        state.end_taille()
    assert refused.value.rule == "stakes-placed"
    state.bets = []
    state.end_taille()
    assert state.phase is Phase.TAILLE_OVER
    with pytest.raises(OutOfTurn):
        state.end_taille()
