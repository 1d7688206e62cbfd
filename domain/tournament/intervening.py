"""The organiser's interventions as the tournament records them: a late player added, a
table broken, a player moved, disqualified, penalised or their chips corrected, each an
`InterventionMade` with its reason and the chips before and after, then the steps it takes
(the seat, the reseating, the move, the positions due)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from domain.errors import RuleViolation
from domain.tournament import commands as tc
from domain.tournament.state import TournamentState


class Tournament(Protocol):
    """The steps of the Tournament aggregate an intervention records."""

    state: TournamentState

    def _register(self, player: str, bot: bool, actor: str, command_id: str) -> str: ...

    @property
    def _intervened(self) -> Callable[..., None]: ...

    @property
    def _moved(self) -> Callable[..., None]: ...

    def _balance(self, seed: bytes, chips: Mapping[str, int], breaking: str | None,
                 actor: str, command_id: str) -> None: ...

    def _place_due(self, actor: str, command_id: str) -> None: ...


def record_intervention(tournament: Tournament, command: tc.Intervene, seed: Callable[[], bytes],
                        actor: str, command_id: str) -> None:
    """Recorded with its reason and the chips before and after."""
    kind, player, chips, table = (command.intervention, command.player, command.chips,
                                  command.table)
    record = {"kind": kind, "reason": command.reason, "actor": actor,
              "command_id": command_id}
    if kind == "add-late-player":
        player = tournament._register(player, False, actor, command_id)
        start = tournament.state.settings.starting_chips
        tournament._intervened(player=player, chips_before=0, chips_after=start,
                               table=tournament.state.entrant(player).table, **record)
        return
    if kind == "break-table":
        if table is None:
            raise RuleViolation("breaking a table names it", rule="break-table")
        tournament.state.balancing_plan(seed(), table)  # refused before anything is recorded
        tournament._intervened(player="", chips_before=0, chips_after=0, table=table, **record)
        tournament._balance(seed(), chips, table, actor, command_id)
        return
    entrant = tournament.state.entrant(player)
    before = chips.get(player, entrant.chips)
    after = {"disqualify": 0, "move": before}.get(kind, before + command.delta)
    where = table if kind == "move" else entrant.table
    if kind == "move" and (table is None or not tournament.state.free_seats(table)
                           or table not in tournament.state.tables):
        raise RuleViolation(f"{table} is not an open table with a free seat",
                            rule="move-player")
    tournament._intervened(player=player, chips_before=before, chips_after=after,
                           table=where, **record)
    if kind == "move":
        assert table is not None
        tournament._moved(player=player, from_table=entrant.table or "", to_table=table,
                          seat=tournament.state.free_seats(table)[0], chips=before,
                          actor=actor, command_id=command_id)
    tournament._place_due(actor, command_id)
