"""The default move at the decision a table awaits: what bots play and deadlines apply.

`clock_default` is the house's move when a person's clock runs out (`CLOCK` its actor, never
the person): their turn to bet passes (`reason: clock`), their hand takes its default, the bank
offered to them is declined; betting closes without the stakes they did not place.

Fixed moves follow the drawing table; choices follow `domain.game.policies`; the à deux
tableaux banker takes the move of higher exact expectation (`domain.game.banker_expectation`),
knowing only what he has seen: his own cards, every third card, the cards of earlier coups;
or, with `banker_strategy: book`, 000's numbered rules (`domain.game.banker_book`).
"""

from __future__ import annotations

import uuid

from domain.errors import RuleViolation
from domain.game.banker_book import book_should_draw
from domain.game.banker_expectation import banker_should_draw
from domain.game.cards import point, value, value_counts
from domain.game.coup import BANKER, Side
from domain.game.policies import banker_draws, punter_draws
from domain.game.settings import BankerStrategy
from domain.table import commands as c
from domain.table.betting_order import PassReason
from domain.table.state import TableState

CLOCK = "@deadline"  # the house applying a default because a clock ran out


def default_draw(state: TableState, side: Side) -> bool:
    """Whether the hand of `side` draws, by default, at the decision now awaited."""
    coup = state.coup
    assert coup is not None
    own = point(coup.hands[side][:2])
    if side is not BANKER:
        return punter_draws(state.settings, own)
    if not state.rules.drawing.banker_free:
        return banker_draws(state.settings, own, coup.given(coup.tableaux[0]))
    assert state.covered is not None
    stakes = {t: state.covered.engaged_on(t) for t in coup.tableaux}
    if state.settings.banker_strategy is BankerStrategy.BOOK:
        return book_should_draw(coup, stakes)
    return banker_should_draw(coup, stakes, _unseen_by_banker(state))


def deadline_command_id(table_id: uuid.UUID | str, coup: int, side: Side | str) -> str:
    """A decision's default by the clock: one id, whoever applies it (a deadline's worker,
    the director), so it is applied once."""
    return f"deadline:{table_id}:{coup}:{Side(side).value}"


def bet_deadline_command_id(table_id: uuid.UUID | str, coup: int, player: str) -> str:
    return f"bet-deadline:{table_id}:{coup}:{player}"


def bank_deadline_command_id(table_id: uuid.UUID | str, coup: int, player: str) -> str:
    """The shoe offered to `player` after coup `coup` passes on by the clock."""
    return f"bank-deadline:{table_id}:{coup}:{player}"


def clock_default(state: TableState, table_id: uuid.UUID, command: c.TableCommand,
                  person: str) -> c.TableCommand | None:
    """The house's move when `person`'s clock runs out at the table, where `command` was to be
    theirs (`domain.table.room.person_awaited`): the rules' default, recorded as the clock's.
    None: without the person's stake nobody punts against the bank, and the table sits the
    coup out."""
    coup = state.coup_number
    match command:
        case c.PassBetTurn() | c.PlaceBet() | c.PlaceStake():
            return c.PassBetTurn(command_id=bet_deadline_command_id(table_id, coup + 1, person),
                                 actor=CLOCK, player=person, coup=coup + 1,
                                 reason=PassReason.CLOCK)
        case c.AwardBank() | c.DeclineBank():
            return c.DeclineBank(command_id=bank_deadline_command_id(table_id, coup, person),
                                 actor=CLOCK, player=person, coup=coup)
        case c.Decide() | c.OfferCard() | c.ShowDown():
            side = state.coup.to_act() if state.coup is not None else None
            assert side is not None
            return c.PlayDefault(command_id=deadline_command_id(table_id, coup, side),
                                 actor=CLOCK, coup=coup, side=side)
        case c.CloseBetting():  # the stakes not placed in time are none
            try:
                state.verify_close_betting()
            except RuleViolation:
                return None
            return command
    raise RuleViolation(f"no default by the clock for {person}'s {type(command).__name__}",
                        rule="no-clock-default")


def _unseen_by_banker(state: TableState) -> list[int]:
    assert state.shoe is not None and state.coup is not None
    coup = state.coup
    in_this_coup = sum(len(cards) for cards in coup.hands.values())
    seen = state.shoe.dealt[: len(state.shoe.dealt) - in_this_coup] + coup.hands[Side.BANKER]
    seen += [cards[2] for side, cards in coup.hands.items()
             if side is not Side.BANKER and len(cards) == 3]
    seen += [card for side in coup.naturals for card in coup.hands[side]]
    unseen = value_counts(state.shoe.decks)
    for card in seen:
        unseen[value(card)] -= 1
    return unseen
