"""Benchmark of the directors: 16 tournaments of house bots (8 in quick mode; 2 tables each) on
PostgreSQL, directed by one `sabot worker` process, then by four (real processes, their leases
spread: `infra.store.leases.Census`): coups a second each and their ratio (goal: four at least
2.5 times one), the cores the directors and their PostgreSQL backends kept busy, and coups a CPU
second (a ratio near 1 says four processes lose nothing to each other: on a machine with the
cores for them, four make about four times one's coups; on 2 cores one already fills it); and
the director's transactions a coup, its outbox marks batched (`MARK_BATCH`) against one
transaction a command (`mark_batch` 1, as before), counted by PostgreSQL (`pg_stat_database`, a
database of its own). Goals are rows of the table, never asserted: since a run of bot steps
records one set of effects, batching the marks saves some 2 transactions of 25-30 a coup, within
the noise of two timed measures."""

from __future__ import annotations

import math
import os
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import msgspec
import psycopg
import pytest

from api.commands.worker import running_worker
from infra.services.tables import TableService
from infra.services.tournaments import Director, Tournaments
from infra.store.live_push import RedisWake
from infra.store.outbox import Wake
from tests.bench.harness import QUICK, Results, at_least, at_most, sized
from tests.bench.pg_cpu import BackendCpu, process_cpu
from tests.e2e.test_api import KEY
from tests.integration.test_director_crash import wait_for_director
from tests.integration.test_director_spread import live
from tests.integration.test_tournament_run import SETTINGS
from workers.director import MARK_BATCH, Failures, director_deadlines, turn

TOURNAMENTS = sized(16, 8)  # quick: two a process for the four
BOTS = 10  # two tables of five
ENDLESS = msgspec.structs.replace(  # none ends, nobody busts, no table closes in the run
    SETTINGS, coups_per_round=100_000, starting_chips=100_000, min_stake=1, max_stake=10)
ENV = {"SABOT_SECRET_KEY": KEY.hex()}


def prepared(url: str, count: int) -> list[uuid.UUID]:
    """`count` tournaments of house bots, started (their draw made)."""
    with TableService(url=url, secret_key=KEY) as service:
        tournaments = Tournaments(service)
        ids = []
        for n in range(count):
            tournament_id = tournaments.create(f"bench-{n}", ENDLESS, seed=b"bench %d" % n,
                                               command_id=f"create-{n}")
            for p in range(BOTS):
                tournaments.register(tournament_id, f"b{p}", bot=True,
                                     command_id=f"reg-{n}-{p}")
            tournaments.start(tournament_id, command_id=f"start-{n}")
            ids.append(tournament_id)
    return ids


def coups(url: str, ids: list[uuid.UUID]) -> int:
    """The coups dealt at every table of the tournaments."""
    with TableService(url=url, secret_key=KEY) as service:
        tournaments = Tournaments(service)
        return sum(table.coup_number for t in ids for table in tournaments.tables(t).values())


def transactions(url: str) -> int:
    """The transactions PostgreSQL counted in the database of `url` (of the sessions ended or
    idle a moment: their counts reach the statistics then)."""
    time.sleep(1.5)
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute("SELECT xact_commit + xact_rollback FROM pg_stat_database"
                                 " WHERE datname = current_database()").fetchone()
    assert row is not None
    return int(row[0])


@dataclass
class Directed:
    """What `processes` directors did in a window: coups a second, and the cores they and
    their PostgreSQL backends kept busy."""

    coups_per_second: float
    director_cores: float
    database_cores: float

    @property
    def coups_a_cpu_second(self) -> float:
        """Coups a CPU second of the directors and of the backends serving them: flat from one
        process to four means nothing is lost to their contention, so that with a core for each
        (and PostgreSQL's) four make about four times one's coups."""
        return self.coups_per_second / max(0.01, self.director_cores + self.database_cores)


def directed_by(url: str, ids: list[uuid.UUID], processes: int, seconds: float,
                logs: Path) -> Directed:
    """Coups a second over `seconds` with `processes` workers directing, once their leases
    are spread (every tournament held, none over its share), with the CPU they and their
    backends spent meanwhile."""
    with psycopg.connect(url, autocommit=True) as connection:  # the last run's go at once
        connection.execute("UPDATE tournament_leases SET expires = 0")
    application = f"bench-directors-{processes}"
    with TableService(url=url, secret_key=KEY) as service, ExitStack() as stack:
        workers = []
        for n in range(processes):
            cwd = logs / f"{processes}-{n}"
            cwd.mkdir(parents=True)
            workers.append(stack.enter_context(running_worker(
                "", url, cwd / "worker.log", "--pool", "solo", "--no-views", "--queue",
                f"b-{uuid.uuid4().hex[:8]}", cwd=cwd, env={**ENV, "PGAPPNAME": application})))
        for n in range(processes):
            wait_for_director(logs / f"{processes}-{n}")
        share = math.ceil(len(ids) / processes)
        deadline = time.monotonic() + 60
        while True:
            holders, owners = live(service.database)
            counts = [list(owners.values()).count(h) for h in holders]
            if (len(holders) == processes and len(owners) == len(ids)
                    and max(counts) <= share):
                break
            assert time.monotonic() < deadline, (holders, owners)
            time.sleep(0.2)
        backends = BackendCpu(url, application)
        backends.start()
        own = [process_cpu(w.pid) or 0.0 for w in workers]
        first, started = coups(url, ids), time.monotonic()
        time.sleep(seconds)
        dealt, elapsed = coups(url, ids) - first, time.monotonic() - started
        spent = sum((process_cpu(w.pid) or 0.0) - cpu for w, cpu in zip(workers, own,
                                                                         strict=True))
        database = backends.stop()
    return Directed(dealt / elapsed, spent / elapsed, database / elapsed)


def transactions_a_coup(url: str, redis: str, mark_batch: int, turns: int) -> float:
    """The transactions of a director (`workers.director.turn`, in this process, its wake-ups
    sent to `redis` as a worker on Redis sends them) a coup, its outbox marks batched by
    `mark_batch` commands: counted from the first coup on (the tables opened, the round
    started), every session ended before each count."""
    ids = prepared(url, 1)
    with TableService(url=url, secret_key=KEY) as service:
        warm = Director(service, holder="bench")
        while not coups(url, ids):
            turn(warm, set(), Failures())
    first, before = coups(url, ids), transactions(url)
    with TableService(url=url, secret_key=KEY) as service:
        service.effects.mark_batch = mark_batch
        director = Director(service, holder="bench")
        director_deadlines(director, lambda _: None)
        service.effects.on(Wake, RedisWake(redis))
        finished: set[uuid.UUID] = set()
        failures = Failures()
        for _ in range(turns):
            turn(director, finished, failures)
    spent = transactions(url) - before
    return spent / (coups(url, ids) - first)


@pytest.mark.bench
def test_four_director_processes_against_one(results: Results, new_database: Callable[[], str],
                                             redis_url: str, tmp_path: Path) -> None:
    if QUICK:  # five worker processes over 16 tournaments: a minute even small
        pytest.skip("the directors' scaling is measured by `make bench` only")
    url = new_database()
    ids = prepared(url, TOURNAMENTS)
    seconds = sized(40, 6)
    one = directed_by(url, ids, 1, seconds, tmp_path)
    four = directed_by(url, ids, 4, seconds, tmp_path)
    results.report(f"{TOURNAMENTS} bot tournaments, 4 director processes (postgres)",
                   four.coups_per_second, "coups/s", baseline=one.coups_per_second,
                   baseline_label="1 director process", goal=at_least(2.5))
    for count, directed in ((1, one), (4, four)):
        results.report(f"{count} director processes: cores busy (directors + their backends)",
                       directed.director_cores + directed.database_cores, "cores",
                       baseline=float(os.cpu_count() or 1), baseline_label="the machine's")
    results.report("coups a CPU second (directors + their backends), 4 processes",
                   four.coups_a_cpu_second, "coups/CPU s", baseline=one.coups_a_cpu_second,
                   baseline_label="1 process")
    assert one.coups_per_second > 0 and four.coups_per_second > 0

    turns = sized(10, 3)
    unbatched = transactions_a_coup(new_database(), redis_url, 1, turns)
    batched = transactions_a_coup(new_database(), redis_url, MARK_BATCH, turns)
    results.report("director transactions a coup, outbox marks batched (postgres)", batched,
                   "transactions", baseline=unbatched, baseline_label="a mark a command",
                   goal=at_most(1.0))  # a run's effects are one set: ~2 marks a coup to save
    assert batched > 0 and unbatched > 0
