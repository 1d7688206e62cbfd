"""What the pages read over HTTP, without a browser: the tables list, who a token is, a table's
roads, and the tableau's look-ahead, which tells a caller nothing the caller did not give."""

from __future__ import annotations

import pytest

from tests.e2e.test_api import PROBLEM, Api, Game, api, game  # noqa: F401 - the fixtures

pytestmark = pytest.mark.postgres


def test_the_tables_and_who_a_token_is(api: Api, game: Game) -> None:  # noqa: F811
    [table] = api.call("GET", "/tables").json()
    assert (table["name"], table["variant"], table["phase"]) == ("t1", "simplified", "no-shoe")
    assert table["seated"] == ["alice", "bob", "carol"] and table["table_id"] == game.table_id
    assert api.call("GET", "/me").json() == {"role": "anonymous", "player": None, "tables": []}
    assert api.call("GET", "/me", game.croupier).json() == {
        "role": "croupier", "player": None, "tables": [game.table_id]}
    assert api.call("GET", "/me", game.bob).json()["player"] == "bob"
    unknown = api.call("GET", "/me", "sabot_nothing")
    assert unknown.status_code == 401 and unknown.headers["content-type"] == PROBLEM


def test_roads_of_a_table_and_of_no_table(api: Api, game: Game) -> None:  # noqa: F811
    roads = api.call("GET", "/tables/t1/roads").json()
    assert roads["table"] == "t1" and [b["tableau"] for b in roads["boards"]] == ["punter"]
    assert roads["boards"][0]["bead"] == [] and roads["boards"][0]["big_road"] == []
    missing = api.call("GET", "/tables/nowhere/roads")
    assert missing.status_code == 404 and missing.json()["rule"] == "unknown-table"


def test_the_look_ahead_uses_only_the_callers_cards(api: Api, game: Game) -> None:  # noqa: F811
    path = f"/tables/{game.table_id}/tableau"
    early = api.call("POST", path, game.croupier, json={})
    assert early.status_code == 409 and early.json()["rule"] == "out-of-turn"  # no coup yet
    game.to_betting()
    dealt = game.deal_four()
    assert all(e["card"] is None for e in dealt)  # the croupier sees no face-down card
    blind = api.call("POST", path, game.croupier, json={}).json()
    assert blind["points"] == {"punter": None, "banker": None}
    assert [a["step"] for a in blind["next"]] == ["show-naturals"]
    # the same question with made-up cards answers for those cards, whatever the real ones
    for known, points in ((["4h", "Tc"], 4), (["3d", "3s"], 6)):
        told = api.call("POST", path, game.croupier, json={
            "known": {"punter": known, "banker": ["7s", "Kd"]}}).json()
        assert told["points"] == {"punter": points, "banker": 7} and told["naturals"] == []
        step = told["next"][0]
        assert (step["step"], step["side"]) == (("draw", "punter") if points <= 4
                                                else ("stand", "punter"))
    bad = api.call("POST", path, game.croupier, json={"known": {"punter": ["1x"]}})
    assert bad.status_code == 422
