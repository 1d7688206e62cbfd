"""Tournaments run by an organiser over HTTP, directed by a real worker (a subprocess).

From each preset (its people's clocks at one second): create, register people (a player
registering themselves, the organiser registering another) and house bots, start, intervene,
and let a `sabot worker` direct the tournament to its end, the people never acting (their
clocks run out, nothing at a table is recorded as theirs); then one winner, every position once
(ties shared), prizes summing to the pool, the standings' order equal to the results', every
intervention in the record with its actor, reason and chips before and after. Bad input: a
problem-details 4xx, and not one event recorded.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import msgspec
import pytest

from api.commands.worker import running_worker
from api.tokens import Role
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Dealing
from domain.tournament.presets import PRESETS
from domain.tournament.state import secret_commitment
from tests.e2e.test_api import KEY, PROBLEM, Api, api, free_port  # noqa: F401 - the fixture
from tests.unit.test_tournament import check_places

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
FINISH = 240.0


def worker(database: str, cwd: Path) -> AbstractContextManager[subprocess.Popen[bytes]]:
    """A `sabot worker` on the embedded broker of `cwd`, its own queue, directing `database`."""
    return running_worker("", database, cwd / "worker.log", "--pool", "solo", "--queue",
                          f"t-{uuid.uuid4().hex[:8]}", cwd=cwd,
                          env={"PYTHONPATH": str(ROOT), "SABOT_SECRET_KEY": KEY.hex()})


def refused(api: Api, status: int, rule: str, method: str, path: str,  # noqa: F811
            token: str | None, body: Any = None) -> None:
    before = api.events()
    answer = api.call(method, path, token, json=body)
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith(PROBLEM)
    assert answer.json()["rule"] == rule, answer.text
    assert api.events() == before


# The croupier-dealt presets wait for croupiers (tests/integration/test_preset_evenings.py).
@pytest.mark.parametrize("preset", [name for name, settings in PRESETS.items()
                                    if settings.dealing is Dealing.AUTOMATIC])
def test_a_tournament_from_a_preset_is_played_to_the_end_by_a_worker(
        api: Api, postgres_url: str, tmp_path: Path, preset: str) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    alice = api.token(Role.PLAYER, player="alice")
    clocks = {"people_bet_seconds": 1, "decision_seconds": 1}  # the people never act
    if PRESETS[preset].bet_seconds:
        clocks["bet_seconds"] = 1
    created = api.call("POST", "/tournaments", organiser, json={
        "name": "open", "seed": "5eed", "format": msgspec.to_builtins(msgspec.structs.replace(
            PRESETS[preset], coups_per_round=2, tables=2, starting_chips=2000, **clocks))})
    assert created.status_code == 201, created.text
    shown = created.json()
    assert shown["status"] == "registering" and shown["entrants"] == 0
    path = f"/tournaments/{shown['id']}"
    assert api.call("POST", f"{path}/players", alice, json={"player": "alice"}).status_code == 201
    assert api.call("POST", f"{path}/players", organiser,
                    json={"player": "bob"}).status_code == 201
    for n in range(10):
        registered = api.call("POST", f"{path}/players", organiser,
                              json={"player": f"bot-{n}", "bot": True})
        assert registered.status_code == 201, registered.text
    listed = api.call("GET", "/tournaments").json()
    assert [(t["name"], t["entrants"], t["status"]) for t in listed] == [
        ("open", 12, "registering")]
    started = api.call("POST", f"{path}/start", organiser)
    assert started.status_code == 200, started.text
    view = started.json()
    assert view["status"] == "running" and view["players_left"] == 12
    assert len(view["tables"]) == 2 and view["average_stack"] == 2000
    assert sum(len(t["players"]) for t in view["tables"]) == 12
    refused(api, 409, "out-of-turn", "POST", f"{path}/start", organiser)
    carol = api.token(Role.PLAYER, player="carol")  # late registration: seated at once
    late = api.call("POST", f"{path}/players", carol, json={"player": "carol"})
    assert late.status_code == 201, late.text
    assert any(p["player"] == "carol" for t in api.call("GET", path).json()["tables"]
               for p in t["players"])
    assert api.call("POST", f"{path}/pause", organiser).json()["status"] == "paused"
    assert api.call("POST", f"{path}/resume", organiser).json()["status"] == "running"
    refused(api, 409, "not-paused", "POST", f"{path}/resume", organiser)
    penalty = api.call("POST", f"{path}/interventions", organiser, json={
        "kind": "penalise", "player": "bob", "delta": -100, "reason": "slow play"})
    assert penalty.status_code == 201, penalty.text
    refused(api, 422, "reason-required", "POST", f"{path}/interventions", organiser,
            {"kind": "penalise", "player": "bob", "delta": -100, "reason": " "})
    refused(api, 422, "invalid-field", "POST", f"{path}/interventions", organiser,
            {"kind": "penalise", "player": "bob", "delta": -100})
    missing = api.call("POST", f"{path}/interventions", organiser,
                       json={"kind": "penalise", "player": "bob", "delta": -100})
    assert missing.json()["field"] == "reason", missing.text  # named, not the body's "data"
    assert "reason" in missing.json()["detail"]
    refused(api, 403, "organiser-only", "POST", f"{path}/interventions", alice,
            {"kind": "penalise", "player": "bob", "delta": -100, "reason": "me"})

    with worker(postgres_url, tmp_path):
        deadline = time.monotonic() + FINISH
        while (view := api.call("GET", path).json())["status"] != "finished":
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            time.sleep(0.5)

    results = api.call("GET", f"{path}/results").json()
    positions = results["positions"]
    assert results["winner"] == view["winner"] == positions[0]["player"]
    assert [p["position"] for p in positions].count(1) == 1
    check_places([_Row(p) for p in positions], 13)
    assert sum(p["prize"] for p in positions) == results["prize_pool"] == view["prize_pool"] > 0
    standings = api.call("GET", f"{path}/standings").json()
    assert [s["player"] for s in standings] == [p["player"] for p in positions]
    assert [s["rank"] for s in standings] == [p["position"] for p in positions]
    events = api.service.events_of(uuid.UUID(shown["id"]))
    made = [e for e in events if isinstance(e, Tournament.InterventionMade)]
    assert [(e.kind, e.player, e.actor, e.reason, e.chips_before, e.chips_after)
            for e in made] == [("penalise", "bob", "@organiser", "slow play", 2000, 1900)]
    assert any(isinstance(e, Tournament.TournamentFinished) for e in events)
    people = {"alice", "bob", "carol"}  # never acted: nothing at a table is theirs
    state = api.service.load(uuid.UUID(shown["id"]), "tournament").state
    for number in range(1, state.tables_opened + 1):
        table = Table.create_id(state.table_name(number))
        assert not [e for e in api.service.events_of(table) if e.actor in people]
    placed = {e.player: e for e in events if isinstance(e, Tournament.SecretBetPlaced)}
    revealed = [e for e in events if isinstance(e, Tournament.SecretBetRevealed)]
    assert bool(revealed) == PRESETS[preset].plan()[-1].secret_bet  # the bots' secret bets
    for bet in revealed:  # a commitment first, opened only once the coup was dealt
        assert placed[bet.player].commitment == secret_commitment(bet.spot, bet.amount,
                                                                  bet.nonce)
        assert placed[bet.player].originator_version < bet.originator_version


class _Row:
    def __init__(self, row: dict[str, Any]) -> None:
        self.position, self.tied = row["position"], row["tied"]


def test_bad_input_is_a_problem_and_records_nothing(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    alice = api.token(Role.PLAYER, player="alice")
    refused(api, 404, "unknown-preset", "POST", "/tournaments", organiser,
            {"name": "x", "preset": "no-such"})
    refused(api, 422, "tournament-round", "POST", "/tournaments", organiser,
            {"name": "x", "preset": "punto-banco-heats", "coups_per_round": 0})
    heats = PRESETS["punto-banco-heats"]
    too_many = {"variant": "punto-banco", "seats_per_table": 4, "starting_chips": 100,
                "min_stake": 1, "max_stake": 10, "coups_per_round": 3, "tables": 2,
                "stages": [{"name": "heats", "rounds": 1, "advance": {"overall": 8}},
                           {"name": "final", "rounds": 1}]}
    refused(api, 422, "too-many-advancers", "POST", "/tournaments", organiser,
            {"name": "x", "format": too_many})
    refused(api, 422, "tournament-prizes", "POST", "/tournaments", organiser,
            {"name": "x", "format": {**too_many, "stages": [], "prizes": [6000, 3000]}})
    refused(api, 422, "invalid-field", "POST", "/tournaments", organiser,
            {"name": "x", "preset": "punto-banco-heats", "coups_per_round": "many"})
    refused(api, 401, "unauthenticated", "POST", "/tournaments", None,
            {"name": "x", "preset": "punto-banco-heats"})
    refused(api, 403, "organiser-only", "POST", "/tournaments", alice,
            {"name": "x", "preset": "punto-banco-heats"})
    created = api.call("POST", "/tournaments", organiser, json={
        "name": "closed", "format": {**too_many, "stages": [], "late_rounds": 0,
                                     "seats_per_table": 4}})
    assert created.status_code == 201, created.text
    assert heats.late_rounds == 1
    refused(api, 422, "tournament-exists", "POST", "/tournaments", organiser,
            {"name": "closed", "preset": "punto-banco-heats"})
    path = "/tournaments/closed"
    for player in ("alice", "bob"):
        assert api.call("POST", f"{path}/players", organiser,
                        json={"player": player}).status_code == 201
    refused(api, 422, "already-registered", "POST", f"{path}/players", alice,
            {"player": "alice"})
    refused(api, 403, "not-yourself", "POST", f"{path}/players", alice, {"player": "carol"})
    refused(api, 403, "not-yourself", "POST", f"{path}/players", alice,
            {"player": "alice", "bot": True})
    refused(api, 403, "not-yourself", "DELETE", f"{path}/players/bob", alice)
    refused(api, 404, "unknown-tournament", "POST", "/tournaments/nowhere/players",
            organiser, {"player": "dan"})
    assert api.call("POST", f"{path}/start", organiser).status_code == 200
    refused(api, 409, "out-of-turn", "POST", f"{path}/start", organiser)
    refused(api, 409, "registration-closed", "POST", f"{path}/players", organiser,
            {"player": "late"})
    refused(api, 409, "out-of-turn", "DELETE", f"{path}/players/bob", organiser)
    refused(api, 403, "player-only", "POST", f"{path}/secret-bets", organiser,
            {"commitment": "0" * 64})
    refused(api, 409, "out-of-turn", "POST", f"{path}/secret-bets", alice,
            {"commitment": "0" * 64})
    refused(api, 404, "no-secret-bet", "POST", f"{path}/secret-bets/reveal", alice,
            {"spot": "tie", "amount": 10, "nonce": "00"})
    refused(api, 422, "invalid-field", "POST", "/tournaments/preview", organiser,
            {"preset": "punto-banco-heats", "players": 12, "runs": 50})
    before = api.events()
    looked = api.call("POST", "/tournaments/preview", organiser, json={
        "preset": "chemin-de-fer-freeze-out", "players": 4, "runs": 1, "coups_per_round": 1})
    assert looked.status_code == 200, looked.text
    assert looked.json()["coups"]["mean"] > 0 and api.events() == before
    assert api.call("GET", "/tournaments/nowhere").status_code == 404
    assert api.call("GET", "/tournaments/nowhere/standings").json() == []


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


def test_sabot_serve_runs_an_embedded_worker_that_ends_with_it(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_BROKER_URL": "",
           "SABOT_SECRET_KEY": KEY.hex()}
    server = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--database",
         f"sqlite:///{tmp_path}/s.db"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / ".sabot" / "serve-worker.log").exists() or not children(
                server.pid):
            assert time.monotonic() < deadline and server.poll() is None
            time.sleep(0.1)
        [worker_pid] = children(server.pid)
        while b"director started" not in (tmp_path / ".sabot" / "serve-worker.log").read_bytes():
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        server.terminate()  # uvicorn re-raises the SIGTERM: the worker must not outlive it
        server.wait(timeout=15)
    deadline = time.monotonic() + 20
    while Path(f"/proc/{worker_pid}").exists() and b"Z" not in Path(
            f"/proc/{worker_pid}/stat").read_bytes().split(b")")[-1][:3]:
        assert time.monotonic() < deadline, "the embedded worker outlived sabot serve"
        time.sleep(0.1)
