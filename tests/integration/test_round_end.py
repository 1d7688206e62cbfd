"""A round's end through the real director on the store: a person who bets right after the
round's last coup is settled is refused (`round-over`, nothing written), so that nobody has
chips in play when the round's end puts players out, and the tournament finishes."""

from __future__ import annotations

import pytest

from domain.errors import DomainError
from domain.game.payouts import Spot
from domain.table import commands as c
from domain.table.state import Phase
from domain.tournament.formats import Stage
from domain.tournament.records import Phase as TournamentPhase
from infra.services.direction import Tick
from tests.integration.test_people_at_tables import evening, table_of


def test_a_bet_after_the_rounds_last_coup_is_refused_and_the_tournament_finishes(
        sqlite_url: str) -> None:
    service, director, tournament_id, _ = evening(
        sqlite_url, coups_per_round=2, stages=(Stage(name="heats", rounds=2),))
    state = director.tournaments.state
    refused = []
    try:
        for n in range(400):
            tick = director.tick(tournament_id)
            if tick is Tick.FINISHED:
                break
            tournament = state(tournament_id)
            if tournament.phase is TournamentPhase.SEATED or not tournament.tables:
                continue  # no round yet
            table_id, table = table_of(service, director, tournament_id)
            if table.phase is not Phase.BETTING or any(b.player == "ann" for b in table.bets):
                continue
            bet = c.PlaceBet(command_id=f"ann-{n}", actor="ann", player="ann",
                             spot=Spot.BANKER, amount=10)
            if tournament.phase is TournamentPhase.RUNNING and (
                    table.coup_number < 2 * tournament.round):  # the round has that coup
                service.execute(table_id, bet)
                continue
            version = service.table(table_id).version  # the round's last is over
            with pytest.raises(DomainError) as caught:
                service.execute(table_id, bet)
            assert (caught.value.status, caught.value.rule) == (409, "round-over")
            assert service.table(table_id).version == version
            refused.append(table.coup_number)
        assert tick is Tick.FINISHED
        assert refused and set(refused) <= {2, 4}  # after each round's last coup
        assert state(tournament_id).entrants["ann"].position is not None
    finally:
        service.close()
