"""The organiser's announcements over HTTP: `POST /tournaments/{t}/announcements` records one
`AnnouncementMade` on the tournament, shown newest first in `GET /tournaments/{t}`; anyone
else, an empty or overlong text or a control character is refused and records nothing.
"""

from __future__ import annotations

import uuid

import pytest

from api.tokens import Role
from domain.tournament.aggregate import Tournament
from tests.e2e.test_api import Api, api  # noqa: F401 - the fixture
from tests.e2e.test_tournaments_api import refused

pytestmark = pytest.mark.postgres


def test_the_organiser_announces_and_the_big_screen_reads_it(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    alice = api.token(Role.PLAYER, player="alice")
    created = api.call("POST", "/tournaments", organiser,
                       json={"name": "told", "preset": "punto-banco-heats"})
    assert created.status_code == 201, created.text
    path = "/tournaments/told/announcements"
    for text in ("Break in 10 minutes", "  Bar open until midnight  "):
        made = api.call("POST", path, organiser, json={"text": text})
        assert made.status_code == 201, made.text
    shown = api.call("GET", "/tournaments/told").json()["announcements"]
    assert [a["text"] for a in shown] == ["Bar open until midnight", "Break in 10 minutes"]
    assert shown[0]["actor"] == "@organiser" and shown[0]["at"] > 0
    made = [e for e in api.service.events_of(uuid.UUID(created.json()["id"]))
            if isinstance(e, Tournament.AnnouncementMade)]
    assert [(e.text, e.actor) for e in made] == [("Break in 10 minutes", "@organiser"),
                                                 ("Bar open until midnight", "@organiser")]
    refused(api, 403, "organiser-only", "POST", path, alice, {"text": "hello"})
    refused(api, 401, "unauthenticated", "POST", path, None, {"text": "hello"})
    for text in ("", "x" * 281, "two\nlines"):
        refused(api, 422, "invalid-field", "POST", path, organiser, {"text": text})
    refused(api, 422, "announcement-invalid", "POST", path, organiser, {"text": "   "})
    refused(api, 404, "unknown-tournament", "POST", "/tournaments/nowhere/announcements",
            organiser, {"text": "hello"})
    assert api.call("POST", path, organiser, json={"text": "x" * 280}).status_code == 201
