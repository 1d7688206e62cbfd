"""Every POST route of the OpenAPI document, sent a body nested 5,000 deep, with the organiser's
token and without: never a 5xx, and a 4xx problem from every route that reads a body
(`api.bodies` decodes every body, bounded); the PIN route counts such a body as a try."""

from __future__ import annotations

import re

import pytest

from api.tokens import Role
from tests.e2e.test_api import PROBLEM, Api, Game

pytestmark = pytest.mark.postgres

DEEP = b"[" * 5000 + b"]" * 5000


def post_paths(api: Api, game: Game) -> dict[str, bool]:
    """Each POST route's path (its parameters filled in) and whether it reads a body."""
    document = api.call("GET", "/schema/openapi.json").json()
    return {re.sub(r"\{[^}]+\}", lambda m: game.table_id if "table" in m.group(0) else "t",
                   path): "requestBody" in operations["post"]
            for path, operations in document["paths"].items() if "post" in operations}


def test_every_post_route_refuses_a_deep_body_with_a_4xx(api: Api, game: Game) -> None:
    paths = post_paths(api, game)
    assert paths["/sign-in/pin"] and paths["/tournaments"], paths
    for path, reads_a_body in paths.items():
        for token in (None, game.organiser):
            response = api.call("POST", path, token, content=DEEP,
                                headers={"Content-Type": "application/json",
                                         "Idempotency-Key": "deep-1"})
            assert response.status_code < 500, (path, response.status_code, response.text)
            if reads_a_body:
                assert response.status_code >= 400, (path, response.text)
                assert response.headers["content-type"] == PROBLEM, (path, response.text)


def test_a_deep_body_is_too_deep_and_counts_as_a_pin_try(api: Api) -> None:
    for _ in range(5):
        refused = api.call("POST", "/sign-in/pin", content=DEEP,
                           headers={"Content-Type": "application/json"})
        assert refused.status_code == 400, refused.text
        assert refused.json()["rule"] == "too-deep"
    organiser = api.token(Role.ORGANISER)
    created = api.call("POST", "/tournaments", organiser, content=DEEP,
                       headers={"Content-Type": "application/json"})
    assert created.json()["rule"] == "too-deep", created.text
    sixth = api.call("POST", "/sign-in/pin", json={"player": "alice", "pin": "000000"})
    assert sixth.status_code == 429, sixth.text
