"""Betting in turn through the store. The bet clock on the real clock: a punto banco table
betting in turn with one second a turn, its deadlines sent (`BetDeadline`, as the API and the
workers send them) to a real `sabot worker` on the embedded broker, which passes a turn whose
clock ran out and leaves alone a turn whose player bet in time; each next turn's deadline is
sent by the worker itself, from the outbox of the command that opened it. And a tournament
betting in turn, its secret bets placed in turn, played to the end by the director."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from domain.bots import next_command
from domain.game.payouts import Spot
from domain.game.settings import BettingOrder, TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import PassReason, bettor
from domain.table.defaults import bet_deadline_command_id
from domain.table.state import Phase
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Advance, Stage
from domain.tournament.settings import TournamentSettings
from infra.services.tables import TableService, seeds_from
from infra.services.tournaments import Director, Tournaments
from infra.store.outbox import BetDeadline, Deadline, kind_of
from tests.integration.test_director import prepared
from tests.integration.test_workers import SECRET, clocks_on_sqlite, wait_until
from workers.deadlines import ACTOR
from workers.director import director_deadlines
from workers.services import send_deadline

SECONDS = 1


def test_the_worker_passes_a_turn_whose_clock_ran_out(tmp_path: Path) -> None:
    producer, worker, service = clocks_on_sqlite(tmp_path)
    try:
        service.seed_source = seeds_from(b"sabot-test-bet-clock")
        service.effects.on(BetDeadline, lambda deadline: send_deadline(deadline, via=producer))
        settings = TableSettings.default(Variant.PUNTO_BANCO, bet_seconds=SECONDS,
                                         betting_order=BettingOrder.ROTATING)
        table_id = service.open_table("clocked", settings, command_id="open").table_id
        for player in ("ann", "bob"):
            service.execute(table_id, c.SeatPlayer(command_id=f"seat-{player}", player=player,
                                                   chips=1000))
        rng = random.Random(3)
        for n in range(20):
            if service.state(table_id).phase is Phase.BETTING:
                break
            service.execute(table_id, next_command(service.state(table_id), rng,
                                                   lambda label, n=n: f"bot-{n}-{label}"))
        assert bettor(service.state(table_id)) == "ann"
        service.execute(table_id, c.PlaceBet(command_id="ann-bets", actor="ann", player="ann",
                                             spot=Spot.BANKER, amount=10))  # in time

        wait_until(lambda: bettor(service.state(table_id)) is None)
        events = service.events_of(table_id)
        [passed] = of(events, "BetTurnPassed")
        assert (passed.coup, passed.player, passed.reason) == (1, "bob", PassReason.CLOCK)
        assert passed.actor == ACTOR
        assert passed.command_id == bet_deadline_command_id(table_id, 1, "bob")
        began = next(e for e in of(events, "BetTurnBegan") if e.player == "bob")
        assert began.seconds == SECONDS
        assert (passed.timestamp - began.timestamp).total_seconds() >= SECONDS
        assert [b.player for b in service.state(table_id).bets] == ["ann"]

        worker.wait_for(lambda line: line["event"] == "deadline.bet-in-time"
                        and line.get("player") == "ann")
        [played] = worker.wait_for(lambda line: line["event"] == "deadline.turn-passed")
        assert (played["player"], played["coup"]) == ("bob", 1)
        service.execute(table_id, c.CloseBetting(command_id="close"))  # every turn was had
        assert service.state(table_id).phase is Phase.PLAYING
    finally:
        service.close()
        worker.stop()
        producer.close()


def of(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if type(e).__name__ == kind]


@pytest.mark.parametrize("seconds", [0, 5])
def test_the_service_sends_a_turn_s_deadline_only_with_a_clock(tmp_path: Path,
                                                               seconds: int) -> None:
    with TableService(url=f"sqlite:///{tmp_path}/sabot.db", secret_key=SECRET) as service:
        sent: list[BetDeadline] = []
        service.effects.on(BetDeadline, sent.append)
        settings = TableSettings.default(Variant.PUNTO_BANCO, bet_seconds=seconds,
                                         betting_order=BettingOrder.ROTATING)
        table_id = service.open_table("t", settings, command_id="open").table_id
        service.execute(table_id, c.SeatPlayer(command_id="seat", player="ann", chips=100))
        service.execute(table_id, c.ShuffleShoe(command_id="shuffle", physical=True))
        service.execute(table_id, c.CutShoe(command_id="cut", player="ann", position=100))
        service.execute(table_id, c.BurnCard(command_id="burn", card="Ah"))  # one more burned
        assert not sent
        service.execute(table_id, c.BurnCard(command_id="burn-1", card="9s"))  # betting opens
        assert bettor(service.state(table_id)) == "ann"
        assert sent == ([BetDeadline(table_id, 1, "ann", seconds)] if seconds else [])


def test_a_tournament_betting_in_turn_plays_to_the_end_and_its_secret_bets_use_turns(
        sqlite_url: str) -> None:
    """The house bots of a rotating-order tournament bet in turn at every coup; on each
    round's last coup their secret bets, placed before their turns, use them."""
    settings = TournamentSettings(
        variant="punto-banco", seats_per_table=4, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=3, prizes=(10000,), buy_in=10, tie_break="share",
        betting_order="rotating", bet_seconds=20,
        stages=(Stage(name="heats", rounds=1, advance=Advance(overall=3)),
                Stage(name="final", rounds=2, secret_bet=True, bet_seconds=10)))
    service, tournament_id = prepared(sqlite_url, settings, players=7)
    Director(service).run(tournament_id)
    state = Tournaments(service).state(tournament_id)
    assert state.results()[0].position == 1

    secret = [e for e in service.events_of(tournament_id)
              if isinstance(e, Tournament.SecretBetPlaced)]
    assert secret
    clocks = set()
    for number in range(1, state.tables_opened + 1):
        events = service.events_of(Table.create_id(state.table_name(number)))
        taken, turn, used = [], None, set()
        for e in events:  # each bet or pass is by the player whose turn began last, but a
            kind = type(e).__name__  # secret bet's, placed at the turn or before it
            if kind == "BetTurnBegan":
                turn = (e.coup, e.player)
                clocks.add(e.seconds)
                assert turn not in used
            elif kind == "BetTurnPassed" and e.reason == "secret-bet":
                used.add((e.coup, e.player))
            elif kind in ("BetPlaced", "BetTurnPassed"):
                assert (e.coup, e.player) == turn and turn not in used
                taken.append(e)
        assert taken
        assert used == {(e.coup, e.player) for e in secret if e.table == state.table_name(
            number)}
    assert clocks == {20, 10}  # the heats' clock, then the final's


def test_the_director_sends_the_deadlines_someone_waits_for(sqlite_url: str) -> None:
    """The director's own commands send the deadlines they start where a player waits on the
    clock, and at an automatically dealt tournament's tables, where it plays everyone at once,
    send nothing and leave nothing pending in the outbox."""
    settings = TournamentSettings(
        variant="punto-banco", seats_per_table=4, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=2, prizes=(10000,), buy_in=10, tie_break="share",
        betting_order="rotating", bet_seconds=20,
        stages=(Stage(name="final", rounds=1, advance=Advance(overall=1)),))
    service, tournament_id = prepared(sqlite_url, settings, players=4)
    director = Director(service)
    sent: list[Deadline | BetDeadline] = []
    director_deadlines(director, sent.append)
    director.run(tournament_id)
    assert Tournaments(service).state(tournament_id).results()[0].position == 1
    began = [e for number in (1,) for e in of(service.events_of(Table.create_id(
        Tournaments(service).state(tournament_id).table_name(number))), "BetTurnBegan")]
    assert began  # turns with a clock were begun by the director's commands ...
    assert sent == []  # ... and nobody waited on them
    with service.database.transaction(write=False) as cursor:
        [row] = service.database.execute(
            cursor, "SELECT count(*) AS n FROM {outbox} WHERE NOT dispatched AND kind = ?",
            (kind_of(BetDeadline),)).fetchall()
    assert row["n"] == 0

    settings_ = TableSettings.default(Variant.PUNTO_BANCO, bet_seconds=5,
                                      betting_order=BettingOrder.ROTATING)
    table_id = service.open_table("own", settings_, command_id="open-own").table_id
    for command in (c.SeatPlayer(command_id="own-seat", player="ann", chips=100),
                    c.ShuffleShoe(command_id="own-shuffle", physical=True),
                    c.CutShoe(command_id="own-cut", player="ann", position=100),
                    c.BurnCard(command_id="own-burn", card="Ah"),
                    c.BurnCard(command_id="own-burn-1", card="9s")):  # betting opens
        service.execute(table_id, command)
    assert sent == [BetDeadline(table_id, 1, "ann", 5)]  # a table of its own: ann waits
    service.close()
