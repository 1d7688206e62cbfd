"""The table's state machine: whole tailles, refused steps, rotation, the end of the taille.

The property tests play whole tailles of every variant with `tests.unit.play.Driver` from random
seeds; the scripted ones deal chosen cards from a physical shoe (`tests.unit.play.physical_table`).
Every chip issued must stay on a seat, in the bank or in the house's result; a refused step
raises a `DomainError` with a rule key and leaves the table exactly as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import DomainError, OutOfTurn, RuleViolation
from domain.game.cards import Card, value
from domain.game.coup import Outcome, Side, Step, tableaux_of
from domain.game.payouts import Payout, Spot
from domain.game.settings import TableSettings, Variant
from domain.game.shoe import ALGORITHM, commitment, order, shoe_order
from domain.table.state import CROUPIER, Action, Phase, TableState
from tests.unit.play import CoupRecord, Driver, Stalled, physical_table, play_coup

VARIANTS = list(Variant)
P, R, L = Side.PUNTER, Side.RIGHT, Side.LEFT

# A coup's four cards (punter, banker, punter, banker) for a known outcome, by naturals.
PUNTERS_WIN = ["9s", "2h", "Ts", "3h"]  # punter 9 against 5
BANKER_WINS = ["2s", "9h", "3s", "Th"]  # banker 9 against 5
TIE = ["9s", "9h", "Ts", "Th"]  # 9 against 9


def snapshot(state: TableState) -> object:
    return msgspec.to_builtins(state)


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

Refusal = tuple[str, Callable[[], object], type[DomainError], str]


def refusals(state: TableState) -> list[Refusal]:
    """Steps the table must refuse now, with the error and rule key each must raise."""
    phase, found = state.phase, list[Refusal]()
    punters = [p for p in state.players() if p != state.banker and p not in state.duel]
    someone = (punters or state.players())[0]

    def stake(player: str, amount: int) -> Callable[[], object]:
        if state.house_banks:
            return lambda: state.place_bet(player, Spot.PUNTER, amount)
        return lambda: state.place_stake(player, tableaux_of(state.variant)[0], amount)

    if phase is Phase.BETTING and state.tie_replay:
        # 001: "on refait le coup en donnant de nouvelles cartes": nothing is added to the
        # stakes of a tied coup played again
        for player in punters[:2]:
            found.append(("a stake on a tie's replay", stake(player, 1), RuleViolation,
                          "tie-replay"))
            found.append(("a banco on a tie's replay", partial(state.call_banco, player),
                          RuleViolation, "tie-replay"))
    elif phase is Phase.BETTING:
        for player in punters[:2]:
            free = state.seat_of(player).chips - state.committed(player)
            found.append(("a stake beyond the chips", stake(player, free + 1), RuleViolation,
                          "chips-short"))
    if phase is Phase.BETTING:
        if state.banks_with_player:
            for player in punters if not state.tie_replay else []:
                free = state.seat_of(player).chips - state.committed(player)
                own = sum(s.amount for s in state.stakes if s.player == player)
                third = state.variant is Variant.DEUX_TABLEAUX and state.bancos_in_a_row >= 2
                if state.bank > free + own and player not in state.banco_calls and not third:
                    found.append(("a banco beyond the chips",
                                  partial(state.call_banco, player),
                                  RuleViolation, "chips-short"))
            if punters:
                found.append(("a punter retiring the bank",
                              lambda: state.retire_bank(punters[0]), OutOfTurn,
                              "not-your-turn"))
    else:
        found.append(("a stake out of turn", stake(someone, 1), OutOfTurn, "out-of-turn"))
        found.append(("closing betting out of turn", state.close_betting, OutOfTurn,
                      "out-of-turn"))
    if phase is Phase.PLAYING:
        found += _coup_refusals(state)
    else:
        found.append(("a card out of turn", lambda: state.deal(Card("Kh")), OutOfTurn,
                      "out-of-turn"))
    if phase is not Phase.SETTLED:
        found.append(("a payout out of turn", lambda: state.pay(Payout(someone, 1, 1)),
                      OutOfTurn, "out-of-turn"))
        found.append(("closing the coup out of turn", state.close_coup, OutOfTurn,
                      "out-of-turn"))
    if phase is not Phase.NO_SHOE:
        found.append(("a shuffle out of turn", lambda: state.shuffle(
            decks=state.settings.decks, algorithm=ALGORITHM, commitment="0" * 64,
            physical=False), OutOfTurn, "out-of-turn"))
    if phase is not Phase.TAILLE_OVER:
        found.append(("revealing out of turn", state.reveal, OutOfTurn, "out-of-turn"))
    if phase is not Phase.NO_BANK:
        found.append(("a bank out of turn", lambda: state.award_bank(someone, 1), OutOfTurn,
                      "out-of-turn"))
    elif state.bank_offered_to is not None:
        offered = state.bank_offered_to
        others = [p for p in state.players() if p != offered]
        found.append(("declining a shoe offered to another",
                      lambda: state.decline_bank(others[0]), OutOfTurn, "not-your-turn"))
        if state.bank_required > state.settings.min_stake:
            found.append(("a passed hand for less than the bank taken",
                          lambda: state.award_bank(offered, state.bank_required - 1),
                          RuleViolation, "bank-too-small"))
    return found


def _coup_refusals(state: TableState) -> list[Refusal]:
    coup = state.coup
    assert coup is not None
    found = list[Refusal]()
    legal = coup.legal_steps()
    kinds = {s.step for s in legal}
    if Step.DEAL not in kinds:
        found.append(("a card out of turn", lambda: state.deal(Card("Kh")), OutOfTurn,
                      "out-of-turn"))
    if Step.SHOW_NATURALS not in kinds:
        found.append(("naturals out of turn", state.show_naturals, OutOfTurn, "out-of-turn"))
    if Step.SETTLE not in kinds:
        found.append(("settling out of turn", state.settle, OutOfTurn, "out-of-turn"))
    if coup.awaits_offer():
        # 002: "Les pontes ne peuvent tirer une carte que sur l'offre du banquier"
        found += [(f"a draw for the {s} before the banker's offer",
                   partial(state.decide, CROUPIER, s, True), RuleViolation, "no-offer")
                  for s in coup.tableaux]
        wrong = [p for p in state.players() if p != state.banker]
        found.append(("an offer by another than the banker",
                      partial(state.offer_card, wrong[0]), OutOfTurn, "not-your-turn"))
        return found
    side = coup.to_act()
    waiting = [s for s in coup.deal_order if s is not side]
    found += [(f"a decision for the {s} out of turn",
               partial(state.decide, CROUPIER, s, True),
               OutOfTurn, "out-of-turn") for s in waiting]
    if side is None:
        return found
    holder = state.hand_holder(side)
    if len(legal) == 1:
        draw = legal[0].step is Step.STAND  # the move the table forbids
        who = "banker" if side is Side.BANKER else "punter"
        found.append(("a move the drawing table forbids",
                      lambda: state.decide(holder or CROUPIER, side, draw), RuleViolation,
                      f"{who}-{'draw' if draw else 'stand'}-forbidden"))
    wrong = [p for p in state.players() if p != holder]
    allowed = legal[0].step is Step.DRAW
    found.append(("a decision by the wrong player",
                  lambda: state.decide(wrong[0], side, allowed), OutOfTurn, "not-your-turn"))
    return found


def check_refused(state: TableState, refusal: Refusal) -> None:
    name, attempt, error, rule = refusal
    before = snapshot(state)
    with pytest.raises(error) as refused:
        attempt()
    assert refused.value.rule == rule, name
    assert snapshot(state) == before, f"{name} changed the table"


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


def chemin_de_fer(**overrides: Any) -> TableState:
    state = physical_table("chemin-de-fer", {f"p{i}": 1000 for i in range(4)}, **overrides)
    state.award_bank("p0", 100)
    return state


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


# --- bugs once found in domain/table/state.py, now fixed --------------------------------------------


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
