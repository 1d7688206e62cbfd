"""The room a table stands in: whether its tournament is paused, and who of its players are
people rather than house bots.

A table of a tournament does not know the tournament's state; the service reads it when it
loads the table to decide a command (`TournamentBase.room()`), and the table decides with it:

- while the tournament is paused, every play command is refused (`tournament-paused`, 409),
  whoever sends it (a player, the croupier, a bot, the director, the organiser's token); the
  tournament's own orders to the table (seat, leave, move chips, limits: the organiser's
  interventions, dispute corrections) and the bank an official retires before a banker is
  moved still go through;
- the croupier acts for the table (shuffle, burn, deal, close betting, settle, pay) and for
  house bots, never for a person: a present human's bets, stakes, banco, bank and decisions
  on a hand come from that human only (`not-your-seat`, 403).

A table outside any tournament stands in `FREE_ROOM`: never paused, no one known to be a
person, so its croupier acts for anyone (a physical table's croupier at a demo).
"""

from __future__ import annotations

import msgspec

from domain.actors import CROUPIER, ORGANISER
from domain.errors import Forbidden, OutOfTurn
from domain.table import commands as c
from domain.table.base import TableBase

ORDERS = (c.SeatPlayer, c.LeaveTable, c.AdjustChips, c.ChangeLimits)
"""What a tournament (its organiser's interventions, a dispute's correction) orders a table."""


class TournamentPaused(OutOfTurn):
    """The table's tournament is paused: no play until it resumes."""


class Room(msgspec.Struct, frozen=True, kw_only=True):
    paused: bool = False
    people: frozenset[str] = frozenset()  # the tournament's entrants who are not house bots


FREE_ROOM = Room()


def require_room(actor: str, command: c.TableCommand, state: TableBase, room: Room) -> None:
    """Refuse a play command while the tournament is paused, and the croupier's move for a
    person's seat."""
    if room.paused and not (isinstance(command, ORDERS)
                            or (isinstance(command, c.RetireBank) and actor == ORGANISER)):
        raise TournamentPaused(f"the tournament is paused: no {command_kind(command)} until it "
                               "resumes", rule="tournament-paused")
    seat = seat_of(command, state)
    if actor == CROUPIER and seat in room.people:
        raise Forbidden(f"{actor} may not play {seat}'s seat: {seat}'s "
                        f"{command_kind(command)} comes from {seat} only", rule="not-your-seat")


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


def command_kind(command: c.TableCommand) -> str:
    return str(type(command).__struct_config__.tag)
