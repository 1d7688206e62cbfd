"""The clocks a table starts: a turn to bet in a rotating order, and a person's decision.

A command that opens a turn to bet records `BetTurnBegan` with the seconds of the bet clock
that applies to it (`bet_clock`): the table's own, else, for a person of the room, the
format's clock for people (`Room.people_bet_seconds`); a bot's turn where the table sets no
clock has none. A command that leaves the table awaiting a person's decision on a hand (draw
or stand, à deux tableaux the banker's offer or show-down), or on the shoe offered to them
(take the bank or let it pass), records `DecisionClockStarted` with the table's decision
clock (`decision_awaited`; the shoe's: no side). A house bot's decision starts no clock event,
so the record of a table where no person sits is what it always was. When a clock runs out,
the house applies the rules' default as the clock's (`domain.table.defaults.clock_default`):
the turn passes, the hand takes its default, the shoe passes on.

A person's other moves are theirs to make or not, and not making them is the default, so
they run on no clock of their own: a stake or a banco where everyone stakes at once (the bet
clock of the table, or the house closing betting on `Room.people_bet_seconds` at a
house-dealt table, the croupier at theirs), a banker retiring (he keeps the bank).
"""

from __future__ import annotations

from domain.game.coup import Side
from domain.game.settings import BettingOrder
from domain.table import betting_order, reading
from domain.table.room import Room
from domain.table.state import Phase, TableState

ROTATING = BettingOrder.ROTATING  # read once: an enum class's member costs a hook call a read


def bet_clock(state: TableState, player: str, room: Room) -> int:
    """The seconds `player` has for their turn to bet (0: no clock)."""
    if state.settings.bet_seconds or player not in room.people:
        return state.settings.bet_seconds
    return room.people_bet_seconds


def offer_awaited(state: TableState) -> tuple[int, str, int] | None:
    """The coup after which the shoe is offered to a person, that person and the seconds
    of their clock, while the table awaits their answer (None: no offer on a clock)."""
    offer = state.offer_clock
    if offer is None or state.phase is not Phase.NO_BANK or offer[:2] != (
            state.coup_number, state.bank_offered_to):
        return None
    return offer


def decision_awaited(state: TableState, room: Room) -> tuple[int, str, Side | None] | None:
    """The coup, person and hand whose decision the table awaits, or the person the shoe is
    offered to after the coup (no hand). None: no decision, or a bot's."""
    if not room.people:  # a table of bots only: nobody's decision has a clock
        return None
    side: Side | None = None
    if state.phase is Phase.NO_BANK:
        person = state.bank_offered_to
    else:
        side = state.coup.to_act() if state.coup is not None else None
        person = state.hand_holder(side) if side is not None else None
    if person is None or person not in room.people:
        return None
    return state.coup_number, person, side


Awaited = tuple[tuple[int, str | None], tuple[int, str, Side | None] | None]
"""The coup and the player in turn to bet, and the decision awaited (`awaited`)."""


def awaited(state: TableState, room: Room) -> Awaited | None:
    """What the table awaits before a command, which starts a clock where it moves on: the
    coup and the player in turn to bet, and the decision awaited (`decision_awaited`). None:
    no command starts a clock at this table (its players bet when they like, no person sits
    in its room)."""
    if not room.people and state.settings.betting_order is not ROTATING:
        return None
    return (state.coup_number, betting_order.bettor(state)), decision_awaited(state, room)


def check_turn(state: TableState, coup: int, player: str) -> None:
    """A recorded turn to bet is the table's turn now."""
    reading.check_coup(state, coup, next_one=True)
    turn = betting_order.bettor(state)
    if player != turn:
        raise reading.mismatch("the turn to bet of", player, f"it {turn}'s")


def start_decision(state: TableState, coup: int, player: str, side: Side | None,
                   seconds: int) -> None:
    """A recorded decision clock is for the hand the table awaits, held by `player`, or for
    the shoe offered to `player`, whose clock the table keeps (`offer_clock`: a bot's offer
    has none)."""
    if side is None:
        if not state.decline_due(player, coup):
            raise reading.mismatch("the shoe offered to", player, state.bank_offered_to)
        state.offer_clock = (coup, player, seconds)
        return
    reading.check_coup(state, coup)
    awaited = state.coup.to_act() if state.coup is not None else None
    if (side, player) != (awaited, state.hand_holder(side)):
        raise reading.mismatch("the decision of", f"{player} on {side}", f"{awaited}'s")
