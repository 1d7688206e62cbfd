"""Two `sabot serve` replicas on one PostgreSQL store, many writers over HTTP on the same table
and the same tournament at once: no answer is a 5xx, and every command answered as applied is
in the command log once.

The writers race on the same streams from both processes, so that inserts lose to a version
already taken mid-pipeline (`infra.store.recorders`) and are retried by the service; before the
recorders let psycopg own the transaction, about one POST in 400 was a 500 (`prepared
statement "_pg3_N" does not exist`, issue 30). Organisers adjusting chips at one table through
both replicas queue on the table's lock in the database (issue 36): none is refused. Bounded
in time: every request has a timeout and the whole run a deadline, so that it fails rather
than hangs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from api.tokens import Grant, Role, TokenStore
from domain.table.aggregate import Table
from infra.services.tables import TableService
from infra.store import notices
from projections.follower import Follower
from projections.registry import VIEWS
from projections.runner import Runner
from tests.client import CLIENT
from tests.e2e.test_api import KEY, free_port

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 12  # threads, each with its own player, alternating the replicas
ROUNDS = 12  # seat and leave (table), register and unregister (tournament), per writer
DEADLINE = 150.0  # seconds for the whole run
FORMAT = {"variant": "punto-banco", "seats_per_table": 14, "starting_chips": 100,
          "min_stake": 1, "max_stake": 10, "coups_per_round": 3,
          "stages": [{"name": "final", "rounds": 1}]}


def started(url: str, home: Path, database: str) -> subprocess.Popen[bytes]:
    """`sabot serve --no-worker` in its own working directory, ready to answer."""
    home.mkdir()
    port = int(url.rsplit(":", 1)[1])
    server = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "serve", "--no-worker", "--port", str(port),
         "--database", database], cwd=home, stdout=subprocess.DEVNULL,
        stderr=(home / "serve.log").open("w"),
        env={**os.environ, "PYTHONPATH": str(ROOT), "SABOT_SECRET_KEY": KEY.hex(),
             "SABOT_BROKER_URL": ""})
    deadline = time.monotonic() + 30
    while True:
        assert server.poll() is None, (home / "serve.log").read_text()[-3000:]
        try:
            if CLIENT.get(f"{url}/ready", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "sabot serve did not start"
        time.sleep(0.1)


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[list[str]]:
    yield from two_replicas(postgres_url, tmp_path)


def two_replicas(postgres_url: str, tmp_path: Path) -> Iterator[list[str]]:
    """Two `sabot serve --no-worker` on the store `postgres_url`, their URLs; stopped after."""
    urls = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for number, url in enumerate(urls):  # one after the other: the first creates tables
            servers.append(started(url, tmp_path / f"replica-{number}", postgres_url))
        yield urls
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def test_concurrent_writers_on_two_replicas_get_no_5xx(replicas: list[str],
                                                       postgres_url: str) -> None:
    with TableService(url=postgres_url, secret_key=KEY) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
        headers = {"Authorization": f"Bearer {token}"}
        client = httpx.Client(timeout=20, headers=headers)
        opened = client.post(f"{replicas[0]}/tables", json={"name": "race",
                                                           "variant": "punto-banco"})
        assert opened.status_code == 201, opened.text
        created = client.post(f"{replicas[1]}/tournaments", json={"name": "race-cup",
                                                                  "format": FORMAT})
        assert created.status_code == 201, created.text
        deadline = time.monotonic() + DEADLINE
        applied: list[str] = []
        statuses: Counter[int] = Counter()
        failures: list[str] = []

        def send(replica: int, method: str, path: str, body: object = None) -> None:
            key = uuid.uuid4().hex
            answer = client.request(method, f"{replicas[replica % 2]}{path}", json=body,
                                    headers={"Idempotency-Key": key})
            statuses[answer.status_code] += 1
            if answer.status_code >= 500:
                failures.append(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
            elif answer.status_code < 300:
                applied.append(key)

        def writer(number: int) -> None:
            player = f"p{number}"
            for step in range(ROUNDS):
                if time.monotonic() > deadline:
                    return
                replica = number + step
                send(replica, "POST", "/tables/race/commands",
                     {"kind": "seat", "player": player, "chips": 100})
                send(replica + 1, "POST", "/tournaments/race-cup/players", {"player": player})
                send(replica, "POST", "/tables/race/commands",
                     {"kind": "leave", "player": player})
                send(replica + 1, "DELETE", f"/tournaments/race-cup/players/{player}")

        with ThreadPoolExecutor(WRITERS) as pool:
            for done in [pool.submit(writer, n) for n in range(WRITERS)]:
                done.result(timeout=max(1.0, deadline - time.monotonic() + 30))
        client.close()
        assert time.monotonic() < deadline, f"the writers did not finish in {DEADLINE:.0f} s"
        assert not failures, f"{len(failures)} of {statuses.total()} answers were 5xx: " \
                             f"{failures[:5]}"
        assert len(applied) >= statuses.total() // 2, statuses  # the race did write
        database = service.database
        with database.transaction(write=False) as cursor:
            logged = Counter(row["command_id"].rsplit("/", 1)[1] for row in database.execute(
                cursor, "SELECT command_id FROM {command_log}").fetchall())
        assert all(logged[key] == 1 for key in applied), \
            [key for key in applied if logged[key] != 1][:5]


ADJUSTMENTS = 200  # chip adjustments to one table, split between the replicas


@dataclass(frozen=True)
class Adjusted:
    """Chip adjustments sent at once to one table through both replicas: each answer's
    status, and the wall seconds they all took."""

    answers: list[tuple[str, int, str]]  # idempotency key, status, the answer's start
    seconds: float


def adjust_at_once(replicas: list[str], postgres_url: str, clients: int, count: int,
                   name: str) -> Adjusted:
    """`count` adjustments of one player's chips at table `name` by `clients` organisers at
    once, alternating the replicas; then checks that none was refused (no 409, no 5xx), each
    is recorded once, and the chips add up."""
    with TableService(url=postgres_url, secret_key=KEY) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
        client = httpx.Client(timeout=30, headers={"Authorization": f"Bearer {token}"},
                              limits=httpx.Limits(max_connections=clients))
        opened = client.post(f"{replicas[0]}/tables", json={"name": name,
                                                           "variant": "punto-banco"})
        assert opened.status_code == 201, opened.text
        seated = client.post(f"{replicas[1]}/tables/{name}/commands",
                             json={"kind": "seat", "player": "alice", "chips": 100},
                             headers={"Idempotency-Key": f"seat-{name}"})
        assert seated.status_code < 300, seated.text
        deadline = time.monotonic() + DEADLINE

        def adjust(n: int) -> tuple[str, int, str]:
            key = f"adjust-{name}-{n}"
            answer = client.post(f"{replicas[n % 2]}/tables/{name}/commands",
                                 json={"kind": "adjust-chips", "player": "alice", "delta": 1,
                                       "reason": "queue"}, headers={"Idempotency-Key": key})
            return key, answer.status_code, answer.text[:300]

        started_at = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            answers = list(pool.map(adjust, range(count),
                                    timeout=max(1.0, deadline - time.monotonic())))
        seconds = time.perf_counter() - started_at
        client.close()
        refused = [(status, text) for _, status, text in answers if status >= 300]
        assert not refused, f"{len(refused)} of {count} refused: {refused[:5]}"
        database = service.database
        with database.transaction(write=False) as cursor:
            logged = Counter(row["command_id"].rsplit("/", 1)[1] for row in database.execute(
                cursor, "SELECT command_id FROM {command_log}").fetchall())
        assert all(logged[key] == 1 for key, _, _ in answers), \
            [key for key, _, _ in answers if logged[key] != 1][:5]
        [seat] = service.state(Table.create_id(name)).seats
        assert seat.chips == 100 + count
    return Adjusted(answers, seconds)


@pytest.mark.parametrize("clients", [16, 48])
def test_commands_to_one_table_queue_across_replicas(replicas: list[str], postgres_url: str,
                                                     clients: int) -> None:
    """Organisers adjusting chips at one table through both replicas at once: a command that
    finds the table written by the other replica waits for its lock
    (`infra.store.aggregate_locks`) instead of losing the race: none is refused (no 409, no
    5xx), each is recorded once, and the chips add up."""
    adjusted = adjust_at_once(replicas, postgres_url, clients, ADJUSTMENTS, f"queue-{clients}")
    assert len(adjusted.answers) == ADJUSTMENTS


class Late(Follower):
    """A follower that runs the views a moment after it is woken."""

    def step(self, seen: tuple[int, ...] | None) -> tuple[int, ...]:
        time.sleep(0.3)
        return super().step(seen)


def test_a_read_on_the_other_replica_is_woken_by_the_database(replicas: list[str],
                                                              postgres_url: str) -> None:
    """A command on one replica, a read of its position (`?at=`) on the other: the views'
    runner (here, in a third process) is woken by the command's commit through PostgreSQL's
    NOTIFY, and the read by the runner's batch (`infra.store.notices`). The runner's own look
    is a minute apart, so that the views move by the notices alone, and it starts a moment
    after it is woken, so that the read waits."""
    with TableService(url=postgres_url, secret_key=KEY) as service:
        follower = Late(Runner(service, VIEWS), interval=60).start()
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
        client = httpx.Client(timeout=20, headers={"Authorization": f"Bearer {token}"})
        try:
            opened = client.post(f"{replicas[0]}/tables", json={"name": "woken",
                                                               "variant": "punto-banco"})
            assert opened.status_code == 201, opened.text
            for n in range(5):
                seated = client.post(f"{replicas[0]}/tables/woken/commands",
                                     json={"kind": "seat", "player": f"p{n}", "chips": 100},
                                     headers={"Idempotency-Key": f"woken-{n}"})
                assert seated.status_code < 300, seated.text
                at = seated.json()["position"]
                rotation = client.get(f"{replicas[1]}/tables/woken/rotation?at={at}")
                assert rotation.status_code == 200, rotation.text
                assert f"p{n}" in rotation.json()["seated"]
            heard = notices.positions(service.database, notices.COMMITS).heard
            samples = client.get(f"{replicas[1]}/metrics").text.splitlines()
        finally:
            follower.stop()
            client.close()
        assert heard > 0  # the runner heard the other process's commits
        woken = [line for line in samples if line.startswith('sabot_view_waits_total{by="notice"}')]
        assert woken and float(woken[0].rsplit(" ", 1)[1]) > 0, samples
