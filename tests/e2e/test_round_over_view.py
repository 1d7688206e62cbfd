"""A table that has played its round's last coup says so in the view the pages read
(`GET /tables/{t}`: `round_over`), and offers no stake, bet or banco the round's end would
refuse, while another table of the round still plays: here the house-dealt table of a
tournament whose first table waits for its croupier (the tournament's view says which table
a croupier deals)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from api.tokens import Role
from infra.services.direction import Tick
from infra.services.tournaments import Director
from tests.e2e.test_api import Api, api  # noqa: F401 - the fixture

pytestmark = pytest.mark.postgres

FORMAT = {
    "variant": "chemin-de-fer", "seats_per_table": 4, "starting_chips": 1000,
    "min_stake": 10, "max_stake": 100, "coups_per_round": 1, "tables": 2, "croupier_tables": 1,
    "stages": [{"name": "heats", "rounds": 2}],
}
ROUND_PLAY = {"bet", "stake", "banco", "close-betting"}


def view(api: Api, table: str, token: str) -> dict[str, Any]:  # noqa: F811
    answer = api.call("GET", f"/tables/{table}", token)
    assert answer.status_code == 200, answer.text
    shown: dict[str, Any] = answer.json()
    return shown


def test_the_house_table_done_with_its_round_says_round_over(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    made = api.call("POST", "/tournaments", organiser, json={"name": "late", "format": FORMAT})
    assert made.status_code == 201, made.text
    for n in range(8):
        assert api.call("POST", "/tournaments/late/players", organiser,
                        json={"player": f"bot-{n}", "bot": True}).status_code == 201
    assert api.call("POST", "/tournaments/late/start", organiser).status_code == 200
    lines = api.call("GET", "/tournaments/late").json()["tables"]
    assert [line["croupier"] for line in lines] == [True, False]  # who deals each
    croupiers, house = (line["name"] for line in lines)
    player = api.token(Role.PLAYER, player="bot-0")
    assert view(api, house, player)["round_over"] is False

    director = Director(api.service)
    tournament_id = uuid.UUID(made.json()["id"])
    for _ in range(200):
        if director.tick(tournament_id) is not Tick.ACTED:
            break
    assert director.tick(tournament_id) is Tick.WAITING  # on the croupier's table
    done = view(api, house, player)
    assert (done["coup_number"], done["coup"], done["round_over"]) == (1, None, True)
    assert not ROUND_PLAY & {action["step"] for action in done["legal_actions"]}
    waiting = view(api, croupiers, player)
    assert (waiting["coup_number"], waiting["round_over"]) == (0, False)
