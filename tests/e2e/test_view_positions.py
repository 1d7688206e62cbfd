"""Views served as they are, with their position, over HTTP: a read never runs the views.

A command's answer gives its `position`; a read given it as `?at=` waits for the views'
runner (`projections.follower`) to reach it and shows the command; a read without it answers
at once with the position its view is at, even when no runner runs (then 503 for a position
not reached in time, 422 for one past the store's head; a table the view has not reached is
read at its last event: 503 too, never a 404 for a table that exists); a reader waiting for
a position holds up no other reader; and
`sabot serve` with its embedded worker keeps the views fresh for a newcomer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from api.tokens import Grant, Role, TokenStore
from api.view_reader import ViewReader
from domain.game.settings import TableSettings
from projections.registry import NAMES, VIEWS
from projections.rotation import Rotation, rotations
from projections.runner import Runner
from tests.client import CLIENT
from tests.e2e.test_api import KEY, Api, a_service, free_port, serving

pytestmark = pytest.mark.postgres


def position(response: httpx.Response) -> int:
    return int(response.headers["x-view-position"])


def open_and_seat(api: Api, name: str) -> tuple[int, int]:
    """Open `name` and seat alice over HTTP: the two commands' positions."""
    organiser = api.token(Role.ORGANISER)
    opened = api.call("POST", "/tables", organiser, json={"name": name, "variant": "simplified"})
    assert opened.status_code == 201, opened.text
    seated = api.call("POST", f"/tables/{name}/commands", organiser,
                      json={"kind": "seat", "player": "alice", "chips": 500,
                            "command_id": f"seat-{name}"})
    assert seated.status_code == 200, seated.text
    return int(opened.json()["position"]), int(seated.json()["position"])


def test_a_read_at_a_command_s_position_shows_that_command(api: Api) -> None:
    opened, seated = open_and_seat(api, "kept")
    assert seated > opened
    rotation = api.call("GET", f"/tables/kept/rotation?at={seated}")
    assert rotation.status_code == 200, rotation.text
    assert rotation.json()["seated"] == ["alice"] and position(rotation) >= seated
    lobby = api.call("GET", f"/tables?at={opened}")
    assert [t["name"] for t in lobby.json()] == ["kept"] and position(lobby) >= opened
    recall = api.call("GET", f"/tables/kept/recall?last=3&at={seated}")
    assert recall.json() == [] and position(recall) >= seated
    unknown = api.call("GET", f"/tables/never-opened/recall?at={seated}")  # no coups: asked
    assert unknown.status_code == 404 and unknown.json()["rule"] == "unknown-table"


def test_a_read_answers_at_once_with_its_position_when_no_runner_runs(
        postgres_url: str) -> None:
    with serving(a_service(postgres_url), views=False) as api:
        opened, seated = open_and_seat(api, "unseen")
        for _ in range(3):  # a read does not run its view, however often it is made
            lobby = api.call("GET", "/tables")
            assert lobby.status_code == 200 and lobby.json() == []
            assert position(lobby) < opened
        # read once each (`Api.call` would wait out a view behind, 20 s, as a client does)
        behind = CLIENT.get(f"{api.base_url}/tables/unseen/rotation?at={seated}", timeout=10)
        assert behind.status_code == 503 and behind.headers["retry-after"] == "1"
        assert behind.json()["rule"] == "view-behind" and position(behind) < opened
        unseen = CLIENT.get(f"{api.base_url}/tables/unseen/rotation", timeout=10)  # not in the view
        assert unseen.status_code == 503 and unseen.json()["rule"] == "view-behind"
        never = api.call("GET", "/tables/never-opened/rotation")
        assert never.status_code == 404 and never.json()["rule"] == "unknown-table"
        nowhere = api.call("GET", f"/tables?at={api.head() + 1000}")
        assert nowhere.status_code == 422 and nowhere.json()["rule"] == "unknown-position"
        runner = Runner(api.service, VIEWS)
        assert runner.lag("rotation").position < opened  # no read moved it
        runner.catch_up_together(NAMES)  # `sabot projections run`, once
        lobby = api.call("GET", "/tables")
        assert [t["name"] for t in lobby.json()] == ["unseen"] and position(lobby) >= seated
        assert api.call("GET", "/tables/unseen/rotation").json()["seated"] == ["alice"]


def test_a_reader_waiting_for_a_position_holds_up_no_other_reader(postgres_url: str) -> None:
    with a_service(postgres_url) as service:
        reader, runner = ViewReader(service, wait=60), Runner(service, VIEWS)
        runner.catch_up_together(NAMES)
        head = runner.heads()[0]
        opened = service.open_table("waited", TableSettings.default("simplified"),
                                    command_id="w").position
        assert opened is not None and opened > head
        waited: list[tuple[list[Rotation], int]] = []

        def wait_for_the_next_event() -> None:
            answer = reader.read("rotation", rotations, opened)
            waited.append((answer.value, answer.position))

        waiting = threading.Thread(target=wait_for_the_next_event)
        waiting.start()
        inside, release = threading.Event(), threading.Event()

        def slow(database: object) -> list[Rotation]:
            inside.set()
            assert release.wait(30)
            return rotations(service.database)

        slow_reader = threading.Thread(target=reader.read, args=("rotation", slow))
        slow_reader.start()
        assert inside.wait(30)
        for _ in range(3):  # answered while one reader waits and another is mid-read
            answer = reader.read("rotation", rotations)
            assert answer.value == [] and answer.position == head
        assert waiting.is_alive() and slow_reader.is_alive()
        release.set()
        runner.catch_up_together(NAMES)  # the runner reaches the write: the waiter answers
        waiting.join(30)
        slow_reader.join(30)
        [(tables, at)] = waited
        assert [t.table for t in tables] == ["waited"] and at >= opened


def test_sabot_serve_with_its_worker_keeps_the_views_fresh(postgres_url: str,
                                                           tmp_path: Path) -> None:
    """The README's `sabot serve` (its embedded worker runs the views): a write is in the
    views without anyone running them by hand."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "SABOT_SECRET_KEY": KEY.hex(), "SABOT_BROKER_URL": ""}
    server = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--database",
         postgres_url], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, "sabot serve stopped"
            try:
                CLIENT.get(f"{base}/ready", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "sabot serve did not start"
                time.sleep(0.1)
        with a_service(postgres_url) as service:
            token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
        opened = CLIENT.post(f"{base}/tables", json={"name": "fresh", "variant": "simplified"},
                             headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert opened.status_code == 201, opened.text
        at = opened.json()["position"]
        while True:  # no read runs the views: only the worker's runner brings them here
            lobby = CLIENT.get(f"{base}/tables", timeout=10)
            if position(lobby) >= at:
                break
            assert time.monotonic() < deadline + 30, "the worker did not run the views"
            time.sleep(0.1)
        assert [t["name"] for t in lobby.json()] == ["fresh"]
    finally:
        server.terminate()
        server.wait(timeout=15)
