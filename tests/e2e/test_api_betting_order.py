"""Betting in turn over HTTP: a punto banco table opened with a rotating betting order offers
`bet` to the player in turn only, refuses a bet out of turn with a problem naming the rule
(409 `not-your-turn`) and writes nothing, lets a player pass their own turn with their token,
and closes betting once every turn was had; a bet clock without turns, at a table or in a
tournament's format, is refused at creation and records nothing."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from api.tokens import Role
from tests.e2e.test_api import Api, api  # noqa: F401 - the fixture
from tests.e2e.test_tournaments_api import refused

pytestmark = pytest.mark.postgres


def test_players_bet_in_turn_over_http(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    croupier = api.token(Role.CROUPIER, tables=("inturn",))
    ann, bob = (api.token(Role.PLAYER, player=p) for p in ("ann", "bob"))
    opened = api.call("POST", "/tables", organiser, json={
        "name": "inturn", "variant": "punto-banco",
        "settings": {"betting_order": "rotating", "min_stake": 10}})
    assert opened.status_code == 201, opened.text
    path = f"/tables/{opened.json()['table_id']}"

    def send(token: str, kind: str, expect: int = 200, **fields: Any) -> dict[str, Any]:
        answer = api.call("POST", f"{path}/commands", token,
                          json={"kind": kind, "command_id": uuid.uuid4().hex, **fields})
        assert answer.status_code == expect, answer.text
        body: dict[str, Any] = answer.json()
        return body

    for player in ("ann", "bob"):
        send(organiser, "seat", player=player, chips=500)
    send(croupier, "shuffle", physical=True)
    send(croupier, "cut", player="ann", position=100)
    send(croupier, "burn", card="Ah")  # turned: an ace, so one more card is burned
    opening = send(croupier, "burn", card="9s")
    assert [(e["type"], e.get("player")) for e in opening["events"]][-1] == (
        "BetTurnBegan", "ann")

    view = api.call("GET", path, bob).json()
    bets = [a for a in view["legal_actions"] if a["step"] in ("bet", "pass-bet")]
    assert {(a["step"], a["actor"]) for a in bets} == {("bet", "ann"), ("pass-bet", "ann")}
    assert view["settings"]["betting_order"] == "rotating"

    before = api.events()
    problem = send(bob, "bet", 409, player="bob", spot="banker", amount=10)
    assert problem["rule"] == "not-your-turn" and "ann's turn" in problem["detail"]
    assert api.events() == before
    assert send(croupier, "close-betting", 409)["rule"] == "bet-turns-pending"

    passed = send(ann, "pass-bet", player="ann")
    assert [(e["type"], e["player"]) for e in passed["events"]] == [
        ("BetTurnPassed", "ann"), ("BetTurnBegan", "bob")]
    assert passed["events"][0]["reason"] == "pass"
    send(bob, "bet", player="bob", spot="banker", amount=10)
    send(croupier, "close-betting")
    assert api.call("GET", path, bob).json()["phase"] == "playing"


def test_a_bet_clock_without_turns_is_refused_at_creation(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    refused(api, 422, "bet-clock-without-turns", "POST", "/tables", organiser,
            {"name": "clock", "variant": "punto-banco", "settings": {"bet_seconds": 20}})
    refused(api, 422, "settings-betting-order", "POST", "/tables", organiser,
            {"name": "cercle", "variant": "chemin-de-fer",
             "settings": {"betting_order": "rotating"}})
    fmt = {"variant": "punto-banco", "seats_per_table": 4, "starting_chips": 100,
           "min_stake": 1, "max_stake": 10, "coups_per_round": 3,
           "stages": [{"name": "heats", "rounds": 1, "advance": {"overall": 2}},
                      {"name": "final", "rounds": 1, "bet_seconds": 15}]}
    refused(api, 422, "bet-clock-without-turns", "POST", "/tournaments", organiser,
            {"name": "x", "format": fmt})
    refused(api, 422, "settings-bet-clock", "POST", "/tournaments", organiser,
            {"name": "x", "format": {**fmt, "betting_order": "rotating", "bet_seconds": -5}})
    created = api.call("POST", "/tournaments", organiser,
                       json={"name": "ok", "format": {**fmt, "betting_order": "rotating"}})
    assert created.status_code == 201, created.text
