"""Bad input at the edge, over real HTTP on PostgreSQL: each answer is a 4xx problem, nothing is
recorded, and every view of every table keeps answering afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.test_api import PROBLEM, Api, Game

pytestmark = pytest.mark.postgres

HUGE = 2**63
DEEP = b"[" * 979 + b"]" * 979

BAD_BODIES: list[tuple[str, bytes | dict[str, Any], int, str | None]] = [
    ("2^63 chips", {"kind": "seat", "player": "dave", "chips": HUGE}, 422, "chips"),
    ("2^64 chips", {"kind": "seat", "player": "dave", "chips": 2**64}, 422, "chips"),
    ("a chip more than the maximum", {"kind": "seat", "player": "dave", "chips": 10**12 + 1},
     422, "chips"),
    ("chips below minus the maximum", {"kind": "seat", "player": "dave", "chips": -HUGE}, 422,
     "chips"),
    ("an empty name", {"kind": "seat", "player": "", "chips": 10}, 422, "player"),
    ("a NUL in a name", {"kind": "seat", "player": "da\x00ve", "chips": 10}, 422, "player"),
    ("a newline in a name", {"kind": "seat", "player": "da\nve", "chips": 10}, 422, "player"),
    ("a name of 200 characters", {"kind": "seat", "player": "d" * 200, "chips": 10}, 422,
     "player"),
    ("a huge adjustment", {"kind": "adjust-chips", "player": "alice", "delta": HUGE,
                           "reason": "x"}, 422, "delta"),
    ("a huge stake", {"kind": "bet", "player": "alice", "spot": "banker", "amount": HUGE},
     422, "amount"),
    ("JSON nested 979 deep", DEEP, 400, None),
    ("invalid UTF-8", b'{"kind": "seat", "player": "\xff\xfe", "chips": 10}', 400, None),
    ("an empty command id", {"kind": "shuffle", "command_id": ""}, 422, "command_id"),
    ("a NUL in a command id", {"kind": "shuffle", "command_id": "a\x00b"}, 422, "command_id"),
    ("a line break in a command id", {"kind": "shuffle", "command_id": "a\nb"}, 422,
     "command_id"),
]


@pytest.mark.parametrize(("case", "body", "status", "field"), BAD_BODIES,
                         ids=[c[0] for c in BAD_BODIES])
def test_bad_values_are_refused_and_record_nothing(
    api: Api, game: Game, case: str, body: bytes | dict[str, Any], status: int,
    field: str | None,
) -> None:
    before = api.events()
    if isinstance(body, dict):
        body = {"command_id": f"bad-{case}", **body}
    response = api.call("POST", f"/tables/{game.table_id}/commands", game.organiser,
                        json=body if isinstance(body, dict) else None,
                        content=body if isinstance(body, bytes) else None)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json().get("field") == field, response.text
    assert api.events() == before
    every_view_answers(api, game)


BAD_OPENINGS: list[tuple[str, bytes | dict[str, Any], int, str | None]] = [
    ("an empty table name", {"name": "", "variant": "punto-banco"}, 422, "name"),
    ("a control character in a table name", {"name": "t\x07", "variant": "punto-banco"}, 422,
     "name"),
    ("a decision time of 10^12 s", {"name": "t9", "variant": "punto-banco",
                                    "settings": {"decision_seconds": 10**12}}, 422, None),
    ("a minimum stake of 2^63", {"name": "t9", "variant": "punto-banco",
                                 "settings": {"min_stake": HUGE}}, 422, None),
    ("1000 decks", {"name": "t9", "variant": "punto-banco", "settings": {"decks": 1000}}, 422,
     None),
    ("JSON nested 979 deep", DEEP, 400, None),
    ("invalid UTF-8", b'{"name": "\xc3\x28", "variant": "punto-banco"}', 400, None),
]


@pytest.mark.parametrize(("case", "body", "status", "field"), BAD_OPENINGS,
                         ids=[c[0] for c in BAD_OPENINGS])
def test_bad_openings_are_refused_and_record_nothing(
    api: Api, game: Game, case: str, body: bytes | dict[str, Any], status: int,
    field: str | None,
) -> None:
    before = api.events()
    response = api.call("POST", "/tables", game.organiser,
                        json=body if isinstance(body, dict) else None,
                        content=body if isinstance(body, bytes) else None)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    if field is not None:
        assert response.json().get("field") == field, response.text
    assert api.events() == before
    every_view_answers(api, game)


def test_two_players_with_huge_chips_cannot_be_seated(api: Api, game: Game) -> None:
    """The report's case: two seats of 2^63 chips used to break every view of every table."""
    before = api.events()
    for player in ("erin", "frank"):
        game.send(game.organiser, {"kind": "seat", "player": player, "chips": HUGE}, expect=422)
    assert api.events() == before
    every_view_answers(api, game)


def every_view_answers(api: Api, game: Game) -> None:
    for path in (f"/tables/{game.table_id}", f"/tables/{game.table_id}/rotation",
                 f"/tables/{game.table_id}/recall", "/tournaments/any/standings", "/ready"):
        response = api.call("GET", path, game.organiser)
        assert response.status_code == 200, (path, response.text)
