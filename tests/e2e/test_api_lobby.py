"""Bounds people trip over, over HTTP: names trimmed, 1 to 100 printable characters and a
player's unique whatever the case (422 naming the rule, nothing written); a tournament
cancelled before its start and archived after its finish leaves the lobby and the listings
(`?all=true` shows it) but never the record."""

from __future__ import annotations

from typing import Any

import pytest

from api.tokens import Role
from domain.tournament.aggregate import Tournament
from infra.services.tournaments import Director
from tests.e2e.test_api import Api, api  # noqa: F401 - the fixture
from tests.e2e.test_tournaments_api import refused

pytestmark = pytest.mark.postgres

FORMAT = {"variant": "punto-banco", "seats_per_table": 6, "starting_chips": 100,
          "min_stake": 10, "max_stake": 100, "coups_per_round": 2}


def create(api: Api, organiser: str, name: str) -> str:  # noqa: F811
    created = api.call("POST", "/tournaments", organiser,
                       json={"name": name, "format": FORMAT, "seed": "5eed"})
    assert created.status_code == 201, created.text
    return f"/tournaments/{created.json()['id']}"


def names(api: Api, query: str = "") -> list[tuple[str, str]]:  # noqa: F811
    listed: list[dict[str, Any]] = api.call("GET", f"/tournaments{query}").json()
    return [(t["name"], t["status"]) for t in listed]


def test_names_are_trimmed_bounded_and_unique_whatever_the_case(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    for bad in ("x" * 500, "   ", "tab\there"):
        refused(api, 422, "name-invalid", "POST", "/tournaments", organiser,
                {"name": bad, "format": FORMAT})
    path = create(api, organiser, "  Friday night  ")
    assert api.call("GET", path).json()["name"] == "Friday night"
    assert names(api) == [("Friday night", "registering")]
    players = f"{path}/players"
    registered = api.call("POST", players, organiser, json={"player": " chloe "})
    assert registered.status_code == 201, registered.text
    assert [e["player"] for e in registered.json()["events"]] == ["chloe"]
    for bad, rule in (("x" * 500, "name-invalid"), ("   ", "name-invalid"),
                      ("Chloe", "name-taken"), ("CHLOE", "name-taken")):
        refused(api, 422, rule, "POST", players, organiser, {"player": bad})
    standings = api.call("GET", f"{path}/standings").json()
    assert [s["player"] for s in standings] == ["chloe"]


def test_cancelled_and_archived_tournaments_leave_the_lobby_not_the_record(
        api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    trial, club = create(api, organiser, "trial"), create(api, organiser, "club")
    for path in (trial, club):
        for n in range(3):
            answer = api.call("POST", f"{path}/players", organiser,
                              json={"player": f"bot-{n}", "bot": True})
            assert answer.status_code == 201, answer.text
    refused(api, 403, "organiser-only", "POST", f"{trial}/cancel",
            api.token(Role.PLAYER, player="bot-0"))
    refused(api, 409, "out-of-turn", "POST", f"{club}/archive", organiser)  # not finished
    cancelled = api.call("POST", f"{trial}/cancel", organiser)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    refused(api, 409, "tournament-cancelled", "POST", f"{trial}/players", organiser,
            {"player": "late"})
    refused(api, 409, "tournament-cancelled", "POST", f"{trial}/start", organiser)
    assert names(api) == [("club", "registering")]
    assert names(api, "?all=true") == [("trial", "cancelled"), ("club", "registering")]

    assert api.call("POST", f"{club}/start", organiser).status_code == 200
    refused(api, 409, "out-of-turn", "POST", f"{club}/cancel", organiser)  # started
    Director(api.service).run(Tournament.create_id("club"))
    archived = api.call("POST", f"{club}/archive", organiser)
    assert archived.status_code == 200 and archived.json()["status"] == "finished"
    refused(api, 409, "archived", "POST", f"{club}/archive", organiser)
    assert names(api) == []
    every = api.call("GET", "/tournaments?all=true").json()
    assert [(t["name"], t["status"], t["archived"]) for t in every] == [
        ("trial", "cancelled", False), ("club", "finished", True)]
    assert api.call("GET", f"{club}/results").json()["winner"]  # still in the record
    assert api.call("GET", trial).json()["entrants"] == 3
