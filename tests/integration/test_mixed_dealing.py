"""One tournament, two dealings, through the real director on the store: with
`croupier_tables: 1`, the tournament's first table waits for its croupier (nobody shuffles
or deals there but them) while the director deals the step's coup at the second, its house
bots playing; the clocks of the croupier's table go to the deadlines' worker, the house
table's the director keeps. A person's turn at the house table that waits for the croupier's
table to end the round has its clock from the next round's start."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable

import msgspec
import pytest

from domain.game.settings import BettingOrder
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import bettor
from domain.table.defaults import CLOCK
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from infra.store.outbox import BetDeadline, Deadline
from tests.integration.test_people_at_tables import Clock
from tests.integration.test_silent_people import Croupier
from workers.director import director_deadlines

SETTINGS = TournamentSettings(
    variant="punto-banco", seats_per_table=4, starting_chips=1000, min_stake=10, max_stake=100,
    coups_per_round=2, prizes=(10000,), buy_in=10, tables=2, croupier_tables=1,
    stages=(Stage(name="only", rounds=1),))


def test_the_first_table_waits_for_its_croupier_and_the_house_deals_the_second(
        sqlite_url: str) -> None:
    service = TableService(url=sqlite_url)
    try:
        director = Director(service)
        tournaments = director.tournaments
        tournament_id = tournaments.create("mixed", SETTINGS, seed=b"mixed",
                                           command_id="create")
        for n in range(8):
            tournaments.register(tournament_id, f"bot-{n}", bot=True, command_id=f"reg-{n}")
        tournaments.start(tournament_id, command_id="start")
        for _ in range(500):
            if director.tick(tournament_id) is not Tick.ACTED:
                break
        assert director.tick(tournament_id) is Tick.WAITING  # on the croupier's table
        state = tournaments.state(tournament_id)
        croupiers, house = (Table.create_id(state.table_name(n)) for n in (1, 2))

        kinds = Counter(type(e).__name__ for e in service.events_of(croupiers))
        assert kinds["ShoeShuffled"] == 0 and kinds["CoupSettled"] == 0
        assert service.state(croupiers).coup_number == 0
        dealt = [e for e in service.events_of(house) if type(e).__name__ == "CoupSettled"]
        assert len(dealt) == 1  # the step's coup: the next step waits for the croupier's
        assert all(e.command_id.startswith("bots:") for e in dealt)  # the director's play

        sent: list[Deadline | BetDeadline] = []
        director_deadlines(director, sent.append)
        for table_id in (croupiers, house):
            service.effects.handlers[BetDeadline](BetDeadline(table_id, 1, "bot-0", 5))
        assert [deadline.table_id for deadline in sent] == [croupiers]
    finally:
        service.close()


def test_a_person_s_turn_waiting_for_the_next_round_has_its_clock_from_the_round_s_start(
        sqlite_url: str) -> None:
    """ann, at the house-dealt table, bets first on its first coup of round 2: her turn began
    as the table ended round 1, but bets are refused until the croupier's table, slower by a
    minute, ends it too. Her clock (20 s) runs from round 2's start, not from her turn's: the
director's, and a deadline's worker's (`clock_left`) alike."""
    settings = msgspec.structs.replace(
        SETTINGS, coups_per_round=4, betting_order=BettingOrder.ROTATING,
        people_bet_seconds=20, bot_think_seconds=0, stages=(Stage(name="only", rounds=2),))
    service = TableService(url=sqlite_url)
    try:
        clock = Clock()
        director = Director(service, clock=clock)
        tournaments = director.tournaments
        tournament_id = tournaments.create("mixed", settings, seed=b"mixed-3",
                                           command_id="create")
        tournaments.register(tournament_id, "ann", command_id="reg-ann")
        for n in range(7):
            tournaments.register(tournament_id, f"bot-{n}", bot=True, command_id=f"reg-{n}")
        tournaments.start(tournament_id, command_id="start")
        state = tournaments.state(tournament_id)
        croupiers, house = (Table.create_id(state.table_name(n)) for n in (1, 2))
        assert service.state(house).seated()[0] == "ann"  # first to bet on coups 1 and 5
        croupier = Croupier(service, croupiers)

        def closed(table_id: uuid.UUID) -> int:
            table = service.state(table_id)
            return table.coup_number - (table.coup is not None)

        def play(until: Callable[[], bool], croupier_deals: Callable[[], bool]) -> None:
            for n in range(2000):
                if until():
                    return
                director.tick(tournament_id)
                if croupier_deals():
                    croupier.step()
                table = service.state(house)
                if bettor(table) == "ann" and table.coup_number < settings.coups_per_round:
                    service.execute(house, c.PassBetTurn(command_id=f"ann-{n}", actor="ann",
                                                         player="ann"))
                time.sleep(0.01)
            raise AssertionError("the evening stalled")

        play(lambda: service.state(house).coup_number == 4 and bettor(service.state(house))
             == "ann", lambda: closed(croupiers) < 3)
        turn = BetDeadline(house, 5, "ann", 20)  # as a worker would have it from the API
        assert service.clock_left(turn, clock() + 100) == 20  # it waits for round 2
        clock.offset += 60  # the croupier's table takes a minute more over its last coup
        play(lambda: tournaments.state(tournament_id).round == 2, lambda: True)
        started = tournaments.state(tournament_id).clock
        assert started is not None
        assert service.clock_left(turn, started.started_at + 5) == pytest.approx(15)
        for _ in range(5):
            director.tick(tournament_id)
        assert bettor(service.state(house)) == "ann"  # her 20 s run from the round's start
        assert [e for e in service.events_of(house) if e.actor == CLOCK] == []
        clock.offset += 21
        director.tick(tournament_id)
        [passed] = [e for e in service.events_of(house)
                    if e.actor == CLOCK and type(e).__name__ == "BetTurnPassed"]
        assert (passed.player, passed.coup) == ("ann", 5)
    finally:
        service.close()
