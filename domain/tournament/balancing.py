"""A tournament's table balancing: the breaks and moves that keep the tables within the
tolerance (a broken table's players reseated from the seeded stream), and applying them.

These are the steps of `TournamentBase` (domain/tournament/state.py), which keeps the state and
asks them; each validates before it changes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from domain.errors import NotFound, RuleViolation
from domain.tournament import seating
from domain.tournament.base import TournamentBase
from domain.tournament.entrants import Status
from domain.tournament.records import Break, Phase
from domain.tournament.seating import shuffled


class Move(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    from_table: str
    to_table: str
    seat: int


def balancing_plan(state: TournamentBase, seed: bytes,
                   breaking: str | None = None) -> list[Break | Move]:
    """The breaks and moves that balance the tables, in order.

    While the players fit at one table fewer, the table with the fewest players (the
    highest number on a tie) breaks: the seeded stream orders its players, and each in
    turn sits at the table with the fewest players (lowest number on a tie), on its
    lowest free seat. Then, while the largest and smallest tables differ by more than the
    tolerance, one player moves from the largest (lowest number on a tie) to the
    smallest (lowest number on a tie): the one moved least so far, earliest in the draw
    on a tie, to the lowest free seat. `breaking`: a table the organiser breaks first.
    """
    if state.phase in (Phase.REGISTRATION, Phase.FINISHED):
        return []
    seating.check_seed(state, seed)
    number = {t: i for i, t in enumerate(state.tables)}
    layout: dict[str, dict[int, str]] = {t: {} for t in state.tables}
    seated = (e for e in state.entrants.values() if e.status is Status.SEATED)
    for entrant in sorted(seated, key=lambda e: e.seat or 0):  # each table's as seated_at's
        if entrant.table in layout:
            layout[entrant.table][entrant.seat or 0] = entrant.player
    moves = {p: e.moves for p, e in state.entrants.items()}
    rank = {p: e.draw_rank or 0 for p, e in state.entrants.items()}
    seats = state.settings.seats_per_table
    plan: list[Break | Move] = []

    def smallest() -> str:
        return min(layout, key=lambda t: (len(layout[t]), number[t]))

    def reseat(player: str, from_table: str, to_table: str) -> None:
        seat = min(s for s in range(1, seats + 1) if s not in layout[to_table])
        layout[to_table][seat] = player
        moves[player] += 1
        plan.append(Move(player=player, from_table=from_table, to_table=to_table, seat=seat))

    if breaking is not None and (breaking not in layout or len(layout) < 2
                                 or sum(map(len, layout.values())) > (len(layout) - 1) * seats):
        raise RuleViolation(f"{breaking} is not a table whose players fit at the others",
                            rule="break-table")
    while len(layout) > 1:
        players = sum(len(at) for at in layout.values())
        if players <= (len(layout) - 1) * seats:
            broken = breaking if breaking in layout else min(
                layout, key=lambda t: (len(layout[t]), -number[t]))
            at_broken = layout.pop(broken)
            leaving = tuple(at_broken[s] for s in sorted(at_broken))
            order = tuple(shuffled(seed, state.name, f"break/{broken}", leaving))
            plan.append(Break(table=broken, players=leaving, order=order))
            for player in order:
                reseat(player, broken, smallest())
            continue
        largest = min(layout, key=lambda t: (-len(layout[t]), number[t]))
        small = smallest()
        if len(layout[largest]) - len(layout[small]) <= state.settings.tolerance:
            break
        seat = min(layout[largest], key=lambda s: (moves[layout[largest][s]],
                                                   rank[layout[largest][s]]))
        reseat(layout[largest].pop(seat), largest, small)
    return plan


def require_chips(plan: Sequence[Break | Move], chips: Mapping[str, int]) -> None:
    """Refuse to carry out `plan` without the chips of every player it moves."""
    for step in plan:
        if not isinstance(step, Break) and step.player not in chips:
            raise NotFound(f"{step.player}'s chips are needed to move them",
                           rule="unknown-chips")


def break_table(state: TournamentBase, table: str, players: Sequence[str],
                order: Sequence[str]) -> None:
    """Close a table; its players, reseated in `order`, move next."""
    if table not in state.tables or len(state.tables) < 2:
        raise RuleViolation(f"{table} is not a table that can break", rule="break-table")
    if list(players) != [e.player for e in state.seated_at(table)] or sorted(order) != sorted(
        players
    ):
        raise RuleViolation(f"a broken table's players are those at {table}, reseated once "
                            "each", rule="break-players")
    state.tables.remove(table)
    state.breaks.append(Break(table=table, players=tuple(players), order=tuple(order)))


def move(state: TournamentBase, player: str, from_table: str, to_table: str, seat: int,
         chips: int) -> None:
    """A player changes table with their chips."""
    entrant = state.entrant(player)
    if entrant.status is not Status.SEATED or entrant.table != from_table:
        raise RuleViolation(f"{player} is not playing at {from_table}", rule="move-player")
    if to_table not in state.tables or to_table == from_table:
        raise NotFound(f"{to_table} is not another open table", rule="unknown-table")
    if seat not in seating.free_seats(state, to_table):
        raise RuleViolation(f"seat {seat} of {to_table} is not free", rule="seat-taken")
    if chips < 1:
        raise RuleViolation("a player in play has chips", rule="move-chips")
    entrant.table, entrant.seat, entrant.chips = to_table, seat, chips
    entrant.moves += 1
