"""What the Table aggregate reads off its state to decide, and the checks of the values its
events carry: the shoe and the coup under way, the card coming out of the shoe, the decision
awaited, and a recorded coup number, shoe position, card, stake, seed, commission or bank
that does not match the table (`event-mismatch`).
"""

from __future__ import annotations

from domain.errors import OutOfTurn, RuleViolation
from domain.game.card_source import CardSource
from domain.game.cards import Card, card
from domain.game.coup import Coup, Side
from domain.game.coverage import Stake
from domain.game.shoe import check_seed
from domain.table.base import PLAYING, Phase, ShoeState
from domain.table.state import TableState


def mismatch(what: str, recorded: object, expected: object) -> RuleViolation:
    return RuleViolation(f"the event records {what} {recorded}, the table has {expected}",
                         rule="event-mismatch")


def shoe_of(state: TableState) -> ShoeState:
    if state.shoe is None:
        raise OutOfTurn("there is no shoe yet", rule="no-shoe")
    return state.shoe


def coup_of(state: TableState) -> Coup:
    if state.phase is not PLAYING or state.coup is None:
        raise OutOfTurn(f"no coup is being played (the table is at {state.phase.value})",
                        rule="out-of-turn")
    return state.coup


def next_card(state: TableState, given: Card | None, cards: CardSource) -> Card:
    """The card coming out of the shoe: a physical shoe's as given, an RNG shoe's read
    off its order."""
    shoe = shoe_of(state)
    if shoe.physical:
        if given is None:
            raise RuleViolation("a physical shoe's card must be given", rule="card-missing")
        return card(given)
    if given is not None:
        raise RuleViolation("an RNG shoe deals its own cards", rule="card-given")
    if shoe.cut == 0:
        raise OutOfTurn("the shoe is not cut yet", rule="shoe-not-cut")
    if shoe.remaining <= 0:
        raise RuleViolation("the shoe is empty", rule="shoe-empty")
    return cards.card_at(shoe.public(), shoe.position)


def check_coup(state: TableState, coup: int, *, next_one: bool = False) -> None:
    expected = state.coup_number + (1 if next_one else 0)
    if coup != expected:
        raise mismatch("coup", coup, expected)


def check_position(state: TableState, position: int) -> None:
    expected = shoe_of(state).position
    if position != expected:
        raise mismatch("shoe position", position, expected)


def check_dealt(state: TableState, coup: int, side: Side, position: int, *, third: bool) -> None:
    check_coup(state, coup)
    check_position(state, position)
    playing = coup_of(state)
    if (playing.awaiting_card is not None) is not third:
        raise mismatch("a third card" if third else "a first card", side,
                        "the other kind")
    due = playing.verify_deal()
    if side is not due:
        raise mismatch("a card to", side, f"it due to {due}")


def check_stake(state: TableState, coup: int, stake: Stake, *, engaged: bool) -> None:
    """A stake the bank took on (`engaged`) or gave back is one the table's coverage holds."""
    check_coup(state, coup)
    covered = state.covered
    held = () if covered is None else covered.engaged if engaged else covered.returned
    if stake not in held:
        raise mismatch("a covered stake" if engaged else "a returned stake",
                       f"{stake.player} {stake.amount} on {stake.tableau}", "none such")


def awaits(state: TableState, coup: int, side: Side) -> bool:
    """The table awaits the decision of `side`'s hand in coup `coup`."""
    return state.phase is PLAYING and state.coup_number == coup and (
        state.coup is not None and state.coup.to_act() is side)


def check_taille_end(state: TableState, taille: int, remaining: int) -> None:
    if taille != state.taille:
        raise mismatch("taille", taille, state.taille)
    if state.shoe is not None and remaining != state.shoe.remaining:
        raise mismatch("cards remaining", remaining, state.shoe.remaining)


def check_seed_revealed(state: TableState, taille: int, seed: str) -> None:
    """A revealed seed is the one the taille's shoe was sealed with, once the taille is over."""
    if taille != state.taille:
        raise mismatch("taille", taille, state.taille)
    state.require(Phase.TAILLE_OVER, doing="reveal the seed")
    check_seed(bytes.fromhex(seed), shoe_of(state).commitment)


def check_commission(state: TableState, coup: int, amount: int) -> None:
    check_coup(state, coup)
    settlement = state.settlement
    if settlement is None or settlement.commission != amount:
        raise mismatch("a commission of", amount, settlement.commission if settlement else "none")


def check_bank_after(state: TableState, coup: int, banker: str | None, bank: int) -> None:
    """The bank a closed coup records is its banker's bank with the coup's net."""
    check_coup(state, coup)
    settlement = state.settlement
    if settlement is not None:
        after = (state.banker, state.bank + settlement.banker_net)
        if (banker, bank) != after:
            raise mismatch("the bank after the coup as", (banker, bank), after)
