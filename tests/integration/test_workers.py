"""Workers for real: `sabot worker` runs as a subprocess on Redis or on the embedded
filesystem broker, and the tests send it deadlines through a broker, as the service would.

A chemin de fer table is played by bots up to the punter's decision; its deadline then
either plays the default once (however often it is delivered) or finds the player was in
time. The tests read the outcome from the store (the decision events of that coup and side)
and from the worker's JSON log lines. A worker plays the tasks of its own store (`--database`):
the messages carry ids only, so each test plays on the store of the worker it uses.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any, NamedTuple

import msgspec
import psycopg
import pytest
from celery import Celery

from api.cli import main as cli
from domain.bots import next_command
from domain.dispute.aggregate import Dispute
from domain.dispute.verdicts import Discrepancy, Verdict
from domain.game.coup import Side
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.defaults import deadline_command_id, default_draw
from domain.table.state import CROUPIER
from infra.audit.verify import verify
from infra.services.disputes import DisputeService
from infra.services.tables import TableService, seeds_from
from tests.conftest import REDIS_URL, need_server
from workers.app import make_app
from workers.deadlines import ACTOR, schedule_deadline
from workers.disputes import request_replay

ROOT = Path(__file__).resolve().parents[2]
SECRET = bytes(range(32))
DECISIONS = ("HandStood", "ThirdCardAsked")
COUNTDOWN = 1.0
WAIT = 20.0

Line = dict[str, Any]


class Worker:
    """A `sabot worker` subprocess whose JSON log lines are collected as they come."""

    def __init__(self, cwd: Path, *args: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_BROKER_URL": ""}
        self.lines: list[Line] = []
        self.other: list[str] = []  # what is not a log line: warnings, tracebacks
        self.process = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "worker", *args], cwd=cwd, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.wait_for(lambda line: line["event"].endswith(" ready."))

    def _read(self) -> None:
        assert self.process.stderr is not None
        for text in self.process.stderr:
            if text.startswith("{"):
                self.lines.append(json.loads(text))
            else:
                self.other.append(text)

    def wait_for(self, matches: Callable[[Line], bool], count: int = 1) -> list[Line]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            found = [line for line in list(self.lines) if matches(line)]
            if len(found) >= count:
                return found
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        raise AssertionError(f"the worker (exit code {self.process.poll()}) never logged it; "
                             f"its log: {self.lines[-20:]}; other output: {self.other[-20:]}")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def logged(event: str, task_id: str) -> Callable[[Line], bool]:
    return lambda line: line.get("task_id") == task_id and line["event"] == event


def succeeded(task_id: str) -> Callable[[Line], bool]:
    return lambda line: line.get("task_id") == task_id and " succeeded in " in line["event"]


@pytest.fixture
def sqlite_store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The store of the worker the test uses (`on_redis`, `embedded`), else a store of its own."""
    for worker in ("on_redis", "embedded"):
        if worker in request.fixturenames:
            return str(request.getfixturevalue(worker).store)
    return f"sqlite:///{tmp_path}/sabot.db"


@pytest.fixture
def service(sqlite_store: str) -> Iterator[TableService]:
    svc = TableService(url=sqlite_store, secret_key=SECRET)
    svc.seed_source = seeds_from(b"sabot-test-workers")
    yield svc
    svc.close()


class OnRedis(NamedTuple):
    producer: Celery
    worker: Worker
    store: str  # the worker's store: the tests' tables (each its own name)


@pytest.fixture(scope="module")
def on_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OnRedis]:
    """A producer app and a worker on Redis, on a queue of their own, on the module's store."""
    need_server("Redis", "127.0.0.1", 6379)
    home = tmp_path_factory.mktemp("redis-worker")
    store = f"sqlite:///{home}/sabot.db"
    TableService(url=store).close()
    queue = f"sabot-test-{uuid.uuid4().hex[:8]}"
    producer = make_app(REDIS_URL, home=home / ".sabot", queue=queue)
    worker = Worker(home, "--broker", REDIS_URL, "--queue", queue, "--concurrency", "2",
                    "--database", store)
    yield OnRedis(producer, worker, store)
    worker.stop()
    with producer.connection_for_write() as connection:
        client = connection.default_channel.client
        client.delete(queue, *client.keys(f"_kombu.binding*.{queue}"))
    producer.close()


class Embedded(NamedTuple):
    producer: Celery
    worker: Worker
    store: str  # the worker's store, which its scheduler audits twice a second


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedded]:
    """A producer app and a worker (with its scheduler) on the embedded broker under the
    same `.sabot` folder."""
    home = tmp_path_factory.mktemp("embedded-worker")
    store = f"sqlite:///{home}/sabot.db"
    TableService(url=store).close()
    producer = make_app("", home=home / ".sabot")
    worker = Worker(home, "--beat", "--audit-every", "0.5", "--database", store)
    yield Embedded(producer, worker, store)
    worker.stop()
    producer.close()


def at_the_punters_decision(service: TableService, name: str | None = None) -> uuid.UUID:
    """A chemin de fer table played by bots until a punter's hand has to decide."""
    name = name or f"deadline-{uuid.uuid4().hex[:8]}"
    settings = TableSettings.default(Variant.CHEMIN_DE_FER)
    table_id = service.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(3):
        service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{i}", player=f"p{i}",
                                               chips=1000))
    rng = random.Random(5)
    for n in range(1000):
        state = service.state(table_id)
        if state.coup is not None and state.coup.to_act() is Side.PUNTER:
            return table_id
        service.execute(table_id, next_command(state, rng,
                        lambda label, n=n: f"{name}:bot:{n}:{label}"))
    raise AssertionError("the bots never reached a punter's decision")


def decisions(service: TableService, table_id: uuid.UUID, coup: int, side: Side) -> list[Any]:
    return [e for e in service.events_of(table_id)
            if type(e).__name__ in DECISIONS and e.coup == coup and e.side == side]


# --- on Redis ---------------------------------------------------------------------------


@pytest.mark.redis
def test_a_deadline_plays_the_default_once(service: TableService, sqlite_store: str,
                                           on_redis: OnRedis) -> None:
    producer, worker, _ = on_redis
    table_id = at_the_punters_decision(service)
    state = service.state(table_id)
    coup = state.coup_number
    expected = default_draw(state, Side.PUNTER)

    sent = time.monotonic()
    task_id = schedule_deadline(table_id, state, seconds=COUNTDOWN, via=producer)
    assert task_id is not None
    [played] = worker.wait_for(logged("deadline.played", task_id))
    assert time.monotonic() - sent >= COUNTDOWN
    assert played["task_id"] == task_id
    assert played["command_id"] == deadline_command_id(table_id, coup, Side.PUNTER)
    worker.wait_for(succeeded(task_id))

    [decision] = decisions(service, table_id, coup, Side.PUNTER)
    assert decision.actor == ACTOR
    assert type(decision).__name__ == ("ThirdCardAsked" if expected else "HandStood")


@pytest.mark.redis
def test_a_player_deciding_in_time_is_not_overridden(
        service: TableService, sqlite_store: str, on_redis: OnRedis) -> None:
    producer, worker, _ = on_redis
    table_id = at_the_punters_decision(service)
    state = service.state(table_id)
    coup = state.coup_number
    holder = state.hand_holder(Side.PUNTER) or CROUPIER
    draw = default_draw(state, Side.PUNTER)

    task_id = schedule_deadline(table_id, state, seconds=COUNTDOWN, via=producer)
    assert task_id is not None
    service.execute(table_id, c.Decide(command_id="in-time", actor=holder, side=Side.PUNTER,
                                       draw=draw))
    worker.wait_for(succeeded(task_id))

    assert worker.wait_for(logged("deadline.decided-in-time", task_id))
    [decision] = decisions(service, table_id, coup, Side.PUNTER)
    assert decision.actor == holder
    assert service.recorded_command(deadline_command_id(table_id, coup, Side.PUNTER)) is None


@pytest.mark.redis
def test_a_deadline_delivered_twice_records_once(
        service: TableService, sqlite_store: str, on_redis: OnRedis) -> None:
    producer, worker, _ = on_redis
    table_id = at_the_punters_decision(service)
    state = service.state(table_id)
    coup = state.coup_number
    versions = service.table(table_id).version

    first = schedule_deadline(table_id, state, seconds=COUNTDOWN, via=producer)
    again = schedule_deadline(table_id, state, seconds=COUNTDOWN, via=producer)
    assert first is not None and again is not None and first != again
    worker.wait_for(succeeded(first))
    worker.wait_for(succeeded(again))

    assert len(decisions(service, table_id, coup, Side.PUNTER)) == 1
    recorded = service.recorded_command(deadline_command_id(table_id, coup, Side.PUNTER))
    assert recorded is not None
    assert (recorded.first_version, recorded.last_version) == (versions + 1, versions + 1)


@pytest.mark.redis
@pytest.mark.postgres
def test_a_deadline_whose_worker_dies_mid_way_is_delivered_again(postgres_url: str,
                                                                  tmp_path: Path) -> None:
    """The worker process running the task is killed while the store keeps it waiting:
    the message was not acknowledged, so it is delivered again and played once."""
    need_server("Redis", "127.0.0.1", 6379)
    queue = f"sabot-test-{uuid.uuid4().hex[:8]}"
    producer = make_app(REDIS_URL, home=tmp_path / ".sabot", queue=queue)
    worker = Worker(tmp_path, "--broker", REDIS_URL, "--queue", queue, "--database", postgres_url,
                    "--no-director")  # only the task waits on the locked store
    base, _, schema = postgres_url.partition("?schema=")
    try:
        with TableService(url=postgres_url, secret_key=SECRET) as service:
            service.seed_source = seeds_from(b"sabot-test-workers")
            table_id = at_the_punters_decision(service)
            state = service.state(table_id)
            with psycopg.connect(base) as blocker, psycopg.connect(base) as watcher:
                blocker.execute(f'LOCK TABLE "{schema}".stored_events IN ACCESS EXCLUSIVE MODE')
                task_id = schedule_deadline(table_id, state, seconds=0.1, via=producer)
                wait_until(lambda: watcher.execute(  # the task's own wait, no other test's
                    "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = %s::regclass",
                    (f'"{schema}".stored_events',)).fetchone() != (0,))
                for child in children(worker.process.pid):
                    os.kill(child, signal.SIGKILL)
                worker.wait_for(lambda line: "WorkerLostError" in line["event"]
                                or "exited with 'signal 9" in line["event"])
                blocker.rollback()  # the store answers again
            worker.wait_for(succeeded(str(task_id)))
            assert len(worker.wait_for(lambda line: line["event"].endswith(
                f"[{task_id}] received"), count=2)) == 2  # delivered again
            [decision] = decisions(service, table_id, state.coup_number, Side.PUNTER)
            assert decision.actor == ACTOR
    finally:
        worker.stop()
        with producer.connection_for_write() as connection:
            client = connection.default_channel.client
            client.delete(queue, *client.keys(f"_kombu.binding*.{queue}"))
        producer.close()


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return [int(child) for child in text.split()]


class Clocks(NamedTuple):
    """A `sabot worker` playing the clocks of a SQLite store (no director), the producer that
    sends them on its embedded broker, and the store's service."""

    producer: Celery
    worker: Worker
    service: TableService


def clocks_on_sqlite(tmp_path: Path) -> Clocks:
    store = f"sqlite:///{tmp_path}/sabot.db"
    TableService(url=store).close()  # the schema, before the worker opens the store
    producer = make_app("", home=tmp_path / ".sabot")
    worker = Worker(tmp_path, "--database", store, "--no-director")
    return Clocks(producer, worker, TableService(url=store, secret_key=SECRET))


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# --- on the embedded broker -------------------------------------------------------------


def test_the_embedded_broker_runs_a_deadline(service: TableService, sqlite_store: str,
                                             embedded: Embedded) -> None:
    producer, worker, _ = embedded
    table_id = at_the_punters_decision(service)
    state = service.state(table_id)

    task_id = schedule_deadline(table_id, state, seconds=COUNTDOWN, via=producer)
    assert task_id is not None
    worker.wait_for(succeeded(task_id))
    [decision] = decisions(service, table_id, state.coup_number, Side.PUNTER)
    assert decision.actor == ACTOR


class Cut:
    """A TCP relay to PostgreSQL that can be cut: the store goes away under a running worker."""

    def __init__(self, target: tuple[str, int] = ("127.0.0.1", 5432)) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = [self.listener]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                server = socket.create_connection(self.target)
                self.sockets += [client, server]
                for a, b in ((client, server), (server, client)):
                    threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        with suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)

    def cut(self) -> None:
        for sock in self.sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.mark.postgres
def test_an_unreachable_database_is_retried(postgres_url: str, tmp_path: Path) -> None:
    relay = Cut()
    url = postgres_url.replace("@127.0.0.1:5432/", f"@127.0.0.1:{relay.port}/")
    assert url != postgres_url
    producer = make_app("", home=tmp_path / ".sabot")
    worker = Worker(tmp_path, "--database", url + "&connect_timeout=1", "--no-director")
    try:
        relay.cut()  # the store is now unreachable
        result = producer.send_task("sabot.expire_decision",
                                    args=(str(uuid.uuid4()), 1, "punter"))
        [retry] = worker.wait_for(lambda line: line.get("task_id") == result.id
                                  and " retry: Retry in " in line["event"])
        assert "OperationalError" in retry["event"]
    finally:
        worker.stop()
        producer.close()


def test_the_scheduled_audit_logs_the_head_digest(embedded: Embedded) -> None:
    with TableService(url=embedded.store, secret_key=SECRET) as service:
        at_the_punters_decision(service, "audited")
        events = service.recorder.max_notification_id()
    head = verify(embedded.store).head_digest
    audit = embedded.worker.wait_for(
        lambda line: line["event"] == "audit.ok" and line["head_digest"] == head)[0]
    assert audit["events"] == events
    assert audit["task"] == "sabot.verify_store" and audit["task_id"]


# --- disputes ---------------------------------------------------------------------------


def past_the_first_taille(service: TableService, name: str | None = None) -> uuid.UUID:
    """A one-deck chemin de fer table played by bots until its first seed is revealed."""
    name = name or f"disputed-{uuid.uuid4().hex[:8]}"
    settings = TableSettings.default(Variant.CHEMIN_DE_FER, decks=1)
    table_id = service.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(4):
        service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{i}", player=f"p{i}",
                                               chips=1000))
    rng = random.Random(11)
    for n in range(3000):
        state = service.state(table_id)
        if state.taille >= 2:
            return table_id
        service.execute(table_id, next_command(state, rng,
                        lambda label, n=n: f"{name}:bot:{n}:{label}"))
    raise AssertionError("the bots never finished a taille")


def replayed_by_the_worker(embedded: Embedded, url: str, dispute_id: uuid.UUID) -> Dispute:
    task_id = request_replay(dispute_id, via=embedded.producer)
    [line] = embedded.worker.wait_for(logged("dispute.replayed", task_id))
    assert line["command_id"] == f"replay:{dispute_id}"
    with DisputeService(url=url) as disputes:
        return disputes.dispute(dispute_id)


def test_a_dispute_on_an_honest_coup_is_consistent(service: TableService, sqlite_store: str,
                                                   embedded: Embedded) -> None:
    table_id = past_the_first_taille(service)
    with DisputeService(url=sqlite_store) as disputes:
        dispute_id = disputes.open(table_id, 2, reason="the banker drew on 6", by="p1",
                                   command_id="dispute:p1:2")
        assert disputes.open(table_id, 2, reason="the banker drew on 6", by="p1",
                             command_id="dispute:p1:2") == dispute_id  # retried: the same
        assert disputes.dispute(dispute_id).verdict is Verdict.OPEN

    dispute = replayed_by_the_worker(embedded, sqlite_store, dispute_id)
    assert dispute.verdict is Verdict.CONSISTENT, dispute.discrepancies
    assert dispute.notes == ["cards recomputed from the seed of taille 1 (revealed)"]
    assert replayed_by_the_worker(embedded, sqlite_store, dispute_id).version == dispute.version


def test_a_payout_altered_in_the_database_is_named(service: TableService, sqlite_store: str,
                                                   embedded: Embedded) -> None:
    table_id = past_the_first_taille(service)
    [payout, *_] = [e for e in service.events_of(table_id)
                    if type(e).__name__ == "PayoutMade" and e.coup == 3]
    database = sqlite_store[len("sqlite:///"):]
    with sqlite3.connect(database) as connection:
        [(state,)] = connection.execute(
            "SELECT state FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            (table_id.hex, payout.originator_version)).fetchall()
        fields = msgspec.msgpack.decode(state)
        fields["payout"]["net"] += 1000
        connection.execute(
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (msgspec.msgpack.encode(fields), table_id.hex, payout.originator_version))
    assert verify(sqlite_store).first_break.originator_version == payout.originator_version

    with DisputeService(url=sqlite_store) as disputes:
        dispute_id = disputes.open(table_id, 3, reason="I was paid wrong", by=payout.payout.player,
                                   command_id="dispute:payout")
    dispute = replayed_by_the_worker(embedded, sqlite_store, dispute_id)

    owed = payout.payout
    altered = f"{owed.player} {owed.net + 1000:+d} on {owed.staked}"
    assert dispute.verdict is Verdict.DISCREPANCIES
    assert dispute.discrepancies == [Discrepancy(
        what="payout", where=f"{owed.player} (payout 1 of coup 3)",
        expected=f"{owed.player} {owed.net:+d} on {owed.staked}", recorded=altered)]
    with sqlite3.connect(database) as connection:  # the worker's store is shared: mend it
        connection.execute(
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (state, table_id.hex, payout.originator_version))
    assert verify(sqlite_store).ok


def test_sabot_dispute_open_and_show(service: TableService, sqlite_store: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    past_the_first_taille(service, "cli")
    assert cli(["dispute", "open", "cli", "1", "--reason", "check it", "--here",
                "--database", sqlite_store]) == 0
    dispute_id = capsys.readouterr().out.splitlines()[0]
    assert cli(["dispute", "show", dispute_id, "--json", "--database", sqlite_store]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["coup"], shown["by"], shown["verdict"]) == (1, "@auditor", "consistent")
    events = len(service.events_of(Table.create_id("cli")))
    assert cli(["dispute", "open", "cli", "99", "--reason", "?", "--here",
                "--database", sqlite_store]) == 1  # coup 99 never happened: nothing recorded
    refusal = capsys.readouterr().err
    assert refusal.count("\n") == 1 and "[unknown-coup]" in refusal
    assert len(service.events_of(Table.create_id("cli"))) == events
    with DisputeService(url=sqlite_store) as disputes:
        assert len(disputes.ids()) == 1


# --- connections ------------------------------------------------------------------------


def postgres_connections(pid: int) -> int:
    """The TCP connections process `pid` holds to PostgreSQL (port 5432)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:["):-1])
    rows = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]]
    return sum(1 for row in rows if int(row[2].split(":")[1], 16) == 5432 and row[9] in inodes)


NOTICE_CONNECTIONS = 3  # a LISTEN, and a NOTIFY sender for commits and one for views


@pytest.mark.postgres
def test_a_worker_holds_one_bounded_pool_per_store(postgres_url: str, tmp_path: Path) -> None:
    """Four threads play four deadlines on `--db-pool 1`: the worker holds two pools, its
    store's (vault check, heartbeat) and its one table service's (every table, every thread),
    each of 1 connection plus 1 on overflow: at most 4 connections, not one pool per thread;
    beside them, the database's notices (`infra.store.notices`) hold one listening connection
    and at most one sending connection for each of the two positions published (the store's
    commits and the views'), outside any pool: 7 at most."""
    producer = make_app("", home=tmp_path / ".sabot")
    worker = Worker(tmp_path, "--database", postgres_url, "--no-director", "--pool", "threads",
                    "--concurrency", "4", "--db-pool", "1")
    try:
        with TableService(url=postgres_url, secret_key=SECRET) as service:
            service.seed_source = seeds_from(b"sabot-test-workers")
            tables = [at_the_punters_decision(service) for _ in range(4)]
            states = [service.state(table_id) for table_id in tables]
            sent = [schedule_deadline(table_id, state, seconds=0.1, via=producer)
                    for table_id, state in zip(tables, states, strict=True)]
            for task_id in sent:
                worker.wait_for(succeeded(str(task_id)))
            for table_id, state in zip(tables, states, strict=True):
                [decision] = decisions(service, table_id, state.coup_number, Side.PUNTER)
                assert decision.actor == ACTOR
        assert 1 <= postgres_connections(worker.process.pid) <= 4 + NOTICE_CONNECTIONS
    finally:
        worker.stop()
        producer.close()
