"""A pause and a table's command racing: nothing is played once the pause is written.

A table's command is decided in its tournament's room as read a moment before the write
(`TableService.room_read`); a pause recorded by another process in between must not let it
through. The table's write checks, under the partition's lock the pause's write takes too,
that the tournament has not moved since the room was read (`infra.store.ledger.ReadAt`), and
decides again if it has: the bet decided before the pause is refused after it (409
`tournament-paused`), and the table's stream is as the pause left it. Found by the evening
over HTTP (`tests/e2e/test_evening_api.py`): three events written after the pause's answer.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.game.payouts import Spot
from domain.table import commands as c
from domain.table.betting_order import bettor
from domain.table.room import TournamentPaused
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.integration.test_people_at_tables import evening, table_of, until_waiting


def test_a_bet_decided_before_a_pause_another_process_writes_is_not_written_after_it(
        database_url: str) -> None:
    service, director, tournament_id, _ = evening(
        database_url, betting_order="rotating", bet_seconds=20)
    other = TableService(url=database_url)  # the organiser's replica
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        assert bettor(table) == "ann"
        version = service.table(table_id).version
        bet = c.PlaceBet(command_id="ann-bets", actor="ann", player="ann", spot=Spot.BANKER,
                         amount=10)
        decide = service.deciding(bet)
        decisions = []

        def with_a_pause_between(loaded: Any) -> Any:
            read = decide(loaded)  # ann's bet, decided in a room not paused
            if not decisions:  # the first time only: the organiser pauses meanwhile
                Director(other).tournaments.pause(tournament_id, command_id="pause")
            decisions.append(read)
            return read

        with pytest.raises(TournamentPaused):
            service.apply_once(table_id, "table", bet.command_id, with_a_pause_between)
        assert len(decisions) == 1  # decided again on the store's state: refused
        assert len(service.events_of(table_id)) == version  # nothing written at the table
        assert service.recorded_command("ann-bets") is None
        assert director.tournaments.state(tournament_id).paused
    finally:
        other.close()
        service.close()
