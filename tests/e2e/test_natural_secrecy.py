"""A natural coming is a secret until the cards are shown (issue 28, point 7): at every step
from the first card dealt to `show-naturals`, nothing a caller may see over the API differs
between a coup with a natural coming and one without, except the cards of the hand the caller
holds. Three tables on one seeded server: `n1` deals no natural (punter 6, banker 4), `n10` a
banker's natural (punter 3, banker 8), `n4` a punter's natural (punter 8, banker 2). Each
viewer's table view, event stream (SSE) and tableau look-ahead are compared at every step,
and the views (recall, roads, the table list) at the last, once the differences every table
has (its name and id, its shoe's commitment, the times, the commands' ids) are set aside."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest

from tests.client import CLIENT
from tests.e2e.test_api import Api, Game

pytestmark = pytest.mark.postgres

WITHOUT, BANKER_NATURAL, PUNTER_NATURAL = "n1", "n10", "n4"
PER_TABLE = {"table_id", "name", "table", "commitment", "timestamp", "command_id"}
"""Fields that differ from table to table whatever the cards (its id and name, the shoe's
commitment to its seed, the time an event was written, the commands' random ids)."""


def scrubbed(value: Any, own: str | None) -> Any:
    """`value` without the per-table fields, and with the cards of the viewer's own hand
    (`own`: its side) blanked: the holder sees them, and they differ from table to table."""
    if isinstance(value, list):
        return [scrubbed(v, own) for v in value]
    if not isinstance(value, dict):
        return value
    if own is not None and value.get("side") == own and ("cards" in value or "card" in value):
        value = {**value, "cards": "own", "card": "own", "point": "own"}
    if own is not None and isinstance(value.get("points"), dict) and own in value["points"]:
        value = {**value, "points": {**value["points"], own: "own"}}  # the tableau's
    return {k: scrubbed(v, own) for k, v in value.items() if k not in PER_TABLE}


def differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where `a` and `b` differ, as paths (for the failure's message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(a.keys() | b.keys())
                for d in differences(a.get(k), b.get(k), f"{at}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {a!r} != {b!r}"]


def events(api: Api, game: Game, token: str | None, version: int) -> list[Any]:
    """The table's events from the start, as `token` receives them live (SSE)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    got: list[Any] = []
    with httpx.stream("GET", f"{api.base_url}/tables/{game.table_id}/events?after=0",
                      headers=headers, timeout=20) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                got.append(msgspec.json.decode(line[5:]))
                if got[-1]["originator_version"] == version:
                    return got
    raise AssertionError("the stream ended early")


def seen(api: Api, game: Game, token: str | None, own: str | None,
         views: bool) -> dict[str, Any]:
    """What `token` may read of the game's table now, per-table fields set aside: the table,
    its events and the tableau, and with `views` the projections' views too."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}

    def get(path: str) -> Any:
        response = CLIENT.get(api.base_url + path, headers=headers, timeout=10)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    table = get(f"/tables/{game.table_id}")
    tableau = CLIENT.post(f"{api.base_url}/tables/{game.table_id}/tableau", headers=headers,
                          json={"known": {}}, timeout=10)
    shown = {"table": table, "events": events(api, game, token, table["version"]),
             "tableau": [tableau.status_code, tableau.json()]}
    if views:
        shown |= {"recall": get(f"/tables/{game.table_id}/recall"),
                  "roads": get(f"/tables/{game.table_id}/roads"),
                  "listed": [t for t in get("/tables") if t.get("table_id") == game.table_id]}
    return scrubbed(shown, own)


def test_nothing_shown_before_the_naturals_tells_one_is_coming(api: Api) -> None:
    games = {name: Game(api, name) for name in (WITHOUT, BANKER_NATURAL, PUNTER_NATURAL)}
    for game in games.values():
        game.to_betting()
        game.send(game.croupier, {"kind": "close-betting"})
    steps = 0
    while True:
        for game in games.values():
            game.send(game.croupier, {"kind": "deal"})
        steps += 1
        base = games[WITHOUT]
        last = base.view(base.auditor)["legal_actions"][0]["step"] == "show-naturals"
        for holder, own in (("anonymous", None), ("carol", None), ("bob", "punter"),
                            ("alice", "banker")):
            views = {name: seen(api, game, getattr(game, holder, None), own, views=last)
                     for name, game in games.items()}
            for name in (BANKER_NATURAL, PUNTER_NATURAL):
                assert views[name] == views[WITHOUT], (holder, name, steps, differences(
                    views[name], views[WITHOUT]))
        if last:
            break
    assert steps == 4
    points = {name: {h["side"]: h["point"] for h in g.view(g.auditor)["coup"]["hands"]}
              for name, g in games.items()}
    assert points == {WITHOUT: {"punter": 6, "banker": 4},  # the seeds give what is claimed
                      BANKER_NATURAL: {"punter": 3, "banker": 8},
                      PUNTER_NATURAL: {"punter": 8, "banker": 2}}
    actions = {n: g.view(None)["legal_actions"] for n, g in games.items()}
    assert all(a == [{"step": "show-naturals", "actor": "@croupier", "side": None,
                      "forced": True}] for a in actions.values()), actions
