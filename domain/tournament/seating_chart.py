"""Each round's seating chart: who sat at which table and seat as the round started (the draw,
and every move and break before it), replayed from the tournament's own events. Before the
first round, the draw's seating alone."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from domain.tournament.aggregate import Tournament
from domain.tournament.base import TournamentBase


class Seat(msgspec.Struct, frozen=True):
    table: str
    seat: int
    player: str


class RoundSeating(msgspec.Struct, frozen=True):
    """The seats of one round (0: the draw, before the first round), table by table."""

    round: int
    stage: str
    seats: list[Seat]


def seats_of(state: TournamentBase) -> list[Seat]:
    return [Seat(table=table, seat=entrant.seat or 0, player=entrant.player)
            for table in state.tables for entrant in state.seated_at(table)]


def seating_by_round(events: Iterable[Any]) -> list[RoundSeating]:
    """The charts of a tournament's rounds, from its events in order (the first creates it)."""
    tournament: Tournament | None = None
    charts: list[RoundSeating] = []
    for event in events:
        tournament = event.mutate(tournament)
        if isinstance(event, Tournament.RoundStarted) and tournament is not None:
            state = tournament.state
            charts.append(RoundSeating(round=event.round, stage=state.current.name,
                                       seats=seats_of(state)))
    if not charts and tournament is not None and tournament.state.tables:
        state = tournament.state
        charts.append(RoundSeating(round=0, stage=state.current.name, seats=seats_of(state)))
    return charts
