"""A tournament's table over HTTP stands in the tournament's room: while the tournament is
paused every play command is refused (409 `tournament-paused`) by every role and writes
nothing, the organiser's interventions still go through, and after the resume the same
command succeeds; the croupier plays the table, and the house bots only where the format
says so (`croupier_plays_bots`), never a person's chips (403 `not-your-seat`)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from api.tokens import Role
from tests.e2e.test_api import PROBLEM, Api, api  # noqa: F401 - the fixture

pytestmark = pytest.mark.postgres

TABLE = "evening-table-1"
FORMAT = {"variant": "punto-banco", "seats_per_table": 6, "starting_chips": 1000,
          "min_stake": 10, "max_stake": 100, "coups_per_round": 4, "dealing": "croupier"}


class Room:
    """The evening: chloe (a person) and two house bots at one croupier-dealt table, its shoe
    shuffled and burned, betting open."""

    def __init__(self, api: Api, **format: Any) -> None:  # noqa: F811
        self.api = api
        self.organiser = api.token(Role.ORGANISER)
        self.croupier = api.token(Role.CROUPIER, tables=(TABLE,))
        self.chloe = api.token(Role.PLAYER, player="chloe")
        created = api.call("POST", "/tournaments", self.organiser,
                           json={"name": "evening", "format": FORMAT | format,
                                 "seed": "5eed"})
        assert created.status_code == 201, created.text
        self.path = f"/tournaments/{created.json()['id']}"
        for body in ({"player": "chloe"}, {"player": "bot-a", "bot": True},
                     {"player": "bot-b", "bot": True}):
            registered = api.call("POST", f"{self.path}/players", self.organiser, json=body)
            assert registered.status_code == 201, registered.text
        assert api.call("POST", f"{self.path}/start", self.organiser).status_code == 200
        self.send(self.croupier, "shuffle", physical=True)
        cutter = self.table()["seats"][0]["player"]
        self.send(self.croupier, "cut", player=cutter, position=100)
        self.send(self.croupier, "burn", card="Ah")  # turned: an ace, one more card burned
        self.send(self.croupier, "burn", card="9s")

    def table(self) -> dict[str, Any]:
        view: dict[str, Any] = self.api.call("GET", f"/tables/{TABLE}", self.organiser).json()
        return view

    def call(self, token: str, kind: str, **fields: Any) -> httpx.Response:
        return self.api.call("POST", f"/tables/{TABLE}/commands", token,
                             json={"kind": kind, "command_id": uuid.uuid4().hex, **fields})

    def send(self, token: str, kind: str, **fields: Any) -> dict[str, Any]:
        answer = self.call(token, kind, **fields)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def refused(self, status: int, rule: str, token: str, kind: str, **fields: Any) -> None:
        before, version = self.api.events(), self.table()["version"]
        answer = self.call(token, kind, **fields)
        assert answer.status_code == status, answer.text
        assert answer.headers["content-type"].startswith(PROBLEM)
        assert answer.json()["rule"] == rule, answer.text
        assert self.api.events() == before and self.table()["version"] == version


@pytest.fixture
def room(api: Api) -> Room:  # noqa: F811
    return Room(api)


def test_the_croupier_plays_the_bots_if_the_format_says_so_never_a_persons_chips(
        api: Api) -> None:  # noqa: F811
    r = Room(api, croupier_plays_bots=True)
    r.refused(403, "not-your-seat", r.croupier, "bet", player="chloe", spot="banker",
              amount=50)
    placed = r.send(r.croupier, "bet", player="bot-a", spot="punter", amount=20)
    assert [(e["type"], e["player"], e["actor"]) for e in placed["events"]] == [
        ("BetPlaced", "bot-a", "@croupier")]
    mine = r.send(r.chloe, "bet", player="chloe", spot="banker", amount=50)
    assert [(e["player"], e["actor"]) for e in mine["events"]] == [("chloe", "chloe")]
    r.send(r.croupier, "close-betting")  # the table's own step stays the croupier's


def test_by_default_the_croupier_may_not_play_a_bots_seat(room: Room) -> None:
    """Issue 26: "A croupier acts for the table (deal, burn, close betting, settle, pay) and for
    house bots only if the format says so"; the bots act by themselves (their think time)."""
    r = room
    r.refused(403, "not-your-seat", r.croupier, "bet", player="bot-a", spot="punter",
              amount=20)
    r.refused(403, "not-your-seat", r.croupier, "bet", player="chloe", spot="banker",
              amount=50)
    r.send(r.chloe, "bet", player="chloe", spot="banker", amount=50)
    closed = r.send(r.croupier, "close-betting")  # the table's own step stays the croupier's
    assert closed["events"][0]["type"] == "BettingClosed"


def test_a_pause_stops_every_table_command_but_the_organisers_interventions(
        room: Room) -> None:
    r = room
    r.send(r.chloe, "bet", player="chloe", spot="banker", amount=50)
    paused = r.api.call("POST", f"{r.path}/pause", r.organiser)
    assert paused.json()["status"] == "paused", paused.text
    r.refused(409, "tournament-paused", r.chloe, "bet", player="chloe", spot="tie", amount=10)
    r.refused(409, "tournament-paused", r.croupier, "bet", player="bot-a", spot="punter",
              amount=20)
    r.refused(409, "tournament-paused", r.organiser, "bet", player="bot-b", spot="punter",
              amount=20)
    r.refused(409, "tournament-paused", r.croupier, "close-betting")
    r.refused(409, "tournament-paused", r.croupier, "deal", card="Kh")
    before = r.table()["version"]
    penalty = r.api.call("POST", f"{r.path}/interventions", r.organiser, json={
        "kind": "penalise", "player": "bot-b", "delta": -100, "reason": "slow play"})
    assert penalty.status_code == 201, penalty.text
    assert r.table()["version"] == before + 1  # the chips moved at the table, paused or not

    assert r.api.call("POST", f"{r.path}/resume", r.organiser).json()["status"] == "running"
    r.send(r.chloe, "bet", player="chloe", spot="tie", amount=10)
    r.send(r.croupier, "close-betting")
    dealt = r.send(r.croupier, "deal", card="Kh")
    assert dealt["events"][0]["type"] == "CardDealt"
