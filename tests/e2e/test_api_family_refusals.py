"""The inputs that made a family-game table answer 500 (an IndexError in the duel), over real
HTTP on PostgreSQL: each is now a problem naming its rule, and nothing is recorded."""

from __future__ import annotations

from typing import Any

import pytest

from api.tokens import Role
from tests.e2e.test_api import PROBLEM, Api, Game

pytestmark = pytest.mark.postgres


def refused(api: Api, token: str, table: str, body: dict[str, Any], status: int,
            rule: str) -> None:
    before = api.events()
    response = api.call("POST", f"/tables/{table}/commands", token,
                        json={"command_id": f"{rule}-{body['kind']}", **body})
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["rule"] == rule, response.json()
    assert api.events() == before


@pytest.mark.parametrize("side", ["punter", "banker"])
def test_a_decision_at_a_family_table_without_its_duel_is_a_409(api: Api, side: str) -> None:
    organiser = api.token(Role.ORGANISER)
    opened = api.call("POST", "/tables", organiser, json={"name": f"f-{side}",
                                                          "variant": "simplified"})
    assert opened.status_code == 201, opened.text
    table = opened.json()["table_id"]
    refused(api, organiser, table, {"kind": "decide", "side": side, "draw": True}, 409,
            "out-of-turn")
    seated = api.call("POST", f"/tables/{table}/commands", organiser,
                      json={"command_id": "seat", "kind": "seat", "player": "alice",
                            "chips": 100})
    assert seated.status_code == 200, seated.text
    refused(api, organiser, table, {"kind": "decide", "side": side, "draw": False}, 409,
            "out-of-turn")


def test_a_duellists_chips_in_play_cannot_be_adjusted_away(api: Api, game: Game) -> None:
    game.to_betting()
    game.deal_four()
    for player in ("alice", "bob"):
        refused(api, game.organiser, game.table_id,
                {"kind": "adjust-chips", "player": player, "delta": -500, "reason": "out"},
                409, "chips-in-play")
