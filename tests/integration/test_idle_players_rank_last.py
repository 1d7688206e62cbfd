"""A format in which idle players cannot win (issue 37), played by the real director over a
store, a real `sabot worker` running the bet clocks of people who never act.

- `min_bets`: a person who never bets keeps their whole stack (sitting out is free here), yet
  ranks after every house bot that made the minimum of bets: the round's end records each
  player's bets, counted at the tables.
- A play-off among people who never bet ties again, as the format's `play-off` says ("who bets
  goes first, then its chips"), and after the last one the seating draw's order settles it:
  each play-off records what settled it, the draw's order included, not silently.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

from domain.game.settings import BettingOrder
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Stage, TieBreak
from domain.tournament.records import PlayOffDecision
from domain.tournament.settings import TournamentSettings
from domain.tournament.stages import MAX_PLAYOFFS
from infra.services.direction import Tick
from infra.services.tournaments import Director
from tests.integration.test_silent_people import directed
from tests.integration.test_workers import clocks_on_sqlite

SETTINGS = TournamentSettings(
    variant="punto-banco", seats_per_table=4, starting_chips=1000, min_stake=10,
    max_stake=100, coups_per_round=4, prizes=(10000,), tables=1,
    betting_order=BettingOrder.ROTATING, bet_seconds=1, bot_think_seconds=0,
    min_bets=2, stages=(Stage(name="only", rounds=1),))
IDLE = "idle"
BOTS = ("bot-1", "bot-2", "bot-3")
EVENING = 120.0  # seconds: far more than the tournament takes


def finish(director: Director, tournament_id: uuid.UUID) -> None:
    deadline = time.monotonic() + EVENING
    while director.tick(tournament_id) is not Tick.FINISHED:
        assert time.monotonic() < deadline, "the tournament stalled"
        time.sleep(0.02)


def recorded(director: Director, tournament_id: uuid.UUID, kind: type) -> list[object]:
    return [e for e in director.tournaments.service.events_of(tournament_id)
            if isinstance(e, kind)]


def test_a_person_who_never_bets_ranks_after_every_player_who_made_the_minimum(
        tmp_path: Path) -> None:
    clocks = clocks_on_sqlite(tmp_path)
    producer, worker, service = clocks
    try:
        director, tournament_id = directed(clocks, "minimum", SETTINGS, [IDLE], BOTS)
        finish(director, tournament_id)
        state = director.tournaments.state(tournament_id)
        table = service.state(Table.create_id(state.table_name(1)))
        (ended,) = recorded(director, tournament_id, Tournament.RoundEnded)
        assert isinstance(ended, Tournament.RoundEnded)
        assert ended.coups_bet == {p: table.coups_bet.get(p, 0) for p in (IDLE, *BOTS)}
        assert ended.coups_bet[IDLE] == 0 and min(ended.coups_bet[b] for b in BOTS) >= 2
        assert ended.chips[IDLE] == SETTINGS.starting_chips  # sitting out cost nothing
        assert state.entrants[IDLE].position == len(BOTS) + 1
        assert [r.player for r in state.results()][-1] == IDLE
    finally:
        service.close()
        worker.stop()
        producer.close()


def test_a_play_off_among_people_who_never_bet_is_settled_by_the_draw_s_order_on_record(
        tmp_path: Path) -> None:
    clocks = clocks_on_sqlite(tmp_path)
    producer, worker, service = clocks
    settings = TournamentSettings(
        variant="punto-banco", seats_per_table=4, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=1, prizes=(10000,), tables=1,
        betting_order=BettingOrder.ROTATING, bet_seconds=1, tie_break=TieBreak.PLAY_OFF,
        stages=(Stage(name="final", rounds=1),))
    people = ("ann", "bob")
    try:
        director, tournament_id = directed(clocks, "idle-final", settings, people, ())
        finish(director, tournament_id)
        played = recorded(director, tournament_id, Tournament.PlayOffPlayed)
        assert [(e.idle, e.decided_by) for e in played if isinstance(
            e, Tournament.PlayOffPlayed)] == [
            (list(people), PlayOffDecision.AGAIN)] * (MAX_PLAYOFFS - 1) + [
            (list(people), PlayOffDecision.DRAW_ORDER)]
        state = director.tournaments.state(tournament_id)
        first = min(people, key=lambda p: state.entrants[p].draw_rank or 0)
        assert [(r.player, r.position) for r in state.results()] == [
            (first, 1), (next(p for p in people if p != first), 2)]
    finally:
        service.close()
        worker.stop()
        producer.close()
