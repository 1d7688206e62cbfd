"""The evening over HTTP on the servers (issue 26): `sabot serve --no-worker` and a separate
`sabot worker` on PostgreSQL and Redis, six people (each with their own player token) and four
house bots at two tables on short clocks, two rounds of two coups. The people play every move
of theirs over HTTP when it is theirs (the moves the bots' engine would make for their seat);
`fay` never acts. Mid-round the organiser pauses: any table command, by a person, the croupier
of the table or the organiser, is 409 `tournament-paused` and nothing is written while the room
waits longer than any clock; then resume. Once finished the results are published, and the
record is checked: every event whose actor is a person came from a command that person's own
token sent, every bot's from the house, none of fay's is hers but her turns passed by the
clock; `sabot audit verify` (its attribution check included) finds the store intact.

`test_an_evening_with_people_over_http_on_the_servers`: punto banco at two house-dealt tables,
bets in a rotating order.

`test_the_chemin_de_fer_evening_over_http_on_the_servers`: chemin de fer, the first table
croupier-dealt (its croupier, with a croupier's token for that table, sends the table's steps
over HTTP: shuffle, cut, burn, the first bank given, close betting, deal, settle, pay), the
second house-dealt; the bots act by themselves at both. The people stake, call banco, take the
bank, retire it and draw or stand: the bank is given to the person before fay, who retires it
so that it is offered to her and her clock declines it.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from api.commands.worker import running_worker
from api.tokens import Grant, Role, TokenStore
from domain.actors import CROUPIER
from domain.bots import DEFAULT_HABITS, Habits, next_command, playable
from domain.game.payouts import Spot
from domain.game.sides import Side
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import yet_to_stake
from domain.table.defaults import CLOCK as DEADLINE
from domain.table.room import command_kind, seat_of
from domain.table.state import Phase
from domain.tournament.aggregate import Tournament
from infra.audit.checks import complete_checks
from infra.audit.verify import verify
from infra.services.tables import TableService
from infra.store.senders import HOUSE, player_sender
from infra.store.signing import create_key
from projections.audit_port import PROJECTIONS
from tests.client import CLIENT
from tests.e2e.test_api import KEY, free_port

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
PEOPLE = ("ann", "bea", "cid", "dan", "eve", "fay")
SILENT = "fay"
BOTS = ("bot-1", "bot-2", "bot-3", "bot-4")
EVENING = 150.0
CHEMIN_DE_FER_EVENING = 300.0  # a stalled evening fails by then, on two loaded cores
CLOCK = 4  # seconds on a person's clocks in chemin de fer: time for a click on two shared cores
BOT_THINK = 3  # a bot's seconds: the banker's page shows the bank given before a bot stakes
CHEMIN_DE_FER = {
    "variant": "chemin-de-fer", "seats_per_table": 5, "tables": 2, "croupier_tables": 1,
    "starting_chips": 1000, "min_stake": 10, "max_stake": 100, "coups_per_round": 2,
    "people_bet_seconds": CLOCK, "decision_seconds": CLOCK, "bot_think_seconds": BOT_THINK,
    "stages": [{"name": "evening", "rounds": 2}],
}
SEED = "0039"  # the draw of "evening" seats cid, fay, eve in a row at table 1, the croupier's
BANK = 100
TURNS = ("BetPlaced", "BetTurnPassed", "StakePlaced", "BancoCalled", "BankDeclined",
         "EntropyContributed")  # a seat's own moves, or its clock's
STEPS = {"ShoeShuffled", "ShoeCut", "CardBurned", "BankAwarded", "BettingClosed", "CardDealt",
         "CoupSettled"}  # the croupier's at a croupier-dealt table
FORMAT = {
    "variant": "punto-banco", "seats_per_table": 5, "tables": 2, "starting_chips": 1000,
    "min_stake": 10, "max_stake": 100, "coups_per_round": 2, "betting_order": "rotating",
    "people_bet_seconds": 2, "decision_seconds": 2, "bot_think_seconds": 1,
    "stages": [{"name": "evening", "rounds": 2}],
}


@dataclass
class Room:
    """The served API, the store's reader, the tokens, and the test's own clock."""

    url: str
    service: TableService
    tokens: dict[str, str]
    log: Path
    sent: dict[str, int] = field(default_factory=dict)

    def call(self, method: str, path: str, who: str, body: Any = None) -> httpx.Response:
        return CLIENT.request(method, f"{self.url}{path}", json=body, timeout=15,
                              headers={"Authorization": f"Bearer {self.tokens[who]}"})

    def head(self) -> int:
        return self.service.recorder.max_notification_id() or 0


def started(args: list[str], env: dict[str, str], cwd: Path, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "api.cli", *args], cwd=cwd, env=env,
                                stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture
def room(postgres_url: str, redis_url: str, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[Room]:
    broker = redis_url.rsplit("/", 1)[0] + "/11"  # a database of its own: no other's queue
    create_key(tmp_path / "signing.key")
    settings = {"SABOT_DATABASE_URL": postgres_url, "SABOT_BROKER_URL": broker,
                "SABOT_SECRET_KEY": KEY.hex(), "SABOT_SIGNING_KEY": str(tmp_path / "signing.key"),
                "SABOT_CHECKPOINTS": str(tmp_path / "checkpoints")}
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    service = TableService(url=postgres_url, secret_key=KEY)
    store = TokenStore(service.database)
    tokens = {"organiser": store.issue(Grant(role=Role.ORGANISER))}
    tokens |= {person: store.issue(Grant(role=Role.PLAYER, player=person)) for person in PEOPLE}
    port = free_port()
    served = started(["serve", "--no-worker", "--host", "127.0.0.1", "--port", str(port)], env,
                     tmp_path, tmp_path / "serve.log")
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if CLIENT.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert served.poll() is None and time.monotonic() < deadline, \
                (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(0.1)
        with running_worker(broker, postgres_url, tmp_path / "worker.log", "--pool", "threads",
                            "--concurrency", "2", env={"PYTHONPATH": str(ROOT)}, cwd=tmp_path):
            yield Room(url, service, tokens, tmp_path / "worker.log")
    finally:
        served.terminate()
        served.wait(timeout=20)
        service.close()


def body_of(command: c.TableCommand) -> dict[str, Any]:
    """A command as a client sends it: its actor is the token's."""
    return {k: v for k, v in msgspec.to_builtins(command).items() if k != "actor"}


def start(room: Room, settings: dict[str, Any], name: str,
          seed: str | None = None) -> tuple[str, dict[str, list[str]]]:
    """Create, register (each person with their own token, the bots by the organiser), start:
    the tournament's path and who sits at each table."""
    body: dict[str, Any] = {"name": name, "format": settings}
    if seed is not None:
        body["seed"] = seed
    created = room.call("POST", "/tournaments", "organiser", body)
    assert created.status_code == 201, created.text
    path = f"/tournaments/{created.json()['id']}"
    for person in PEOPLE:  # each registers with their own token
        answer = room.call("POST", f"{path}/players", person, {"player": person})
        assert answer.status_code == 201, answer.text
    for bot in BOTS:
        answer = room.call("POST", f"{path}/players", "organiser", {"player": bot, "bot": True})
        assert answer.status_code == 201, answer.text
    view = room.call("POST", f"{path}/start", "organiser").json()
    seating = {t["name"]: [p["player"] for p in t["players"]] for t in view["tables"]}
    assert sorted(p for players in seating.values() for p in players) == sorted(PEOPLE + BOTS)
    return path, seating


def croupier_dealt(tables: list[str]) -> list[str]:
    """The croupier-dealt tables: the first `croupier_tables` by number."""
    return sorted(tables, key=lambda t: int(t.rsplit("-", 1)[1]))[
        :int(str(CHEMIN_DE_FER["croupier_tables"]))]


def play_turns(room: Room, seating: dict[str, list[str]], rng: random.Random,
               habits: Callable[[str], Habits] = lambda person: DEFAULT_HABITS) -> list[str]:
    """Each person but the silent one makes the move awaited of their seat, if any, as they
    play by `habits(person)` (past the round's last coup the table refuses it: 409
    `round-over`). The kinds of the moves the table took."""
    taken = []
    for table, players in seating.items():
        state = room.service.state(Table.create_id(table))
        if state.coup is None and not playable(state):
            continue  # its players moved at the round's end: no move awaited there
        for person in players:
            if person not in PEOPLE or person == SILENT:
                continue
            n = room.sent[person] = room.sent.get(person, 0) + 1
            others = frozenset(players) - {person}
            move = next_command(state, rng, lambda label, n=n, p=person: f"{p}-{n}-{label}",
                                habits(person), people=others)
            if seat_of(move, state) != person:
                continue
            answer = room.call("POST", f"/tables/{table}/commands", person, body_of(move))
            assert answer.status_code in (200, 409, 422), answer.text  # a race with a clock
            if answer.status_code == 200:
                taken.append(f"{person} {command_kind(move)}")
    return taken


def issue_croupier(room: Room, table: str) -> None:
    """A croupier's token for `table` only, as `croupier`."""
    store = TokenStore(room.service.database)
    room.tokens["croupier"] = store.issue(Grant(role=Role.CROUPIER,
                                                tables=frozenset({Table.create_id(table)})))


def pause_stops_the_room(room: Room, path: str, tries: dict[str, tuple[str, c.TableCommand]],
                         frozen: float) -> None:
    """Pause: each of `tries` (who sends it: the table and the command) is 409
    `tournament-paused`, and nothing is written for `frozen` seconds (longer than any clock:
    none runs out while paused); then resume."""
    assert room.call("POST", f"{path}/pause", "organiser").json()["status"] == "paused"
    before = room.head()
    for who, (table, command) in tries.items():
        answer = room.call("POST", f"/tables/{table}/commands", who, body_of(command))
        assert answer.status_code == 409, (who, answer.text)
        assert answer.json()["rule"] == "tournament-paused", (who, answer.text)
    time.sleep(frozen)
    assert room.head() == before
    assert room.call("POST", f"{path}/resume", "organiser").json()["status"] == "running"


def senders_of(room: Room) -> dict[str, str]:
    """Who sent each command, by its id, as the command log records it."""
    database = room.service.database
    with database.transaction(write=False) as cursor:
        return {row["command_id"]: row["sender"] for row in database.execute(
            cursor, "SELECT command_id, sender FROM {command_log}").fetchall()}


def check_the_record(room: Room, name: str, tables: list[str]) -> list[Any]:
    """Publish the results; every person's event came from their own token, every bot's from
    the house; the silent person made no move; `sabot audit verify`, attribution included,
    finds the store intact. The record's events, for the test's own checks."""
    published = room.call("POST", f"/tournaments/{name}/results/publish", "organiser")
    assert published.status_code == 200, published.text
    events = [e for stream in (Tournament.create_id(name), *map(Table.create_id, tables))
              for e in room.service.events_of(stream)]
    senders = senders_of(room)
    for event in events:
        if event.actor in PEOPLE:
            assert senders[event.command_id] == player_sender(event.actor), event
        elif event.actor in BOTS:
            assert senders[event.command_id] == HOUSE, event
    assert [type(e).__name__ for e in events if e.actor == SILENT] == ["PlayerRegistered"]
    report = verify(room.service.database_url,
                    extra_checks=complete_checks(PROJECTIONS))
    assert report.ok, (report.first_break, report.findings)
    assert "attribution" in report.checks and not report.notices
    return events


def test_an_evening_with_people_over_http_on_the_servers(room: Room) -> None:
    name = f"evening-{uuid.uuid4().hex[:6]}"
    path, seating = start(room, FORMAT, name)
    rng = random.Random(26)
    paused = False
    deadline = time.monotonic() + EVENING
    while (view := room.call("GET", path, "organiser").json())["status"] != "finished":
        assert time.monotonic() < deadline, room.log.read_text()[-3000:]
        play_turns(room, seating, rng)
        if not paused and view["status"] == "running" and any(  # mid-round, a clock running
                room.service.state(Table.create_id(t)).coup_number >= 1 for t in seating):
            # a table with a person who acts (the draw is the tournament's own: a table may
            # seat only bots and the silent person)
            table, person = next((t, p) for t, players in seating.items() for p in players
                                 if p in PEOPLE and p != SILENT)
            issue_croupier(room, table)
            pause_stops_the_room(room, path, {
                person: (table, c.PlaceBet(command_id=f"paused-{person}", player=person,
                                           spot=Spot.BANKER, amount=10)),
                "croupier": (table, c.CloseBetting(command_id="paused-croupier")),
                "organiser": (table, c.CloseBetting(command_id="paused-organiser"))}, 2.5)
            paused = True
        time.sleep(0.1)
    # two rounds played; a tie for first after them (the format's `share`) plays on
    assert paused and view["round"] >= 2
    events = check_the_record(room, name, list(seating))
    acted = {e.actor for e in events if type(e).__name__ in ("BetPlaced", "BetTurnPassed")}
    assert acted >= set(PEOPLE) - {SILENT}, acted  # each person bet or passed themselves
    timed_out = [e for e in events if type(e).__name__ == "BetTurnPassed"
                 and e.player == SILENT]
    assert timed_out and all(e.reason == "clock" and e.actor.startswith("@") for e in timed_out)
    assert {e.actor for e in events if type(e).__name__ == "BetPlaced"} & set(BOTS)


def check_the_people_played_chemin_de_fer(events: list[Any]) -> None:
    """People and bots staked; a person called banco, took the bank and retired it, and drew
    or stood on a hand."""
    by = {type(e).__name__: {x.actor for x in events if type(x) is type(e)} for e in events}
    people = set(PEOPLE) - {SILENT}
    assert by["StakePlaced"] & people and by["StakePlaced"] & set(BOTS), by["StakePlaced"]
    assert by["BancoCalled"] & people, by.get("BancoCalled")
    assert by["BankAwarded"] & people and by["BankPassed"] & people  # taken and retired
    decided = by.get("ThirdCardAsked", set()) | by.get("HandStood", set())
    assert decided & people, decided


@dataclass
class Croupier:
    """The croupier of a croupier-dealt table, sending its steps over HTTP: the engine's, but
    the first bank (given to `retirer`), and the close of betting (once every one here who
    may stake but fay has, or the croupier's `patience` has run out since betting opened)."""

    table: str
    players: list[str]
    retirer: str
    patience: float = 2 * CLOCK
    opened: dict[int, float] = field(default_factory=dict)

    def step(self, room: Room, rng: random.Random) -> c.TableCommand | None:
        """The step sent, if the table awaits one of the croupier's and the croupier takes it."""
        state = room.service.state(Table.create_id(self.table))
        if not playable(state):
            return None  # the evening over: its players have left the table
        move = next_command(state, rng, lambda label: f"croupier-{uuid.uuid4().hex}-{label}",
                            people=frozenset(self.players))
        if seat_of(move, state) is not None:
            return None  # a seat's move: the person's, the bot's or a clock's
        if isinstance(move, c.AwardBank) and self.retirer:
            move = c.AwardBank(command_id=move.command_id, player=self.retirer, amount=BANK,
                               how="lot")
        if isinstance(move, c.CloseBetting):
            opened = self.opened.setdefault(state.coup_number, time.monotonic())
            if (any(p != SILENT for p in yet_to_stake(state))
                    and time.monotonic() < opened + self.patience):
                return None
        answer = room.call("POST", f"/tables/{self.table}/commands", "croupier", body_of(move))
        assert answer.status_code in (200, 409, 422), answer.text  # a race with a clock
        return move if answer.status_code == 200 else None


def test_the_chemin_de_fer_evening_over_http_on_the_servers(room: Room) -> None:
    path, seating = start(room, CHEMIN_DE_FER, "evening", SEED)
    [dealt] = croupier_dealt(list(seating))
    assert SILENT in seating[dealt], seating  # the seed's draw
    before_fay = seating[dealt][seating[dealt].index(SILENT) - 1]
    assert before_fay in PEOPLE, seating
    issue_croupier(room, dealt)
    croupier = Croupier(dealt, seating[dealt], before_fay)
    house = next(t for t in seating if t != dealt)
    bancos = set(PEOPLE) - {SILENT}  # each calls banco once, when first they may

    def habits(person: str) -> Habits:
        return Habits(banco_rate=1.0 if person in bancos else 0.0)

    rng = random.Random(26)
    paused = False
    deadline = time.monotonic() + CHEMIN_DE_FER_EVENING
    while (view := room.call("GET", path, "organiser").json())["status"] != "finished":
        assert time.monotonic() < deadline, room.log.read_text()[-3000:]
        bancos -= {m.split()[0] for m in play_turns(room, seating, rng, habits)
                   if m.endswith(" banco")}
        step = croupier.step(room, rng)
        if isinstance(step, c.AwardBank) and croupier.retirer:  # at once: before a bot stakes
            retire = c.RetireBank(command_id=f"retire-{croupier.retirer}", player=before_fay)
            answer = room.call("POST", f"/tables/{dealt}/commands", before_fay, body_of(retire))
            assert answer.status_code == 200, answer.text
            croupier.retirer = ""
        if (not paused and view["round"] == 1
                and room.service.state(Table.create_id(dealt)).phase is Phase.PLAYING):
            person = next(p for p in seating[dealt] if p in PEOPLE and p != SILENT)
            pause_stops_the_room(room, path, {
                person: (dealt, c.PlaceStake(command_id=f"paused-{person}", player=person,
                                             tableau=Side.PUNTER, amount=10)),
                "croupier": (dealt, c.DealCard(command_id="paused-croupier")),
                "organiser": (house, c.CloseBetting(command_id="paused-organiser"))}, CLOCK + 0.5)
            paused = True
        time.sleep(0.1)
    assert paused and view["round"] >= 2  # a tie for first after two rounds plays on
    events = check_the_record(room, "evening", list(seating))
    check_the_people_played_chemin_de_fer(events)
    fays = [e for e in events if getattr(e, "player", None) == SILENT
            and type(e).__name__ in TURNS]
    assert any(type(e).__name__ == "BankDeclined" for e in fays), fays  # the bank offered her
    assert all(e.actor == DEADLINE for e in fays), fays  # her every turn the clock's
    senders = senders_of(room)
    dealt_by = [e for e in events  # the croupier's token's, the house's at the house table
                if e.actor == CROUPIER and e.originator_id == Table.create_id(dealt)]
    assert {type(e).__name__ for e in dealt_by} >= STEPS, dealt_by
    assert all(senders[e.command_id].startswith(f"{Role.CROUPIER}:") for e in dealt_by), [
        (e, senders[e.command_id]) for e in dealt_by]
