"""`POST /tournaments` takes every field of a format, over a preset or in a whole `format`,
and `GET /tournaments/{t}/format` reads it back; a value the rules refuse is a 422 naming
its field, and nothing is recorded."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from api.schemas import FORMAT_FIELDS, FormatChoice
from api.tokens import Role
from domain.tournament.formats import Stage
from domain.tournament.presets import PRESETS
from domain.tournament.settings import TournamentSettings
from tests.e2e.test_api import PROBLEM, Api, api  # noqa: F401 - the fixture

pytestmark = pytest.mark.postgres

EVENING = {
    "variant": "punto-banco", "house_rules": "no-commission", "seats_per_table": 6,
    "starting_chips": 5_000, "min_stake": 50, "max_stake": 1_000, "coups_per_round": 10,
    "minutes_per_round": 25, "advance": 0, "prizes": [7000, 3000], "buy_in": 20,
    "late_rounds": 1, "reentries": 1, "tolerance": 2, "fixed_prizes": [], "tables": 2,
    "tie_break": "draw-order", "dealing": "croupier", "croupier_tables": 1,
    "betting_order": "rotating",
    "bet_seconds": 45, "people_bet_seconds": 90, "decision_seconds": 20,
    "bot_think_seconds": 3, "croupier_plays_bots": True,
    "breaks": [{"after_round": 1, "minutes": 10}], "sitting_out": "min-stake", "min_bets": 3,
    "stages": [
        {"name": "heats", "rounds": 1, "coups": 8, "minutes": 20,
         "limits": [{"min_stake": 50, "max_stake": 1_000}],
         "advance": {"per_table": 2, "overall": 0, "wildcards": 1}, "chips": "carry",
         "secret_bet": False, "bet_seconds": 30},
        {"name": "final", "rounds": 1, "coups": None, "minutes": None,
         "limits": [{"min_stake": 100, "max_stake": 2_000}], "advance": None,
         "chips": "reset", "secret_bet": True, "bet_seconds": None},
    ],
}


UNTIL_ONE_IS_LEFT = msgspec.to_builtins(msgspec.structs.replace(
    PRESETS["chemin-de-fer-freeze-out"], stages=(Stage(name="freeze-out", rounds=0),)))


def test_the_request_schema_is_the_formats_own() -> None:
    """Every field of `TournamentSettings` may be given beside a preset (derived, so a field
    added to the format is accepted without touching the API)."""
    assert set(FORMAT_FIELDS) == set(TournamentSettings.__struct_fields__)
    assert set(FormatChoice.__struct_fields__) == {"preset", "format", *FORMAT_FIELDS}


def created(api: Api, body: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    answer = api.call("POST", "/tournaments", organiser, json=body)
    assert answer.status_code == 201, answer.text
    read = api.call("GET", f"/tournaments/{answer.json()['id']}/format")
    assert read.status_code == 200, read.text
    shown: dict[str, Any] = read.json()
    return shown


def test_a_whole_format_is_read_back_field_for_field(api: Api) -> None:  # noqa: F811
    assert set(EVENING) == set(FORMAT_FIELDS)  # every field, none left to its default
    assert created(api, {"name": "whole", "format": EVENING}) == EVENING


def test_every_field_may_be_given_over_a_preset(api: Api) -> None:  # noqa: F811
    body = {"name": "over", "preset": "punto-banco-eight", **EVENING}
    assert created(api, body) == EVENING
    clocks = {"name": "clocks", "preset": "chemin-de-fer-croupier", "minutes_per_round": 15,
              "dealing": "automatic", "coups_per_round": 6}
    shown = created(api, clocks)
    expected = msgspec.json.decode(msgspec.json.encode(PRESETS["chemin-de-fer-croupier"]))
    assert shown == {**expected, "minutes_per_round": 15, "dealing": "automatic",
                     "coups_per_round": 6}


@pytest.mark.parametrize(("body", "status", "rule", "field"), [
    ({"preset": "punto-banco-eight", "bet_seconds": 5000}, 422, "settings-bet-clock",
     "bet_seconds"),
    ({"preset": "chemin-de-fer-croupier", "betting_order": "rotating", "minutes_per_round": 9},
     422, "settings-betting-order", "betting_order"),
    ({"preset": "punto-banco-eight", "minutes_per_round": 0}, 422, "tournament-round",
     "minutes_per_round"),
    ({"preset": "punto-banco-eight", "dealing": "by-hand"}, 422, "invalid-field", "dealing"),
    ({"format": EVENING, "croupier_tables": 3}, 422,  # beyond its 2 tables
     "tournament-croupier-tables", "croupier_tables"),
    ({"preset": "punto-banco-eight", "croupier_tables": -1}, 422,
     "tournament-croupier-tables", "croupier_tables"),
    ({"preset": "punto-banco-eight", "house_rules": "france-2007", "variant": "simplified",
      "betting_order": "free", "bet_seconds": 0}, 422, "settings-preset", "variant"),
    ({"preset": "punto-banco-eight", "colour": "red"}, 422, "invalid-field", "colour"),
    ({"preset": "punto-banco-eight", "betting_order": "free", "bet_seconds": 0}, 422,
     "sitting-out-without-turns", "betting_order"),  # sitting out costs a turn's clock
    ({"preset": "punto-banco-eight", "min_bets": 19}, 422, "tournament-min-bets",
     "min_bets"),  # more bets than its rounds' 18 coups
    ({"format": UNTIL_ONE_IS_LEFT, "min_bets": 2}, 422, "tournament-min-bets",
     "min_bets"),  # a format that never cuts
])
def test_a_refused_value_names_its_field_and_records_nothing(
        api: Api, body: dict[str, Any], status: int, rule: str,  # noqa: F811
        field: str) -> None:
    before = api.events()
    answer = api.call("POST", "/tournaments", api.token(Role.ORGANISER),
                      json={"name": "bad", **body})
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith(PROBLEM)
    problem = answer.json()
    assert (problem["rule"], problem.get("field")) == (rule, field), answer.text
    assert api.events() == before
