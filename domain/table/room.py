"""The room a table stands in: whether its tournament is paused, and who of its players are
people rather than house bots; and whose decision a table awaits (`person_awaited`,
`bot_to_move`).

A table of a tournament does not know the tournament's state; the service reads it when it
loads the table to decide a command (`TournamentBase.room()`), and the table decides with it:

- while the tournament is paused, every play command is refused (`tournament-paused`, 409),
  whoever sends it (a player, the croupier, a bot, the director, the organiser's token); the
  tournament's own orders to the table (seat, leave, move chips, limits: the organiser's
  interventions, dispute corrections) and the bank an official retires before a banker is
  moved still go through;
- a finished tournament's tables play no more (`tournament-finished`, 409);
- a tournament's table plays the coups of the round under way and no more: a bet, a stake, a
  banco or closing betting on a coup past the round's last (`Room.last_coup`, from the
  tournament's round and its steps) is refused (`round-over`, 409) until the next round's
  start, so that nobody has chips in play when the round's end moves the players on;
- the croupier acts for the table (shuffle, burn, deal, close betting, settle, pay), for
  house bots only where the format says so (`croupier_plays_bots`: the bots act by themselves
  at a croupier's table), never for a person: a present human's bets, stakes, banco, bank and
  decisions on a hand come from that human only (`not-your-seat`, 403).

Whatever the dealing, a person's decisions come from that person only: the house (the director
dealing a table, the bots) plays the table's steps and the bots' seats, and waits where the
next move is a person's (`person_awaited`) until they act or their clock runs out
(`domain.table.defaults.clock_default`).

A table outside any tournament stands in `FREE_ROOM`: never paused, no one known to be a
person, so its croupier acts for anyone (a physical table's croupier at a demo).
"""

from __future__ import annotations

import msgspec

from domain.actors import CROUPIER, ORGANISER
from domain.errors import Forbidden, OutOfTurn
from domain.table import commands as c
from domain.table.base import TableBase
from domain.table.betting_order import yet_to_stake

ORDERS = (c.SeatPlayer, c.LeaveTable, c.AdjustChips, c.ChangeLimits)
"""What a tournament (its organiser's interventions, a dispute's correction) orders a table."""


class TournamentPaused(OutOfTurn):
    """The table's tournament is paused: no play until it resumes."""


class TournamentFinished(OutOfTurn):
    """The table's tournament is over: no more play at it."""


class RoundOver(OutOfTurn):
    """The table has played its round's last coup: no more until the next round."""


ROUND_PLAY = (c.PlaceBet, c.PlaceStake, c.CallBanco, c.CloseBetting)
"""What puts chips on the next coup or starts it: only within the round."""


class Room(msgspec.Struct, frozen=True, kw_only=True):
    paused: bool = False
    people: frozenset[str] = frozenset()  # the tournament's entrants who are not house bots
    last_coup: int | None = None  # the round's last coup at the table (None: no round)
    people_bet_seconds: int = 0  # a person's bet clock where the table sets none
    croupier_plays_bots: bool = True  # the croupier may act for a house bot's seat
    finished: bool = False  # the tournament is over: its tables play no more


FREE_ROOM = Room()


def require_room(actor: str, command: c.TableCommand, state: TableBase, room: Room) -> None:
    """Refuse a play command while the tournament is paused, a coup past the round's last,
    and the croupier's move for a person's seat."""
    if room.paused and not (isinstance(command, ORDERS)
                            or (isinstance(command, c.RetireBank) and actor == ORGANISER)):
        raise TournamentPaused(f"the tournament is paused: no {command_kind(command)} until it "
                               "resumes", rule="tournament-paused")
    if room.finished and isinstance(command, ROUND_PLAY):
        raise TournamentFinished(f"the tournament is finished: no {command_kind(command)} at "
                                 "its tables", rule="tournament-finished")
    coup = state.coup_number + 1
    if room.last_coup is not None and coup > room.last_coup and isinstance(command, ROUND_PLAY):
        raise RoundOver(f"coup {coup} is past the round's last ({room.last_coup}): no "
                        f"{command_kind(command)} until the next round starts",
                        rule="round-over")
    if actor != CROUPIER or (room.croupier_plays_bots and not room.people):
        return  # the croupier may play every seat of a room of bots
    seat = seat_of(command, state)
    if seat is not None and (seat in room.people or not room.croupier_plays_bots):
        raise Forbidden(f"{actor} may not play {seat}'s seat: {seat}'s "
                        f"{command_kind(command)} comes from {seat} only", rule="not-your-seat")


def round_over(state: TableBase, room: Room) -> bool:
    """Whether the table has played its round's last coup (none under way): what would put
    chips on a coup is refused (`round-over`) until the director starts the next round (or,
    a round timed in minutes, its next step)."""
    return (room.last_coup is not None and state.coup is None
            and state.coup_number >= room.last_coup)


def round_play(step: str) -> bool:
    """Whether a legal action's `step` is one of the round's play (`ROUND_PLAY`)."""
    return step in {command_kind(kind) for kind in ROUND_PLAY}


def seat_of(command: c.TableCommand, state: TableBase) -> str | None:
    """Whose seat a command decides for (None: the table's step)."""
    match command:
        case (c.PlaceBet(player=p) | c.PassBetTurn(player=p) | c.PlaceStake(player=p)
              | c.CallBanco(player=p) | c.DeclineBank(player=p) | c.RetireBank(player=p)
              | c.ContributeEntropy(player=p)):
            return p
        case c.AwardBank(player=p) if state.bank_offered_to == p:
            return p  # taking the bank offered (an official giving it is the table's step)
        case c.Decide(side=side):
            return state.hand_holder(side)
        case c.OfferCard() | c.ShowDown():
            return state.banker
    return None


def person_awaited(command: c.TableCommand, state: TableBase,
                   people: frozenset[str]) -> str | None:
    """The person the table waits for before the house may send `command`, the move it would
    make next (`domain.bots.next_command`, which leaves people's seats alone): the person whose
    seat `command` decides for, or, before betting closes, a person who may still stake. None:
    the move is the table's step or a bot's."""
    seat = seat_of(command, state)
    if seat is not None:
        return seat if seat in people else None
    if isinstance(command, c.CloseBetting) and not state.tie_replay:
        return next((p for p in yet_to_stake(state) if p in people), None)
    return None


def bot_to_move(command: c.TableCommand, state: TableBase,
                people: frozenset[str]) -> str | None:
    """The house bot whose seat `command` decides for (a bet, a stake, a banco, the bank, a
    hand), None if it is the table's step or a person's move."""
    seat = seat_of(command, state)
    return seat if seat is not None and seat not in people else None


def command_kind(command: c.TableCommand | type[c.TableCommand]) -> str:
    kind = command if isinstance(command, type) else type(command)
    return str(kind.__struct_config__.tag)
