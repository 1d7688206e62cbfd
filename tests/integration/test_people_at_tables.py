"""People and house bots at a tournament's tables, through the real director on the store.

At a house-dealt table the director plays the bots' seats and the table's steps and waits for
a person: nothing is recorded as the person's move unless they sent it; when their clock runs
out the default is recorded as the house's (`@deadline`, reason clock); a pause stops that
clock, which resumes with the time it had. At a croupier's table the bots act by themselves,
after their think time, and the croupier deals."""

from __future__ import annotations

import random
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest

from domain.bots import next_command
from domain.game.payouts import Spot
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import PassReason, bettor
from domain.table.defaults import CLOCK
from domain.table.state import Phase, TableState
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from infra.store.outbox import BetDeadline
from tests.integration.test_workers import clocks_on_sqlite, wait_until
from workers.services import send_deadline

BOTS = ("bot-a", "bot-b", "bot-c", "bot-d")


class Clock:
    """The director's clock: the real one, moved on by hand."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def evening(url: str, **format_fields: Any) -> tuple[TableService, Director, uuid.UUID, Clock]:
    """ann (a person) and four house bots drawn at one table of a one-round tournament."""
    fields: dict[str, Any] = {
        "variant": "punto-banco", "seats_per_table": 6, "starting_chips": 1000,
        "min_stake": 10, "max_stake": 100, "coups_per_round": 3, "prizes": (10000,),
        "buy_in": 10, "stages": (Stage(name="only", rounds=1),), **format_fields}
    service = TableService(url=url)
    clock = Clock()
    director = Director(service, clock=clock)
    tournaments = director.tournaments
    tournament_id = tournaments.create("evening", TournamentSettings(**fields), seed=b"people",
                                       command_id="create")
    tournaments.register(tournament_id, "ann", command_id="reg-ann")
    for bot in BOTS:
        tournaments.register(tournament_id, bot, bot=True, command_id=f"reg-{bot}")
    tournaments.start(tournament_id, command_id="start")
    return service, director, tournament_id, clock


def until_waiting(director: Director, tournament_id: uuid.UUID, finished: bool = False) -> None:
    """Tick until the director waits (or, `finished`, until the tournament is over: once a
    person's clock is moved on past their time, every later turn of theirs runs out too)."""
    for _ in range(500):
        tick = director.tick(tournament_id)
        if tick is not Tick.ACTED:
            assert tick is (Tick.FINISHED if finished else Tick.WAITING)
            return
    raise AssertionError("the director never stopped")


def table_of(service: TableService, director: Director, tournament_id: uuid.UUID
             ) -> tuple[uuid.UUID, TableState]:
    [name] = director.tournaments.state(tournament_id).tables
    table_id = Table.create_id(name)
    return table_id, service.state(table_id)


def by(service: TableService, table_id: uuid.UUID, actor: str) -> list[Any]:
    return [e for e in service.events_of(table_id) if e.actor == actor]


def clock_passes(service: TableService, table_id: uuid.UUID) -> list[Any]:
    return [e for e in by(service, table_id, CLOCK) if type(e).__name__ == "BetTurnPassed"]


def test_at_a_house_dealt_table_the_director_waits_for_the_person_and_their_clock(
        sqlite_url: str) -> None:
    service, director, tournament_id, clock = evening(
        sqlite_url, betting_order="rotating", bet_seconds=20)
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        coup = table.coup_number
        assert table.phase is Phase.BETTING and bettor(table) == "ann"
        assert by(service, table_id, "ann") == []  # nobody bet for her
        until_waiting(director, tournament_id)
        assert bettor(service.state(table_id)) == "ann"  # still her turn: she has 20 s

        service.execute(table_id, c.PlaceBet(command_id="ann-bets", actor="ann", player="ann",
                                             spot=Spot.BANKER, amount=10))
        until_waiting(director, tournament_id)  # the bots bet, the coup is dealt, the next
        table_id, table = table_of(service, director, tournament_id)
        assert table.coup_number > coup and bettor(table) == "ann"

        clock.offset += 21  # her clock runs out: the house passes her turns from now on
        until_waiting(director, tournament_id, finished=True)
        passed = clock_passes(service, table_id)
        assert {(e.player, e.reason) for e in passed} == {("ann", PassReason.CLOCK)}
        assert passed[0].coup == table.coup_number + 1
        assert {e.command_id for e in by(service, table_id, "ann")} == {"ann-bets"}
        assert by(service, table_id, "bot-a")  # the bots played their own seats
    finally:
        service.close()


def test_a_pause_stops_a_person_s_clock_which_resumes_with_the_time_it_had(
        sqlite_url: str) -> None:
    service, director, tournament_id, clock = evening(
        sqlite_url, betting_order="rotating", bet_seconds=20)
    tournaments = director.tournaments
    try:
        until_waiting(director, tournament_id)
        table_id, _ = table_of(service, director, tournament_id)
        clock.offset += 15  # 15 s of her 20 played
        tournaments.pause(tournament_id, at=clock(), command_id="pause")
        clock.offset += 300
        assert director.tick(tournament_id) is Tick.WAITING
        tournaments.resume(tournament_id, at=clock(), command_id="resume")
        until_waiting(director, tournament_id)
        assert bettor(service.state(table_id)) == "ann"  # 5 s left
        clock.offset += 6
        until_waiting(director, tournament_id, finished=True)
        passed = clock_passes(service, table_id)
        assert passed[0].coup == 1
        assert {(e.player, e.reason) for e in passed} == {("ann", PassReason.CLOCK)}
    finally:
        service.close()


def test_betting_when_they_like_betting_closes_on_the_person_s_clock_without_her_bet(
        sqlite_url: str) -> None:
    service, director, tournament_id, clock = evening(sqlite_url, people_bet_seconds=30)
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        assert table.phase is Phase.BETTING
        assert {b.player for b in table.bets} == set(BOTS)
        clock.offset += 31
        until_waiting(director, tournament_id, finished=True)
        closed = [e for e in service.events_of(table_id) if type(e).__name__ == "CoupSettled"]
        assert closed and by(service, table_id, "ann") == []
    finally:
        service.close()


def test_at_a_croupier_s_table_the_bots_act_after_their_think_time(sqlite_url: str) -> None:
    service, director, tournament_id, clock = evening(sqlite_url, dealing="croupier")
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        rng = random.Random(5)
        for n in range(20):  # the croupier's steps only: shuffle, cut, burn
            if service.state(table_id).phase is Phase.BETTING:
                break
            state = service.state(table_id)
            service.execute(table_id, next_command(
                state, rng, lambda label, n=n: f"croupier-{n}-{label}",
                people=frozenset(state.seated())))
        assert director.tick(tournament_id) is Tick.WAITING
        assert service.state(table_id).bets == []  # a bot thinks 2 s first
        clock.offset += 2.5
        for _ in BOTS:
            assert director.tick(tournament_id) is Tick.WAITING
        table = service.state(table_id)
        assert sorted(b.player for b in table.bets) == sorted(BOTS)
        assert director.tick(tournament_id) is Tick.WAITING  # ann is not the bots' to play
        assert len(service.state(table_id).bets) == len(BOTS)
        assert {e.actor for e in service.events_of(table_id)
                if type(e).__name__ == "BetPlaced"} == set(BOTS)
        assert table.phase is Phase.BETTING  # closing betting is the croupier's step
    finally:
        service.close()


def test_the_resume_sends_a_person_s_clock_again_with_the_time_it_had_left(
        sqlite_url: str) -> None:
    """A deadline that came during the pause played nothing: the resume sends the clock of
    every turn the tables await again, with its time left; a deadline coming after a pause
    within its time finds time left; a turn over has none to send."""
    service, director, tournament_id, _ = evening(
        sqlite_url, betting_order="rotating", bet_seconds=20)
    tournaments = director.tournaments
    sent: list[BetDeadline] = []
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        service.effects.on(BetDeadline, sent.append)
        began = service.last_move(table_id)
        tournaments.pause(tournament_id, at=began + 5, command_id="pause")
        tournaments.resume(tournament_id, at=began + 105, command_id="resume")
        turn = BetDeadline(table_id, table.coup_number + 1, "ann", 20)
        [again] = sent
        assert again.seconds == pytest.approx(15, abs=0.01)
        assert msgspec.structs.replace(again, seconds=20) == turn
        left = service.clock_left(turn, began + 110)
        assert left == pytest.approx(10, abs=0.01)  # 10 s of play since her turn began
        service.execute(table_id, c.PassBetTurn(command_id="ann-passes", actor="ann",
                                                player="ann"))
        assert service.clock_left(turn, began + 110) is None  # her turn is over
    finally:
        service.close()


def test_a_real_worker_passes_a_person_s_turn_only_once_the_pause_is_made_up(
        tmp_path: Path) -> None:
    """At a croupier's table betting in turn with a 2 s clock, a pause of a second during
    ann's turn: the `sabot worker` applying the deadline passes her turn 3 s after it began,
    not 2 (the deadline finds time left and is sent again; the resume sends it too)."""
    producer, worker, service = clocks_on_sqlite(tmp_path)
    try:
        service.effects.on(BetDeadline, lambda clock: send_deadline(clock, via=producer))
        director = Director(service)
        tournaments = director.tournaments
        tournament_id = tournaments.create("paused", TournamentSettings(
            variant="punto-banco", seats_per_table=6, starting_chips=1000, min_stake=10,
            max_stake=100, coups_per_round=3, prizes=(10000,), dealing="croupier",
            betting_order="rotating", bet_seconds=2, bot_think_seconds=0,
            stages=(Stage(name="only", rounds=1),)), seed=b"pause", command_id="create")
        tournaments.register(tournament_id, "ann", command_id="reg-ann")
        for bot in BOTS[:2]:
            tournaments.register(tournament_id, bot, bot=True, command_id=f"reg-{bot}")
        tournaments.start(tournament_id, command_id="start")
        until_waiting(director, tournament_id)
        table_id, _ = table_of(service, director, tournament_id)
        rng = random.Random(5)
        for n in range(20):  # the croupier's steps: shuffle, cut, burn
            state = service.state(table_id)
            if state.phase is Phase.BETTING:
                break
            service.execute(table_id, next_command(
                state, rng, lambda label, n=n: f"croupier-{n}-{label}",
                people=frozenset(state.seated())))
        wait_until(lambda: director.tick(tournament_id) is Tick.WAITING
                   and bettor(service.state(table_id)) == "ann")  # the bots bet before her
        began = service.last_move(table_id)
        tournaments.pause(tournament_id, command_id="pause")
        time.sleep(1.0)
        tournaments.resume(tournament_id, command_id="resume")
        wait_until(lambda: bool(clock_passes(service, table_id)))
        [passed] = clock_passes(service, table_id)
        assert (passed.player, passed.reason) == ("ann", PassReason.CLOCK)
        assert passed.timestamp.timestamp() - began >= 2.8
        worker.wait_for(lambda line: line["event"] in (
            "deadline.paused", "deadline.paused-for-a-while"))
    finally:
        service.close()
        worker.stop()
        producer.close()
