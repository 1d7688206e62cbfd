"""A fault test of the whole production topology: a tournament played by bots survives every
role being killed outright in turn (an API replica, a worker, the director, the scheduler),
PostgreSQL being stopped and Redis being restarted, and ends as an undisturbed run with the
same seed.

The compose services (`compose.yaml`) run as processes, with the compose commands, on a
PRIVATE PostgreSQL cluster (initdb into a temporary folder, its own port) and a PRIVATE Redis
(persisted as in compose: `--appendonly yes`), since the test stops and restarts them: the
machine's shared servers are never touched. The organiser creates, fills and starts the
tournament through the API; during play the organiser pauses it through a replica that is
killed as the request leaves and sends the pause again, same Idempotency-Key, to the other
replica. Then: the results (positions, prizes, winner), the tournament's decisions and every
table's events (with their command ids) equal those of the same tournament played by one
director on an embedded store; no command id was applied twice; once every process is stopped
at once (SIGTERM), `sabot audit verify` passes with no checkpoint asked for.

`SABOT_FAULT_CYCLES=N` makes a soak: the faults N times over, in an N times longer tournament
(30 to 95 s for one cycle on the 2-core machine, by its load; 75 s for two).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from api.idempotency import STALE_SECONDS
from api.tokens import Grant, Role, TokenStore
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.services.tables import TableService
from infra.services.tournaments import Director, Tournaments
from tests.client import CLIENT
from tests.conftest import IN_CI
from tests.e2e.test_deploy import KEY, ROOT, compose_commands, free_port, mounts, sabot_services
from tests.integration.test_tournament_run import SETTINGS

PG_BIN = Path("/usr/lib/postgresql/15/bin")
CYCLES = int(os.environ.get("SABOT_FAULT_CYCLES", "1"))  # rounds of faults (a soak: more)
# coups a round: a cycle of faults lasted up to 1,600 events when directors played a coup a
# transaction; in runs they play several times faster, and 40 coups a round (about 3,300 events)
# finished before the last fault of a CI run: 120 make about 10,000
COUPS = 120 * CYCLES
FORMAT = msgspec.structs.replace(SETTINGS, coups_per_round=COUPS)
PLAYERS = 14
SEED = "fa017ed5"
AUDIT_EVERY = 4  # seconds: the scheduler and the workers have work during the faults
FINISH = 240.0  # seconds the tournament may take once the faults are over
CLOCK = (Tournament.DirectorAppointed, Tournament.TournamentPaused, Tournament.TournamentResumed)


def need(path: str) -> None:
    if shutil.which(path) is None:
        message = f"{path} is not installed; this test starts its own server"
        if IN_CI:
            pytest.fail(f"{message}, and CI=true forbids skipping")
        pytest.skip(message)


class PrivatePostgres:
    """A PostgreSQL cluster of the test's own, as the `postgres` user when run as root."""

    def __init__(self, folder: Path) -> None:
        need(str(PG_BIN / "initdb"))
        self.folder, self.port = folder, free_port()
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(folder, "postgres")
        subprocess.run([*self.as_user, str(PG_BIN / "initdb"), "-D", str(folder / "data"),
                        "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run([*self.as_user, str(PG_BIN / "pg_ctl"), "-D", str(self.folder / "data"),
                        "-w", *args], check=True, capture_output=True)

    def start(self) -> None:
        self.pg_ctl("-l", str(self.folder / "postgres.log"), "-o",
                    f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1", "start")

    def stop(self, mode: str = "fast") -> None:
        self.pg_ctl("-m", mode, "stop")


class PrivateRedis:
    """A Redis of the test's own, persisted to its folder as compose's is."""

    def __init__(self, folder: Path) -> None:
        need("redis-server")
        need("redis-cli")
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--dir", str(self.folder), "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        until("the private Redis", lambda: subprocess.run(
            ["redis-cli", "-p", str(self.port), "ping"], capture_output=True,
        ).stdout.strip() == b"PONG", 10)

    def stop(self) -> None:
        assert self.process is not None
        self.process.terminate()  # SIGTERM: Redis writes its append-only file and exits
        self.process.wait(timeout=20)


class Topology:
    """The compose services as processes; `workers` (two replicas) as workers-1, workers-2."""

    def __init__(self, database: str, broker: str, folder: Path) -> None:
        self.folder = folder
        self.ports = [free_port(), free_port()]
        self.urls = [f"http://127.0.0.1:{p}" for p in self.ports]
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_DATABASE_URL": database,
                    "SABOT_BROKER_URL": broker, "SABOT_SECRET_KEY": KEY,
                    "SABOT_LOG_JSON": "true"}
        self.queue = f"faults-{uuid.uuid4().hex[:8]}"
        commands = compose_commands(self.queue, self.ports)
        workers = commands.pop("workers")
        beat = commands["beat"]  # the scheduled audit every few seconds instead of hourly
        beat[beat.index("--audit-every") + 1] = str(AUDIT_EVERY)
        self.commands = {**commands, "workers-1": workers, "workers-2": workers}
        services = sabot_services()
        for role in self.commands:  # a working directory each, with compose's volumes in it
            self.home(role, services[role.removesuffix("-1").removesuffix("-2")]
                      if role.startswith("workers") else services[role])
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.last: dict[str, Any] = {}  # each replica's last answer to /ready
        self.exits: list[tuple[str, int]] = []  # processes that exited by themselves
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def home(self, role: str, service: dict[str, Any]) -> Path:
        """The role's working directory, as its container's: the named volumes it mounts
        there are folders shared with the other roles that mount them."""
        home = self.folder / role
        home.mkdir(exist_ok=True)
        for path, volume in mounts(service).items():
            (self.folder / "volumes" / volume).mkdir(parents=True, exist_ok=True)
            if not (home / path).exists():
                (home / path).symlink_to(self.folder / "volumes" / volume)
        return home

    def start(self, role: str) -> None:
        with (self.folder / f"{role}.log").open("a") as log:  # the process keeps its own copy
            self.processes[role] = subprocess.Popen(
                [sys.executable, "-m", "api.cli", *self.commands[role]], cwd=self.folder / role,
                env=self.env, stdout=subprocess.DEVNULL, stderr=log)

    def supervise(self, stop: threading.Event) -> None:
        """Compose's `restart: unless-stopped`: a process that exits is started again (one
        started while PostgreSQL recovers refuses to start, exit 2, as it should)."""
        while not stop.wait(0.5):
            with self.lock:
                for role, process in list(self.processes.items()):
                    if process.poll() is not None and not stop.is_set():
                        self.exits.append((role, process.returncode))
                        self.start(role)

    def kill(self, role: str) -> None:
        """kill -9 the role's process, and start it again."""
        with self.lock:
            process = self.processes[role]
            assert process.poll() is None, f"{role} had already exited: {self.log(role)}"
            process.send_signal(signal.SIGKILL)
            process.wait()
            self.start(role)

    def log(self, role: str) -> str:
        return (self.folder / f"{role}.log").read_text()[-3000:]

    def logged(self, event: str) -> int:
        """How many log lines of every process name `event`."""
        return sum(log.read_text().count(f'"event": "{event}"')
                   for log in self.folder.glob("*.log"))

    def orphans(self) -> list[int]:
        """This topology's processes left behind by a parent that died (adopted by init)."""
        found = []
        for proc in Path("/proc").iterdir():
            try:
                command = (proc / "cmdline").read_bytes()
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == 1 and self.queue.encode() in command:
                found.append(int(proc.name))
        return found

    def stop(self) -> None:
        with self.lock:
            self.stopping.set()
        for pid in self.orphans():
            os.kill(pid, signal.SIGKILL)
        for process in self.processes.values():
            process.terminate()
        deadline = time.monotonic() + 20  # one grace for all, not 20 s each in turn
        for process in self.processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def ready(self, url: str) -> bool:
        """The replica answers, sees the store and the broker, and every worker alive."""
        try:
            answer = self.last[url] = CLIENT.get(f"{url}/ready", timeout=3).json()
        except (httpx.TransportError, ValueError) as error:
            self.last[url] = repr(error)
            return False
        alive = answer.get("workers", {}).get("alive", 0)
        return bool(answer.get("status") == "ready" and alive >= len(self.commands) - 2)


def until(what: str, condition: Callable[[], bool], seconds: float = 60.0,
          seen: Callable[[], object] = str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds:.0f} s for {what}: {seen()}"
        time.sleep(0.2)


@pytest.fixture
def private_servers() -> Iterator[tuple[PrivatePostgres, PrivateRedis]]:
    folder = Path(tempfile.mkdtemp(prefix="sabot-faults-"))
    os.chmod(folder, 0o755)
    (folder / "pg").mkdir()
    (folder / "redis").mkdir()
    postgres, redis = PrivatePostgres(folder / "pg"), PrivateRedis(folder / "redis")
    postgres.start()
    redis.start()
    try:
        yield postgres, redis
    finally:
        redis.stop()
        postgres.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def topology(private_servers: tuple[PrivatePostgres, PrivateRedis],
             tmp_path: Path) -> Iterator[Topology]:
    postgres, redis = private_servers
    running = Topology(postgres.url, redis.url, tmp_path)
    for role in running.commands:
        running.start(role)
    threading.Thread(target=running.supervise, args=(running.stopping,), daemon=True).start()
    try:
        until("both replicas ready with every worker alive",
              lambda: all(running.ready(url) for url in running.urls), 90,
              seen=lambda: running.last)
        yield running
    finally:
        running.stop()


class Organiser:
    """The organiser's HTTP client, sending each command to a replica that answers."""

    def __init__(self, topology: Topology, token: str) -> None:
        self.topology = topology
        self.headers = {"Authorization": f"Bearer {token}"}

    def send(self, method: str, path: str, key: str, replica: int = 0,
             json: Any = None) -> httpx.Response:
        """The command at `replica`, else at the other one, same Idempotency-Key each time;
        a key still claimed by a request its replica died under is retried until the claim
        goes stale (`api.idempotency.STALE_SECONDS`)."""
        deadline = time.monotonic() + STALE_SECONDS + 30
        while True:
            url = self.topology.urls[replica % 2]
            try:
                answer = CLIENT.request(method, f"{url}{path}", json=json, timeout=15,
                                        headers={**self.headers, "Idempotency-Key": key})
                claimed = answer.status_code == 409 and "idempotency-key-in-use" in answer.text
                if answer.status_code < 500 and not claimed:
                    return answer
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"no replica took {method} {path}"
            replica += 1
            time.sleep(0.2)


def stream_events(service: TableService, tournament_id: uuid.UUID) -> dict[uuid.UUID, list[Any]]:
    """The events of the tournament and of each of its tables."""
    state = Tournaments(service).state(tournament_id)
    streams = {tournament_id: list(service.events_of(tournament_id))}
    for number in range(1, state.tables_opened + 1):
        table_id = Table.create_id(state.table_name(number))
        streams[table_id] = list(service.events_of(table_id))
    return streams


def record(service: TableService, tournament_id: uuid.UUID) -> dict[str, Any]:
    """What must not depend on faults: results, decisions (the clock's aside), the tables'
    events with their command ids."""
    streams = stream_events(service, tournament_id)
    return {"results": Tournaments(service).state(tournament_id).results(),
            "decisions": [(type(e).__name__, e.command_id) for e in streams.pop(tournament_id)
                          if not isinstance(e, CLOCK)],
            "tables": [[(type(e).__name__, e.command_id) for e in events]
                       for events in streams.values()]}


def undisturbed(database: str, played: TableService, tournament_id: uuid.UUID) -> dict[str, Any]:
    """The same tournament (the commands the organiser's API calls recorded, the same seed),
    directed by one director on an embedded store with nothing killed."""
    opening = [e for e in played.events_of(tournament_id)
               if isinstance(e, Tournament.PlayerRegistered | Tournament.SeatingDrawn)]
    created = next(iter(played.events_of(tournament_id)))
    with TableService(url=database) as service:
        tournaments = Tournaments(service)
        alone = tournaments.create(created.name, FORMAT, seed=bytes.fromhex(SEED),
                                   command_id=created.command_id)
        for event in opening:
            if isinstance(event, Tournament.PlayerRegistered):
                tournaments.register(alone, event.player, bot=event.bot,
                                     command_id=event.command_id)
            else:
                tournaments.start(alone, command_id=event.command_id)
        Director(service).run(alone)
        return record(service, alone)


def test_a_tournament_survives_every_role_killed_and_both_servers_restarted(
        private_servers: tuple[PrivatePostgres, PrivateRedis], topology: Topology,
        sqlite_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # the auditor sees the checkpoints where the director's container keeps them
    monkeypatch.chdir(topology.home("auditor", sabot_services()["director"]))
    postgres, redis = private_servers
    with TableService(url=postgres.url, secret_key=bytes.fromhex(KEY)) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
    organiser = Organiser(topology, token)
    created = organiser.send("POST", "/tournaments", "create", json={
        "name": "faults", "format": msgspec.to_builtins(FORMAT), "seed": SEED})
    assert created.status_code == 201, created.text
    path = f"/tournaments/{created.json()['id']}"
    tournament_id = uuid.UUID(created.json()["id"])
    for n in range(PLAYERS):
        registered = organiser.send("POST", f"{path}/players", f"reg-{n}", replica=n,
                                    json={"player": f"p{n:02d}", "bot": True})
        assert registered.status_code == 201, registered.text
    started = organiser.send("POST", f"{path}/start", "start")
    assert started.status_code == 200, started.text

    service = TableService(url=postgres.url)
    faults: list[str] = []
    began = time.monotonic()

    def events() -> int:
        try:
            return sum(len(e) for e in stream_events(service, tournament_id).values())
        except Exception:  # the store restarting
            return -1

    def played_on(what: str) -> None:
        """Wait until the tournament has moved on since the last fault: every fault must land
        before the finish."""
        before = events()

        def status() -> str:
            return str(organiser.send("GET", path, "-").json()["status"])

        until(f"play before {what}", lambda: events() >= before + 40 or status() == "finished",
              120)
        assert status() != "finished", f"the tournament finished before {what}: lengthen it"
        faults.append(what)
        print(f"{time.monotonic() - began:6.1f} s  {what} ({events()} events)")

    def killed(role: str) -> None:
        played_on(f"kill -9 {role}")
        topology.kill(role)

    def faults_once(cycle: int) -> None:
        # the organiser's pause leaves for api-1, which dies under it; sent again to api-2
        played_on("kill -9 api-1 during a pause")
        pause = f"pause-{cycle}"
        pausing = threading.Thread(target=organiser.send, args=("POST", f"{path}/pause", pause))
        pausing.start()
        time.sleep(0.05)
        topology.kill("api-1")
        pausing.join()
        paused = organiser.send("POST", f"{path}/pause", pause, replica=1)
        assert paused.status_code == 200 and paused.json()["status"] == "paused", paused.text
        resumed = organiser.send("POST", f"{path}/resume", f"resume-{cycle}", replica=1)
        assert resumed.status_code == 200, resumed.text
        for role in ("workers-1", "director", "beat", "api-2"):
            killed(role)
        played_on("PostgreSQL stopped")
        postgres.stop("immediate")  # as a crash: recovery replays its write-ahead log
        time.sleep(2)
        postgres.start()
        played_on("Redis restarted")
        redis.stop()
        time.sleep(1)
        redis.start()
        audits.append(topology.logged("audit.ok"))

    audits: list[int] = []  # the audits logged when Redis came back
    for cycle in range(CYCLES):
        faults_once(cycle)
    until("the tournament's end",
          lambda: organiser.send("GET", path, "-").json()["status"] == "finished", FINISH)
    until("both replicas ready again", lambda: all(topology.ready(u) for u in topology.urls),
          seen=lambda: topology.last)
    # the scheduler, Redis and the workers work again
    until("a scheduled audit after Redis restarted",
          lambda: topology.logged("audit.ok") > audits[-1])
    print(f"{time.monotonic() - began:6.1f} s  finished; exits: {topology.exits}, "
          f"{topology.logged('audit.ok')} audits")
    assert topology.logged("audit.broken") == 0
    until("no process outliving its killed parent (the scheduler's child, once)",
          lambda: not topology.orphans(), 15, seen=topology.orphans)
    assert len(faults) == 7 * CYCLES, faults
    # a process only ever exited as a service's failure (exit 2, one line): refusing to start
    # while PostgreSQL or Redis was down, or celery giving up on a lost Redis connection; never
    # 0, which a supervisor restarting on failure only would take for a clean stop
    assert all(code == 2 for _, code in topology.exits), (
        topology.exits, [topology.log(role) for role, _ in topology.exits])

    expected = undisturbed(sqlite_url, service, tournament_id)
    settled = time.monotonic() + 30  # the director closes every table after the finish
    while (got := record(service, tournament_id)) != expected and time.monotonic() < settled:
        time.sleep(0.5)
    assert got["results"] == expected["results"]
    assert got["decisions"] == expected["decisions"]
    assert len(got["tables"]) == len(expected["tables"])
    for number, (mine, theirs) in enumerate(zip(got["tables"], expected["tables"],
                                                strict=True), 1):
        first = next((n for n, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
                     min(len(mine), len(theirs)))
        assert mine == theirs, (f"table {number}, event {first}", mine[first - 2:first + 3],
                                theirs[first - 2:first + 3])
    for url in topology.urls:  # each replica serves them
        results = CLIENT.get(f"{url}{path}/results", timeout=10).json()
        assert results["winner"] == expected["results"][0].player
        assert [(p["player"], p["position"], p["prize"]) for p in results["positions"]] == [
            (r.player, r.position, r.prize) for r in expected["results"]]

    pauses = [e for e in service.events_of(tournament_id)
              if isinstance(e, Tournament.TournamentPaused)]
    assert len(pauses) == CYCLES, pauses  # each pause sent twice was recorded once
    applied: dict[str, tuple[uuid.UUID, list[int]]] = {}
    for stream, stream_events_ in stream_events(service, tournament_id).items():
        for event in stream_events_:
            owner, versions = applied.setdefault(event.command_id, (stream, []))
            assert owner == stream, f"{event.command_id} applied to two streams"
            versions.append(event.originator_version)
    for command_id, (_, versions) in applied.items():  # one command, one run of versions
        assert versions == list(range(versions[0], versions[0] + len(versions))), command_id
    service.close()
    # every process of the installation stopped at once (SIGTERM), with no checkpoint asked
    # for: each writer anchors its tail at its exit (the lease's holder, or any writer whose
    # writes no checkpoint covers yet), so that verify finds it all anchored: exit 0 (issue 36)
    topology.stop()
    verified = subprocess.run([sys.executable, "-m", "api.cli", "audit", "verify",
                               "--database", postgres.url], capture_output=True,
                              text=True, env=topology.env, timeout=300)
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
