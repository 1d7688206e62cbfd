"""Publishing a tournament's results over HTTP and on the command line: refused before the
finish, while a dispute of one of its coups is open, and a second time (409 problems that
record nothing); the organiser sees the disputes of its tables (and of no other table); the
results say they are provisional until published, then who published them and when."""

from __future__ import annotations

import time
import uuid

import pytest

from api.cli import main
from api.tokens import Role
from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.services.disputes import DisputeService
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_tournaments_api import refused
from tests.integration.test_projections import Game
from tests.integration.test_tournament_run import run_tournament

pytestmark = pytest.mark.postgres


def test_results_are_published_once_no_dispute_is_open(
        api: Api, postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    created = api.call("POST", "/tournaments", organiser, json={
        "name": "spring", "preset": "punto-banco-heats"})
    assert created.status_code == 201, created.text
    refused(api, 409, "not-finished", "POST", "/tournaments/spring/results/publish", organiser)

    _, tournament_id, _ = run_tournament(postgres_url, b"publish", players=8)
    path = "/tournaments/cup"
    results = api.call("GET", f"{path}/results").json()
    assert results["status"] == "finished" and results["published"] is False
    assert results["published_by"] is None and results["published_at"] is None
    # a table of no tournament
    Game.open(api.service, "elsewhere", Variant.PUNTO_BANCO, players=3, tournament=None).coups(1)
    table = next(e.table for e in api.service.events_of(tournament_id)
                 if isinstance(e, Tournament.PlayerSeatedAt))
    with DisputeService(url=postgres_url) as disputes:
        # opened, not replayed yet (its worker has not run): the dispute is open
        dispute_id = disputes.open(Table.create_id(table), 1, reason="the third card",
                                   by="p01", command_id="dispute/p01/1")
        disputes.open(Table.create_id("elsewhere"), 1, reason="not this tournament's",
                      by="x", command_id="dispute/x/1")
        listed = api.call("GET", f"{path}/disputes", organiser)
        assert listed.status_code == 200, listed.text
        assert [(d["id"], d["table"], d["coup"], d["status"], d["verdict"])
                for d in listed.json()] == [(str(dispute_id), table, 1, "replaying", "open")]
        refused(api, 409, "disputes-open", "POST", f"{path}/results/publish", organiser)
        answer = api.call("POST", f"{path}/results/publish", organiser)
        assert f"coup 1 at {table}" in answer.json()["detail"]
        refused(api, 403, "organiser-only", "GET", f"{path}/disputes",
                api.token(Role.PLAYER, player="p01"))
        refused(api, 403, "organiser-only", "POST", f"{path}/results/publish",
                api.token(Role.PLAYER, player="p01"))
        refused(api, 401, "unauthenticated", "POST", f"{path}/results/publish", None)
        refused(api, 404, "unknown-tournament", "POST",
                "/tournaments/nowhere/results/publish", organiser)

        disputes.replay(dispute_id)
    [decided] = api.call("GET", f"{path}/disputes", organiser).json()
    assert decided["status"] == "decided" and decided["verdict"] == "consistent"

    before = time.time()
    published = api.call("POST", f"{path}/results/publish", organiser,
                         headers={"Idempotency-Key": "publish-cup"})
    assert published.status_code == 200, published.text
    body = published.json()
    assert body["published"] is True and body["published_by"] == "@organiser"
    assert before - 1 <= body["published_at"] <= time.time() + 1
    assert body["positions"] == results["positions"]
    assert api.call("GET", f"{path}/results").json() == body
    events = api.events()  # a retry with the same key answers again, recording nothing
    again = api.call("POST", f"{path}/results/publish", organiser,
                     headers={"Idempotency-Key": "publish-cup"})
    assert again.status_code == 200 and api.events() == events
    refused(api, 409, "results-published", "POST", f"{path}/results/publish", organiser)

    # the command line: one line and exit 1 for a refusal
    assert main(["tournament", "publish", "cup", "--database", postgres_url]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "[results-published]" in err
    assert main(["tournament", "publish", "spring", "--database", postgres_url]) == 1
    assert "[not-finished]" in capsys.readouterr().err
    assert uuid.UUID(body["id"]) == tournament_id
