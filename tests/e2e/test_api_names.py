"""Names over HTTP: the same name in another Unicode form, case or width is refused as taken
(a player's `émile` precomposed and decomposed, `ａnn` beside `ann`, a tournament
`FRIDAY-EVE` beside `friday-eve`), and a `/` in a name is refused naming it."""

from __future__ import annotations

import pytest

from api.tokens import Role
from tests.e2e.test_api import Api
from tests.e2e.test_tournaments_api import refused

pytestmark = pytest.mark.postgres


def test_the_same_name_in_another_form_is_taken(api: Api) -> None:
    organiser = api.token(Role.ORGANISER)
    made = api.call("POST", "/tournaments", organiser,
                    json={"name": "friday-eve", "preset": "punto-banco-heats"})
    assert made.status_code == 201, made.text
    refused(api, 422, "tournament-exists", "POST", "/tournaments", organiser,
            {"name": "FRIDAY-EVE", "preset": "punto-banco-heats"})
    players = "/tournaments/friday-eve/players"
    for player in ("\u00e9mile", "ann"):
        added = api.call("POST", players, organiser, json={"player": player})
        assert added.status_code == 201, added.text
    refused(api, 422, "already-registered", "POST", players, organiser,
            {"player": "e\u0301mile"})
    refused(api, 422, "name-taken", "POST", players, organiser, {"player": "\uff41nn"})
    slash = api.call("POST", players, organiser, json={"player": "a/b"})
    assert (slash.status_code, slash.json()["rule"]) == (422, "name-invalid"), slash.text
    assert "'/'" in slash.json()["detail"]
