"""A person who never bets pays for each turn the bet clock passes, when the format says so
(`sitting_out: min-stake`, as `punto-banco-eight`): the real director deals a house table of
punto banco betting in turn, three house bots bet, one person never acts, a real `sabot worker`
runs the bet clocks. Each of the person's turns passes by the clock (`@deadline`) and the house
takes the round's minimum stake for it (`SittingOutCharged`, the clock's act, no bet in their
name); the person ends the round with the starting stack less those charges, where before they
kept it whole (the issue: idle humans finished first and joint second of an EIGHT final)."""

from __future__ import annotations

import time
from pathlib import Path

from domain.game.settings import BettingOrder, SittingOut
from domain.table.aggregate import Table
from domain.table.betting_order import PassReason
from domain.table.defaults import CLOCK
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from infra.services.direction import Tick
from tests.integration.test_silent_people import directed, of
from tests.integration.test_workers import clocks_on_sqlite

SETTINGS = TournamentSettings(
    variant="punto-banco", seats_per_table=4, starting_chips=1000, min_stake=10,
    max_stake=100, coups_per_round=4, prizes=(10000,), tables=1,
    betting_order=BettingOrder.ROTATING, bet_seconds=1, bot_think_seconds=0,
    sitting_out=SittingOut.MIN_STAKE, stages=(Stage(name="only", rounds=1),))
IDLE = "idle"
BOTS = ("bot-1", "bot-2", "bot-3")
EVENING = 90.0  # seconds: far more than the round takes


def test_each_turn_the_clock_passes_costs_the_idle_person_the_minimum(tmp_path: Path) -> None:
    clocks = clocks_on_sqlite(tmp_path)
    producer, worker, service = clocks
    try:
        director, tournament_id = directed(clocks, "idle", SETTINGS, [IDLE], BOTS)
        tournaments = director.tournaments
        table_id = Table.create_id(tournaments.state(tournament_id).table_name(1))
        deadline = time.monotonic() + EVENING
        while director.tick(tournament_id) is not Tick.FINISHED:
            assert time.monotonic() < deadline, "the table stalled"
            time.sleep(0.02)

        events = service.events_of(table_id)
        assert [e for e in events if e.actor == IDLE] == []  # nothing is theirs
        passed = [e for e in of(service, table_id, "BetTurnPassed") if e.player == IDLE]
        charged = [e for e in of(service, table_id, "SittingOutCharged") if e.player == IDLE]
        assert len(passed) == SETTINGS.coups_per_round, passed  # a turn each coup, all clocked
        assert all(e.actor == CLOCK and e.reason is PassReason.CLOCK for e in passed)
        assert [(e.coup, e.amount, e.actor) for e in charged] == [
            (e.coup, SETTINGS.min_stake, CLOCK) for e in passed]
        assert not [e for e in of(service, table_id, "BetPlaced") if e.player == IDLE]
        final = tournaments.state(tournament_id).entrants[IDLE].chips
        assert final == SETTINGS.starting_chips - SETTINGS.min_stake * len(passed)
    finally:
        service.close()
        worker.stop()
        producer.close()
