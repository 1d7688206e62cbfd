"""The tables' side of a tournament: the table commands that mirror what it records.

A player seated, moved, busted or put out, a stage that resets the stacks, a round's new
limits, a secret bet's turn and its result, an organiser's correction: each reaches the
tables as commands (`TableOrder`) whose ids follow from the recorded event's, so sending
them again applies them once, whoever sends them.
"""

from __future__ import annotations

import msgspec

from domain.actors import is_official
from domain.game.coup import Side
from domain.game.settings import BettingOrder
from domain.game.variants import rules_for
from domain.table.betting_order import PassReason
from domain.table.commands import (
    AdjustChips,
    ChangeLimits,
    LeaveTable,
    PassBetTurn,
    SeatPlayer,
    TableCommand,
)
from domain.tournament.aggregate import Tournament

TOURNAMENT = "@tournament"  # the actor of the table commands a player's step calls for


class TableOrder(msgspec.Struct, frozen=True):
    """A command the orchestration sends to one table of the tournament."""

    table: str
    command: TableCommand


# A stage that resets the stacks adjusts every player's chips; an intervention that
# corrects or penalises adjusts one player's; a disqualification makes them leave.

def table_orders(tournament: Tournament, recorded: Tournament.Event) -> list[TableOrder]:
    """The table commands that mirror a recorded event, with command ids that follow from
    the event's command id and what it names (so sending them again applies them once,
    whoever sends them, whatever else the tournament recorded in between)."""
    key = f"{tournament.id}/{recorded.command_id}"
    # the tournament moves the chips: a player's own step (a late registration, a
    # secret bet's reveal) reaches the table as the tournament's
    actor = recorded.actor if is_official(recorded.actor) else TOURNAMENT
    match recorded:
        case Tournament.PlayerSeatedAt(player=player, table=table, seat=seat, chips=chips):
            return [TableOrder(table, SeatPlayer(
                command_id=f"{key}/seat/{player}", actor=actor, player=player,
                chips=chips, side=_side(tournament, seat)))]
        case Tournament.PlayerMoved(player=player, from_table=old, to_table=new,
                                    seat=seat, chips=chips):
            key = f"{key}/move/{player}/{new}/{seat}"
            return [
                TableOrder(old, AdjustChips(command_id=f"{key}/out", actor=actor,
                                            player=player, delta=-chips,
                                            reason=f"moved to {new}")),
                TableOrder(old, LeaveTable(command_id=f"{key}/leave", actor=actor,
                                           player=player)),
                TableOrder(new, SeatPlayer(command_id=f"{key}/seat", actor=actor,
                                           player=player, chips=0, side=_side(tournament, seat))),
                TableOrder(new, AdjustChips(command_id=f"{key}/in", actor=actor,
                                            player=player, delta=chips,
                                            reason=f"moved from {old}")),
            ]
        case Tournament.PlayersBusted(table=table, busted=busted):
            return [TableOrder(table, LeaveTable(command_id=f"{key}/leave/{bust.player}",
                                                 actor=actor, player=bust.player))
                    for bust in busted]
        case Tournament.PlayerEliminated(player=player, table=table, coup=None):
            return [TableOrder(table, LeaveTable(command_id=f"{key}/cut/{player}",
                                                 actor=actor, player=player))]
        case Tournament.StageStarted(name=name, reset=reset, tables=tables):
            return [TableOrder(tables[player], AdjustChips(
                command_id=f"{key}/reset/{player}", actor=actor, player=player,
                delta=delta, reason=f"{name}: every stack reset")) for player, delta
                in reset.items()]
        case Tournament.RoundStarted(tables=[*tables], min_stake=low, max_stake=high,
                                     bet_seconds=seconds):
            return [TableOrder(table, ChangeLimits(
                command_id=f"{key}/limits/{table}", actor=actor, min_stake=low,
                max_stake=high, bet_seconds=seconds)) for table in tables]
        case Tournament.SecretBetPlaced(player=player, table=table, coup=coup) if (
                tournament.state.settings.betting_order == BettingOrder.ROTATING):
            return [TableOrder(table, PassBetTurn(  # the turn's bet is the secret one
                command_id=f"{key}/secret-turn/{player}", actor=actor, player=player,
                coup=coup, reason=PassReason.SECRET_BET))]
        case Tournament.SecretBetRevealed(player=player, table=table, delta=delta) if delta:
            return [TableOrder(table, AdjustChips(
                command_id=f"{key}/secret/{player}", actor=actor, player=player,
                delta=delta, reason="secret bet"))]
        case Tournament.SecretBetForfeited(player=player, table=table, amount=amount):
            return [TableOrder(table, AdjustChips(
                command_id=f"{key}/forfeit/{player}", actor=actor, player=player,
                delta=-amount, reason="secret bet never revealed"))]
        case Tournament.InterventionMade(kind="disqualify", player=player, table=table):
            return [TableOrder(table or "", LeaveTable(command_id=f"{key}/out/{player}",
                                                       actor=actor, player=player))]
        case Tournament.InterventionMade(kind="correct-chips" | "penalise", player=player,
                                         table=table, reason=reason):
            return [TableOrder(table or "", AdjustChips(
                command_id=f"{key}/adjust/{player}", actor=actor, player=player,
                delta=recorded.chips_after - recorded.chips_before, reason=reason))]
    return []

def _side(tournament: Tournament, seat: int) -> Side | None:
    """À deux tableaux, odd seats are on the right tableau and even ones on the left."""
    if not rules_for(tournament.state.settings.variant).seats_on_sides:
        return None
    return Side.RIGHT if seat % 2 else Side.LEFT
