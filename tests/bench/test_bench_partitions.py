"""Benchmark of the partitioned log: 1, 2, 4 and 8 tournaments written at once on PostgreSQL,
each by its own process and connection, as the API and worker processes of an installation
write (coups of 20 events, one transaction each, chained and signed in the tournament's
partition), against raw psycopg writing the same rows with the same number of processes and
connections, in the same run."""

from __future__ import annotations

import multiprocessing
import time
import uuid
from collections.abc import Callable
from functools import partial
from typing import Protocol, cast

import psycopg
import pytest

from infra.store.homes import SETTING
from tests.bench.baselines import Row
from tests.bench.harness import Results, at_least, sized
from tests.integration.test_store import Card, Suit, Toy, ToyApp

EVENTS_A_COUP = 20
TOURNAMENTS = (1, 2, 4, 8)


class Job(Protocol):
    def work(self) -> None: ...

    def result(self) -> object: ...


def at_once(jobs: list[Callable[[], Job]]) -> tuple[float, list[object]]:
    """Seconds for the jobs' work to run, each in its own (forked) process, started together
    once each is set up; and each job's result, taken after the timing."""
    context = multiprocessing.get_context("fork")
    ready = context.Barrier(len(jobs) + 1)
    done: multiprocessing.Queue[int] = context.Queue()
    answers: multiprocessing.Queue[tuple[int, object]] = context.Queue()

    def run(index: int, prepare: Callable[[], Job]) -> None:
        job = prepare()
        ready.wait()
        job.work()
        done.put(index)
        answers.put((index, job.result()))

    processes = [context.Process(target=run, args=(i, job)) for i, job in enumerate(jobs)]
    for process in processes:
        process.start()
    ready.wait()
    started = time.perf_counter()
    for _ in processes:
        done.get()
    elapsed = time.perf_counter() - started
    got = dict(answers.get() for _ in processes)
    for process in processes:
        process.join()
        assert process.exitcode == 0
    return elapsed, [got[i] for i in range(len(jobs))]


class Tournament:
    """Writes `coups` coups in the partition of tournament `name`, on a connection of its
    own; its result is the rows written, by coup."""

    def __init__(self, url: str, name: str, coups: int) -> None:
        self.app = ToyApp(url=url)
        self.toy = Toy(name, Suit.HEARTS)
        self.partition = {self.toy.id: f"bench/{name}"}
        self.app.save(self.toy, partitions=self.partition)
        self.first, self.coups = self.toy.version, coups

    def work(self) -> None:
        for _ in range(self.coups):
            for _ in range(EVENTS_A_COUP):
                self.toy.deal(Card("9", Suit.SPADES))
            self.app.save(self.toy, partitions=self.partition)

    def result(self) -> list[list[Row]]:
        with self.app:
            rows = [(uuid.UUID(str(r.originator_id)), r.originator_version, r.topic, r.state)
                    for r in self.app.recorder.select_events(self.toy.id, gt=self.first)]
        return [rows[i:i + EVENTS_A_COUP] for i in range(0, len(rows), EVENTS_A_COUP)]


class Raw:
    """Raw psycopg writing `transactions` into the table `raw`, on a connection of its own."""

    def __init__(self, url: str, transactions: list[list[Row]]) -> None:
        base, _, schema = url.partition("?schema=")
        self.connection = psycopg.connect(base, autocommit=True)
        self.connection.execute(f'SET search_path TO "{schema}"')
        self.transactions = transactions

    def work(self) -> None:
        for rows in self.transactions:
            with self.connection.transaction(), self.connection.cursor() as cursor:
                cursor.executemany("INSERT INTO raw VALUES (%s, %s, %s, %s)", rows)

    def result(self) -> None:
        self.connection.close()


@pytest.mark.bench
@pytest.mark.parametrize("tournaments", TOURNAMENTS)
def test_concurrent_tournaments_on_postgres(postgres_url: str, results: Results,
                                            tournaments: int) -> None:
    coups = sized(150, 10)
    base, _, schema = postgres_url.partition("?schema=")
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        connection.execute("CREATE TABLE raw (id UUID, version INTEGER, topic TEXT, "
                           "state BYTEA, PRIMARY KEY (id, version))")
    elapsed = baseline = float("inf")
    for run in range(sized(2, 1)):  # the best of two runs, new tournaments each
        seconds, answers = at_once([partial(Tournament, postgres_url, f"t{run}-{i}", coups)
                                    for i in range(tournaments)])
        written = [cast(list[list[Row]], rows) for rows in answers]
        assert [len(rows) for rows in written] == [coups] * tournaments
        raw_seconds, _ = at_once([partial(Raw, postgres_url, rows) for rows in written])
        elapsed, baseline = min(elapsed, seconds), min(baseline, raw_seconds)
    total = tournaments * coups
    results.report(f"{tournaments} concurrent tournaments, 20-event coups (postgres)",
                   total / elapsed, "coups/s", baseline=total / baseline,
                   baseline_label=f"raw psycopg, {tournaments} processes",
                   goal=at_least(0.7))


@pytest.mark.bench
def test_tournaments_spread_over_two_databases(postgres_url: str, results: Results,
                                               new_database: Callable[[], str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Four tournaments at once, their partitions spread by `SABOT_PARTITION_DATABASES` over
    the main database and two others (here all on one server: what it shows is the cost of
    routing, not a second machine's capacity), against the same in one database."""
    tournaments, coups = 4, sized(150, 10)
    alone, _ = at_once([partial(Tournament, postgres_url, f"one-{i}", coups)
                        for i in range(tournaments)])
    monkeypatch.setenv(SETTING, f"east={new_database()},west={new_database()}")
    spread, answers = at_once([partial(Tournament, postgres_url, f"spread-{i}", coups)
                               for i in range(tournaments)])
    assert [len(cast(list[list[Row]], rows)) for rows in answers] == [coups] * tournaments
    total = tournaments * coups
    results.report(f"{tournaments} concurrent tournaments over 3 databases (postgres)",
                   total / spread, "coups/s", baseline=total / alone,
                   baseline_label="the same in one database")
