"""A person who never acts stalls no chemin de fer table, house-dealt or croupier-dealt.

One tournament of two tables (`croupier_tables: 1`): `sil-a` sits at the croupier's table,
`sil-b` at the house-dealt one, three house bots at each; neither person ever sends a command.
The real director deals the house table and makes the bots think at the croupier's; the
croupier takes the table's steps through the service as a croupier would (never a seat's
move); a real `sabot worker` plays the croupier's table's clocks. Every move awaited of a
silent person (the shoe offered to them, their hand as banker) runs on their one-second
decision clock and, run out, is the house's default (`@deadline`), never theirs; a stake or a
banco is theirs to make or not, so betting closes without them. Midway, a pause stops the
clock of the shoe offered to `sil-a`, which resumes with the time it had. The round's coups are
all played at both tables and the tournament finishes (a shoe offered after a table's last coup
waits for a next round: its clock with it).
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

from domain.bots import next_command
from domain.errors import DomainError
from domain.table.aggregate import Table
from domain.table.defaults import CLOCK
from domain.table.room import seat_of
from domain.table.state import Phase
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.integration.test_workers import Clocks, clocks_on_sqlite
from workers.director import director_deadlines
from workers.services import send_deadline

SETTINGS = TournamentSettings(
    variant="chemin-de-fer", seats_per_table=4, starting_chips=1000, min_stake=10,
    max_stake=100, coups_per_round=12, prizes=(10000,), tables=2, croupier_tables=1,
    decision_seconds=1, people_bet_seconds=1, bot_think_seconds=0,
    stages=(Stage(name="only", rounds=1),))
SILENT = {"sil-a": 1, "sil-b": 2}  # the table each is drawn at (the seed's draw)
BOTS = tuple(f"bot-{n}" for n in range(6))
EVENING = 120.0  # seconds: far more than the evening takes
CROUPIER_WAITS = 0.3  # seconds the croupier lets the players stake before closing betting

HAND_DEFAULTS = ("ThirdCardAsked", "HandStood")


class Croupier:
    """The croupier of a table: its next step when it is the table's (none of a seat's)."""

    def __init__(self, service: TableService, table_id: uuid.UUID) -> None:
        self.service, self.table_id = service, table_id
        self.rng, self.steps = random.Random(11), 0

    def step(self) -> None:
        state = self.service.state(self.table_id)
        with suppress(DomainError):  # a pause, the round over, nobody staked yet: not now
            move = next_command(state, self.rng, lambda label: f"croupier-{self.steps}-{label}",
                                people=frozenset(state.seated()))
            waited = time.time() - self.service.last_move(self.table_id)
            if seat_of(move, state) is not None or (
                    state.phase is Phase.BETTING and waited < CROUPIER_WAITS):
                return
            self.steps += 1
            self.service.execute(self.table_id, move)


def of(service: TableService, table_id: uuid.UUID, *kinds: str) -> list[Any]:
    return [e for e in service.events_of(table_id) if type(e).__name__ in kinds]


def directed(clocks: Clocks, name: str, settings: TournamentSettings, people: Iterable[str],
             bots: Iterable[str]) -> tuple[Director, uuid.UUID]:
    """A tournament of `people` and house `bots`, started, under a director whose clocks the
    worker of `clocks` runs."""
    producer, _, service = clocks
    director = Director(service)
    director_deadlines(director, lambda clock: send_deadline(clock, via=producer))
    tournaments = director.tournaments
    tournament_id = tournaments.create(name, settings, seed=f"{name}-0".encode(),
                                       command_id="create")
    bots = tuple(bots)
    for player in (*people, *bots):
        tournaments.register(tournament_id, player, bot=player in bots,
                             command_id=f"reg-{player}")
    tournaments.start(tournament_id, command_id="start")
    return director, tournament_id


def test_a_silent_person_stalls_neither_a_croupier_s_nor_a_house_dealt_table(
        tmp_path: Path) -> None:
    clocks = clocks_on_sqlite(tmp_path)
    producer, worker, service = clocks
    try:
        director, tournament_id = directed(clocks, "silent", SETTINGS, SILENT, BOTS)
        tournaments = director.tournaments
        state = tournaments.state(tournament_id)
        assert {p: state.entrants[p].table for p in SILENT} == {
            p: state.table_name(n) for p, n in SILENT.items()}
        croupiers, house = (Table.create_id(state.table_name(n)) for n in (1, 2))
        croupier = Croupier(service, croupiers)

        paused = False
        deadline = time.monotonic() + EVENING
        while director.tick(tournament_id) is not Tick.FINISHED:
            assert time.monotonic() < deadline, "a table stalled"
            croupier.step()
            table = service.state(croupiers)
            if not paused and table.phase is Phase.NO_BANK and table.bank_offered_to == "sil-a":
                paused = True  # her clock stops for the pause, and resumes with its time
                tournaments.pause(tournament_id, at=time.time(), command_id="pause")
                time.sleep(SETTINGS.decision_seconds + 1)
                assert service.state(croupiers).bank_offered_to == "sil-a"
                tournaments.resume(tournament_id, at=time.time(), command_id="resume")
            time.sleep(0.02)
        assert paused, "the shoe was never offered to sil-a"

        for person, table_id in (("sil-a", croupiers), ("sil-b", house)):
            events = service.events_of(table_id)
            assert [e for e in events if e.actor == person] == []  # nothing is theirs
            assert len(of(service, table_id, "CoupClosed")) >= SETTINGS.coups_per_round
            clocks = [e for e in of(service, table_id, "DecisionClockStarted")
                      if e.player == person]
            offers = [e for e in clocks if e.side is None]
            assert offers and all(e.seconds == SETTINGS.decision_seconds for e in clocks)
            declined = [e for e in of(service, table_id, "BankDeclined") if e.player == person]
            played = [e for e in offers if e.coup < SETTINGS.coups_per_round]  # not after the
            assert played and [e.actor for e in declined] == [CLOCK] * len(played)  # last coup
            hands = {(e.coup, e.side) for e in clocks if e.side is not None}
            defaults = {(e.coup, e.side) for e in of(service, table_id, *HAND_DEFAULTS)
                        if e.actor == CLOCK}
            assert hands <= defaults  # each hand of theirs decided by the clock
        worker.wait_for(lambda line: line["event"] == "deadline.bank-passed"
                        and line.get("player") == "sil-a")
    finally:
        service.close()
        worker.stop()
        producer.close()
