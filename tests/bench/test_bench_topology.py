"""Load benchmark of the whole installation (issue 30): PostgreSQL and Redis, two `sabot serve
--no-worker` replicas and the `sabot worker`s that direct the tournaments and keep the views
caught up, all as processes; N bot tournaments (house bots, 2 tables each, created, filled and
started over HTTP as an organiser does) directed by the workers, while human-paced players
play punto banco tables over HTTP on both replicas at once (each bet with the player's own
token, the croupier's steps with the organiser's), SSE subscribers (a process of their own,
`tests.bench.topology_streams`) follow those tables, and
pollers read the views (`/tables`, recall, standings). The capacity run (`cap`) is the same
installation unpaced: its people's tables are played by closed-loop clients (no think time, a
table each), added in steps until commands/s stops growing (`tests.bench.topology_windows`);
its figures are its best step's, with each replica's commands/s and commands a CPU second.

It prints one table, a row a run: commands/s, coups/s, events/s, POST and GET p50/p95/p99,
a read of a command's own write on the other replica (`?at=`, every `READ_OWN_WRITE`th
command of a human table), CPU milliseconds a command and a coup of the whole installation
(every process and PostgreSQL's backends, from /proc) and of the replicas a command of theirs,
each beside raw psycopg's CPU (client and backend) a transaction,
push p50/p95, 5xx and 409 counts, CPU seconds and RSS (after warm-up, at the end) of each
process, PostgreSQL's backends' CPU an event, the replicas' own p95 of a command (from their
`sabot_command_seconds` histograms: what a POST's time is without the queueing for a core
around it), the client's own loop lag, and raw psycopg's rate for the same
transactions (as many rows a transaction as the installation's events a command, on as many
connections as it held) measured in the same run, after the installation stopped. The
issue's goals are reported as rows of `make bench`'s table, never asserted; what is asserted
is that nothing failed: no 5xx, and every command answered as applied in the command log.

Bounded: every request has a timeout, every child dies at its bound with its process group
(`tests.bench.topology.spawn`), the test has a timeout, and the databases of a killed run
are dropped at the next start.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import msgspec
import pytest
from prometheus_client.parser import text_string_to_metric_families

from api.tokens import Grant, Role, TokenStore
from domain.bots import next_command
from infra.services.tables import TableService
from infra.store.database import Database
from infra.store.signing import create_key
from tests.bench.harness import QUICK, Results, at_least, at_most, format_table, sized
from tests.bench.pg_profile import scan_deltas
from tests.bench.sse_subscribers import loop_lags
from tests.bench.topology import (
    OWN,
    Child,
    drop_leftovers,
    fresh_database,
    missing,
    raw_rate,
    server_cpu,
    server_cpu_by_application,
    spawn,
    wait_ready,
)
from tests.bench.topology_clients import Load, get, percentile, send
from tests.bench.topology_streams import Streams, delays
from tests.bench.topology_windows import (
    SETTLE,
    STEP_SECONDS,
    STEPS,
    Meter,
    Step,
    best,
    measure,
    saturate,
)
from tests.conftest import REDIS_URL, need_server
from tests.e2e.test_api import KEY, free_port
from tests.integration.test_checkpoint_lease import holder

BROKER = REDIS_URL.rsplit("/", 1)[0] + "/13"  # a Redis database of the benchmark's own
SECONDS = int(os.environ.get("SABOT_BENCH_TOPOLOGY_SECONDS") or sized(30, 4))
# the measured window of a paced run (600: the 10-minute soak of the processes' RSS)
WARM_UP = sized(30, 2)  # sampled over 2 minutes, the processes' RSS settles 20-30 s in
HUMAN_TABLES = sized(4, 2)
PLAYERS = 3  # a human table's players
THINK = 0.3  # seconds a human waits between two moves
SUBSCRIBERS = sized(1000, 50)  # a run's SSE subscribers, unless its spec says (`16x2/200`)
FEW_SUBSCRIBERS = 200  # the issue's condition for the GET and POST latency goals
POLLERS = sized(20, 4)
RAW_SECONDS = sized(8, 2)
KEEP_ALIVE = 3.0  # seconds a client keeps an idle connection (uvicorn closes it at 5)
BOUND = 900 + SECONDS  # seconds any child may live
RUNS = os.environ.get("SABOT_BENCH_TOPOLOGY_RUNS",
                      "1x2,cap" if QUICK else "1x2,4x2,16x2,16x2/200,16x1,16x4,cap")
# tournaments x processes directing them (at 16 tournaments the directors 1 vs 4), with
# `/subscribers` when not `SUBSCRIBERS`, or `cap`: the capacity run, `CAPACITY_TOURNAMENTS`
# tournaments and 2 directors
CAPACITY_TOURNAMENTS = sized(4, 1)
FORMAT = {"variant": "punto-banco", "seats_per_table": 8, "starting_chips": 100_000,
          "min_stake": 1, "max_stake": 10, "coups_per_round": 100_000,
          "stages": [{"name": "final", "rounds": 1}]}
CHECKPOINT_SECONDS = sized(10, 2)  # the default; the quick run is over before 10 s
READ_OWN_WRITE = 5  # a human table's every 5th command is read back on the other replica
TOPOLOGY_JSON = Path(".sabot/bench-topology.json")


async def setup_tournaments(client: httpx.AsyncClient, load: Load, replicas: list[str],
                            organiser: str, count: int) -> list[str]:
    async def one(number: int) -> str:
        name, url = f"cup-{number}", replicas[number % 2]
        created = await send(client, load, f"{url}/tournaments", organiser,
                             {"name": name, "format": FORMAT})
        assert created.status_code == 201, created.text
        for bot in range(16):
            seated = await send(client, load, f"{replicas[bot % 2]}/tournaments/{name}/players",
                                organiser, {"player": f"house-{bot}", "bot": True})
            assert seated.status_code < 300, seated.text
        started = await send(client, load, f"{url}/tournaments/{name}/start", organiser, {})
        assert started.status_code < 300, started.text
        return name

    return list(await asyncio.gather(*(one(n) for n in range(count))))


async def setup_tables(client: httpx.AsyncClient, load: Load, replicas: list[str],
                       organiser: str, names: list[str]) -> dict[str, uuid.UUID]:
    async def one(number: int, name: str) -> uuid.UUID:
        opened = await send(client, load, f"{replicas[number % 2]}/tables", organiser,
                            {"name": name, "variant": "punto-banco"})
        assert opened.status_code == 201, opened.text
        for seat in range(PLAYERS):
            seated = await send(client, load, f"{replicas[seat % 2]}/tables/{name}/commands",
                                organiser, {"kind": "seat", "player": f"{name}-p{seat}",
                                            "chips": 100_000})
            assert seated.status_code == 200, seated.text
        return uuid.UUID(opened.json()["table_id"])

    ids = await asyncio.gather(*(one(number, name) for number, name in enumerate(names)))
    return dict(zip(names, ids, strict=True))


async def human_table(client: httpx.AsyncClient, load: Load, replicas: list[str],
                      service: TableService, name: str, table_id: uuid.UUID,
                      tokens: dict[str, str], think: float, stop: asyncio.Event) -> None:
    """People at a table: each move read from the table's state, sent to either replica by
    whoever makes it (a bet by its player, a step by the organiser), a pause about `think`
    seconds between (none: a closed-loop client of the capacity run)."""
    rng = random.Random(name)
    answered = load.answered.setdefault(name, [])
    step = 0
    while not stop.is_set():
        state = await asyncio.to_thread(service.state, table_id)
        command = next_command(state, rng, lambda label: label)
        body = msgspec.to_builtins(command)
        body.pop("actor", None)
        token = tokens.get(str(body.get("player")), tokens["@organiser"])
        answer = await send(client, load, f"{replicas[step % 2]}/tables/{name}/commands",
                            token, body)
        if answer.status_code == 200:
            answered.append((answer.json()["version"], time.time()))
            if load.measuring:
                load.sample.by_replica[replicas[step % 2]] += 1
            if load.measuring and step % READ_OWN_WRITE == 0:
                await read_own_write(client, load, f"{replicas[(step + 1) % 2]}/tables/{name}"
                                     f"/rotation?at={answer.json()['position']}")
        step += 1
        if think:
            await asyncio.sleep(think * rng.uniform(0.5, 1.5))


async def read_own_write(client: httpx.AsyncClient, load: Load, url: str) -> None:
    """A command's own write read on the other replica (`?at=` its position): how long the
    read waited for the views, woken by the database (`infra.store.notices`)."""
    started = time.perf_counter()
    answer = await get(client, load, url)
    load.note(started, answer, load.at_waits, f"GET {url}")


async def poller(client: httpx.AsyncClient, load: Load, replicas: list[str],
                 paths: list[str], number: int, stop: asyncio.Event) -> None:
    rng = random.Random(number)
    while not stop.is_set():
        url = f"{replicas[rng.randrange(2)]}{rng.choice(paths)}"
        started = time.perf_counter()
        try:
            answer = await get(client, load, url)
        except httpx.TransportError as error:
            load.failures.append(f"GET {url}: {error!r}")
            return
        load.note(started, answer, load.get, f"GET {url}")
        await asyncio.sleep(rng.uniform(0.1, 0.3))


async def handled(client: httpx.AsyncClient, replicas: list[str]) -> dict[float, float]:
    """The replicas' commands so far by the upper bound of their time-to-answer bucket (s),
    all kinds together, from their own histograms (`sabot_command_seconds`)."""
    buckets: dict[float, float] = {}
    for replica in replicas:
        text = (await client.get(f"{replica}/metrics", timeout=30)).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "sabot_command_seconds_bucket":
                    bound = float(sample.labels["le"])
                    buckets[bound] = buckets.get(bound, 0.0) + sample.value
    return buckets


async def view_waits(client: httpx.AsyncClient, replicas: list[str]) -> dict[str, float]:
    """The replicas' looks of `?at=` reads so far, by what ended them (`notice`: woken by the
    views' runner through the database; `look`: the fallback look timed out)."""
    waits: dict[str, float] = {}
    for replica in replicas:
        text = (await client.get(f"{replica}/metrics", timeout=30)).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == "sabot_view_waits_total":
                    by = sample.labels["by"]
                    waits[by] = waits.get(by, 0.0) + sample.value
    return waits


def subtract(after: dict[float, float], before: dict[float, float]) -> dict[float, float]:
    return {bound: count - before.get(bound, 0.0) for bound, count in after.items()}


def bucket_percentile(buckets: dict[float, float], q: int) -> float:
    """The bound (ms) of the bucket holding the `q`th percentile of cumulative `buckets`."""
    total = buckets.get(math.inf, 0.0)
    for bound in sorted(buckets):
        if total and buckets[bound] >= total * q / 100:
            return bound * 1000
    return 0.0


async def play(replicas: list[str], service: TableService, tokens: dict[str, str],
               run: Run, meter: Meter) -> tuple[Load, list[Step]]:
    """Set the tournaments and tables up, then load the installation: a window of paced
    load, or the capacity run's steps of closed-loop clients."""
    load = Load()
    # idle connections let go before uvicorn's 5 s keep-alive closes them under a request
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None,
                          keepalive_expiry=KEEP_ALIVE)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        cups = await setup_tournaments(client, load, replicas, tokens["@organiser"],
                                       run.tournaments)
        tables = await setup_tables(client, load, replicas, tokens["@organiser"], run.tables)
        paths = ["/tables", *(f"/tables/{t}/recall" for t in tables),
                 *(f"/tournaments/{c}/standings" for c in cups)]
        stop = asyncio.Event()
        tasks = [asyncio.create_task(poller(client, load, replicas, paths, n, stop))
                 for n in range(POLLERS)]
        tasks.append(asyncio.create_task(loop_lags(  # a request's time as measured includes it
            lambda: load.measuring, stop.is_set, load.loop_lags)))
        players: list[asyncio.Task[None]] = []

        def add_players(count: int) -> None:
            for name in run.tables[len(players):count]:
                players.append(asyncio.create_task(human_table(
                    client, load, replicas, service, name, tables[name], tokens,
                    0.0 if run.capacity else THINK, stop)))

        add_players(STEPS[0] if run.capacity else len(run.tables))
        streams = Streams([(replicas[n % 2], run.tables[n % len(run.tables)])
                           for n in range(run.subscribers)])
        try:
            await asyncio.to_thread(streams.wait_open, 60)
            await asyncio.sleep(WARM_UP)
            before = await handled(client, replicas)
            streams.window(True)
            steps = (await saturate(add_players, meter, load) if run.capacity
                     else [await measure(len(run.tables), meter, load, SECONDS)])
            streams.window(False)
            load.handled = subtract(await handled(client, replicas), before)
            load.view_waits = await view_waits(client, replicas)
            meter.finish()
        finally:
            stop.set()
            received, failed, load.client_lag = await asyncio.to_thread(streams.close)
        for task in tasks + players:
            await asyncio.wait_for(task, timeout=60)
    load.failures += failed
    load.push = delays(received, load.answered)
    return load, steps


@dataclass
class Run:
    """One run's figures, a row of the printed table."""

    tournaments: int
    directors: int
    subscribers: int = SUBSCRIBERS
    capacity: bool = False
    figures: dict[str, float | str] = field(default_factory=dict)
    profile: list[str] = field(default_factory=list)  # where PostgreSQL's time went

    @property
    def label(self) -> str:
        return (f"{'cap ' if self.capacity else ''}N={self.tournaments} D={self.directors}"
                f" S={self.subscribers}")

    @property
    def tables(self) -> list[str]:
        """Its people's tables: the paced players', or one a closed-loop client."""
        return [f"human-{n}" for n in range(max(STEPS) if self.capacity else HUMAN_TABLES)]

    @property
    def seconds(self) -> float:
        """How long its load lasts after the warm-up, at most."""
        return len(STEPS) * (STEP_SECONDS + SETTLE) if self.capacity else SECONDS


def runs_of(spec: str) -> list[Run]:
    """`1x2,16x2/200,cap`: the runs, in order."""
    def run_of(text: str) -> Run:
        if text == "cap":
            return Run(CAPACITY_TOURNAMENTS, 2, capacity=True)
        shape, _, subscribers = text.partition("/")
        tournaments, directors = (int(n) for n in shape.split("x"))
        return Run(tournaments, directors, int(subscribers or SUBSCRIBERS))

    return [run_of(text) for text in spec.split(",")]


def start(database: str, home: Path, directors: int) -> list[Child]:
    """The replicas (the first creates the schema), then two workers or more: `directors` of
    them direct the tournaments, and two keep the views caught up."""
    home.mkdir(parents=True)
    create_key(home / "signing.key")  # one writer's key, as an installation shares
    environ = {"SABOT_BROKER_URL": BROKER, "SABOT_LIVE_PER_ADDRESS": str(SUBSCRIBERS + 10),
               "SABOT_LIVE_TOTAL": str(SUBSCRIBERS + 10),
               "SABOT_SIGNING_KEY": str(home / "signing.key"),
               "SABOT_CHECKPOINTS": str(home / "checkpoints"),
               "SABOT_CHECKPOINT_SECONDS": str(CHECKPOINT_SECONDS)}
    children: list[Child] = []
    for number in range(2):
        port = free_port()
        child = spawn(f"replica-{number}", ["serve", "--no-worker", "--port", str(port),
                                             "--database", database],
                      home / f"replica-{number}", BOUND, environ)
        child.url = f"http://127.0.0.1:{port}"
        children.append(child)
        if number == 0:
            wait_ready(child)
    for number in range(max(2, directors)):
        args = ["worker", "--database", database, "--broker", BROKER, "--pool", "threads",
                "--concurrency", "2", "--loglevel", "WARNING"]
        if number >= directors:
            args.append("--no-director")
        if number >= 2:
            args.append("--no-views")
        children.append(spawn(f"worker-{number}", args, home / f"worker-{number}", BOUND,
                              environ))
    wait_ready(children[1])
    return children


def stop(children: list[Child]) -> None:
    for child in children:
        child.terminate()
    for child in children:
        child.stop()


def issue_tokens(service: TableService, tables: list[str]) -> dict[str, str]:
    store = TokenStore(service.database)
    tokens = {"@organiser": store.issue(Grant(role=Role.ORGANISER))}
    for name in tables:
        for seat in range(PLAYERS):
            player = f"{name}-p{seat}"
            tokens[player] = store.issue(Grant(role=Role.PLAYER, player=player))
    return tokens


def measure_run(run: Run, database: str, home: Path) -> None:
    """Run the installation under `run`'s load; its figures are its window's (the capacity
    run's: its best step's), measured against raw psycopg on as many connections."""
    children = start(database, home, run.directors)
    meter = Meter(database, children)
    try:
        with TableService(url=database, secret_key=KEY) as service:
            tokens = issue_tokens(service, run.tables)
            load, steps = asyncio.run(asyncio.wait_for(
                play([c.url for c in children[:2]], service, tokens, run, meter),
                timeout=run.seconds + WARM_UP + 240))
            folder = checkpoint_holder(service.database, children)
        assert not load.failures, f"{len(load.failures)} failures: {load.failures[:5]}"
    except BaseException as error:
        raise AssertionError("\n".join(c.tail() for c in children)) from error
    finally:
        stop(children)
    assert folder.startswith("worker-"), f"the checkpoints were folded by {folder}"
    lost = missing(database, load.applied)
    assert not lost, f"{len(lost)} commands answered as applied are not in the log: {lost[:5]}"
    chosen = best(steps)
    window, sample = chosen.window, chosen.sample
    first, last, elapsed = window.first.tally, window.last.tally, window.elapsed
    connections = len(last.backends)
    events, commands = last.events - first.events, window.commands
    raw, raw_cpu, raw_tx_cpu = raw_rate(database, max(1, connections),
                                        max(1, round(events / max(1, commands))), RAW_SECONDS)
    pg = server_cpu(first.backends, last.backends) / max(1, events)
    run.profile = [
        f"checkpoints folded and signed by {folder} (the lease's holder at the end)",
        *(step_line(step) for step in steps if run.capacity),
        "PG CPU ms/event by process: " + " ".join(
            f"{name}={seconds * 1000 / max(1, events):.3f}" for name, seconds
            in sorted(server_cpu_by_application(first, last).items())),
        f"statements on the CPU, {meter.sampler.taken} samples:", *meter.sampler.lines(),
        "by process and table:", *meter.sampler.by_table(),
        "tables' counters over the windows:", *scan_deltas(meter.scans[0], meter.scans[-1])]
    cpu = window.cpu()
    installation = sum(seconds for name, seconds in cpu.items() if name != "client")
    replicas = sum(cpu[c.name] for c in children[:2])
    coups = last.coups - first.coups
    warm, end = steps[0].window.first.usage, steps[-1].window.last.usage
    run.figures.update({
        "clients": chosen.clients,
        "commands/s": commands / elapsed, "clients' commands/s": chosen.served, "raw tx/s": raw,
        "HTTP POST/s": len(sample.post) / elapsed, "HTTP GET/s": len(sample.get) / elapsed,
        "coups/s": coups / elapsed, "events/s": events / elapsed,
        **{f"POST p{q} ms": percentile(sample.post, q) for q in (50, 95, 99)},
        **{f"GET p{q} ms": percentile(sample.get, q) for q in (50, 95, 99)},
        **{f"push p{q} ms": percentile(load.push, q) for q in (50, 95)},
        "push client lag p95 ms": load.client_lag,
        **{f"?at= read p{q} ms": percentile(load.at_waits, q) for q in (50, 95)},
        "?at= looks ended by a notice": load.view_waits.get("notice", 0.0) / max(
            1.0, sum(load.view_waits.values())),
        "POST p95 in the replica ms (bucket bound)": bucket_percentile(load.handled, 95),
        "client lag p95 ms": percentile(load.loop_lags, 95),
        "5xx": sum(n for s, n in sample.statuses.items() if s >= 500),
        "409": sample.statuses[409], "resent": load.resent,
        "PG CPU ms/event": pg * 1000, "raw PG CPU ms/row": raw_cpu * 1000,
        "connections": connections,
        "CPU ms a command": installation * 1000 / max(1, commands),
        "CPU ms a coup": installation * 1000 / max(1, coups),
        "replicas' CPU ms a command": replicas * 1000 / max(1, sum(sample.by_replica.values())),
        "raw CPU ms a tx": raw_tx_cpu * 1000,
        "CPU s": " ".join(f"{name}={seconds:.1f}" for name, seconds in cpu.items()),
        "RSS MB warm->end": " ".join(
            f"{name}={warm[name][1] >> 20}->{end[name][1] >> 20}" for name in end),
        "RSS growth max": max(end[n][1] / max(1, warm[n][1]) for n in end),
        "a replica": " ".join(
            f"{c.name}={sample.by_replica[c.url] / elapsed:.0f}/s,"
            f"{sample.by_replica[c.url] / max(0.01, cpu[c.name]):.0f}/CPU s"
            for c in children[:2]),
        "commands/s a replica core": sum(sample.by_replica.values()) / max(0.01, replicas),
    })


def checkpoint_holder(database: Database, children: list[Child]) -> str:
    """The child whose process holds the store's checkpoint lease: it alone folds the store's
    events and signs its checkpoints (`infra.store.checkpoint_lease`, issue 36)."""
    held = holder(database)
    if held is None:
        return "no process"
    pid = int(held.split("/")[0].rsplit(":", 1)[1])
    return next((c.name for c in children if pid in c.tree()), f"process {pid}")


def step_line(step: Step) -> str:
    """A capacity step in one line: its clients, rates, POST latencies and CPU."""
    return (f"step {step.clients} clients: {step.rate:.0f} commands/s, "
            f"{step.served:.0f} of them the clients', POST p50/p95/p99 "
            + "/".join(f"{percentile(step.sample.post, q):.0f}" for q in (50, 95, 99))
            + " ms, CPU s " + " ".join(f"{name}={seconds:.1f}"
                                       for name, seconds in step.window.cpu().items()))


def report(runs: list[Run], results: Results) -> None:
    for run in runs:
        f = run.figures
        label = (f"topology{' capacity' if run.capacity else ''} N={run.tournaments} "
                 f"tournaments, {run.directors} directors, {run.subscribers} subscribers")
        results.report(f"{label}: commands/s", float(f["commands/s"]), "commands/s",
                       baseline=float(f["raw tx/s"]),
                       baseline_label="raw psycopg, same rows a tx", goal=at_least(0.35))
        results.report(f"{label}: PostgreSQL CPU an event", float(f["PG CPU ms/event"]), "ms",
                       baseline=float(f["raw PG CPU ms/row"]), baseline_label="raw insert a row",
                       goal=at_most(2))
        for q, goal in ((50, 30), (95, 100)):
            results.report(f"{label}: read-your-own-write ?at= on the other replica, p{q}",
                           float(f[f"?at= read p{q} ms"]), "ms",
                           baseline=float(f[f"GET p{q} ms"]),
                           baseline_label="the pollers' view GETs (no ?at=)",
                           goal=at_most(goal, of_ratio=False))
        results.report(f"{label}: CPU a command, whole installation (processes and "
                       "PostgreSQL's backends)", float(f["CPU ms a command"]), "ms",
                       baseline=float(f["raw CPU ms a tx"]),
                       baseline_label="raw psycopg, client and backend, same rows a tx")
        results.report(f"{label}: CPU a coup, whole installation", float(f["CPU ms a coup"]),
                       "ms", baseline=float(f["raw CPU ms a tx"]),
                       baseline_label="raw psycopg, client and backend, same rows a tx")
        results.report(f"{label}: an API replica's CPU a command (its own commands)",
                       float(f["replicas' CPU ms a command"]), "ms",
                       baseline=float(f["raw CPU ms a tx"]),
                       baseline_label="raw psycopg, client and backend, same rows a tx")
        if not run.capacity:  # its load grows step by step
            results.report(f"{label}: RSS at the end / after warm-up, worst process",
                           float(f["RSS growth max"]), "x", goal=at_most(1.1, of_ratio=False))
        if run.capacity:
            results.report(f"{label}: the clients' commands/s (HTTP, {f['clients']} clients)",
                           float(f["clients' commands/s"]), "commands/s")
            results.report(f"{label}: commands/s a core of an API replica",
                           float(f["commands/s a replica core"]), "commands/CPU s")
        elif (run.tournaments, run.directors) == (16, 2) and run.subscribers <= FEW_SUBSCRIBERS:
            results.report(f"{label}: view GET p99", float(f["GET p99 ms"]), "ms",
                           goal=at_most(150, of_ratio=False))
            results.report(f"{label}: command POST p95", float(f["POST p95 ms"]), "ms",
                           goal=at_most(100, of_ratio=False))
        if run.subscribers >= 1000:
            results.report(f"{label}: push p95",
                           float(f["push p95 ms"]), "ms", goal=at_most(100, of_ratio=False))
    by = {(r.tournaments, r.directors): r for r in runs if not r.capacity}
    if (16, 1) in by and (16, 4) in by:
        results.report("topology N=16: directors' coups/s, 4 processes",
                       float(by[16, 4].figures["coups/s"]), "coups/s",
                       baseline=float(by[16, 1].figures["coups/s"]),
                       baseline_label="1 process", goal=at_least(2.5))


@pytest.mark.bench
@pytest.mark.timeout(sized(3000, 300))
def test_bench_topology(tmp_path: Path, results: Results, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    need_server("PostgreSQL", "127.0.0.1", 5432)
    need_server("Redis", "127.0.0.1", 6379)
    monkeypatch.setenv("PGAPPNAME", OWN)  # psycopg's default: the bench's backends named
    drop_leftovers()
    runs = runs_of(RUNS)
    for run in runs:
        with fresh_database() as database:
            measure_run(run, database, tmp_path / run.label.replace(" ", "-"))
        assert run.figures["5xx"] == 0
    columns = [k for k, v in runs[0].figures.items() if not isinstance(v, str)]
    rows = [{"run": r.label, **{k: (f"{v:.3g}" if isinstance(v, float) else str(v))
                                for k, v in r.figures.items() if k in columns}} for r in runs]
    lines = format_table(f"Topology: {SECONDS} s windows ({STEP_SECONDS} s a capacity step), "
                         f"S SSE subscribers, {POLLERS} view pollers, "
                         f"{HUMAN_TABLES} human tables (capacity: a table a client)", rows)
    lines += [f"{r.label} " + "; ".join(f"{k}: {v}" for k, v in r.figures.items()
                                         if isinstance(v, str)) for r in runs]
    lines += [line for r in runs for line in [r.label, *r.profile]]
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    TOPOLOGY_JSON.parent.mkdir(parents=True, exist_ok=True)
    TOPOLOGY_JSON.write_text(json.dumps([{"tournaments": r.tournaments, "directors": r.directors,
                                          "capacity": r.capacity, **r.figures} for r in runs],
                                        indent=2) + "\n")
    report(runs, results)
