"""Benchmark of the batch store: coups of 20 events, one transaction each, through Sabot's
chained, signed recorder (`SabotApplication.save`), against the same rows written by raw
psycopg on PostgreSQL and by eventsourcing's default SQLite recorder, in the same run."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

from tests.bench.baselines import raw_psycopg
from tests.bench.harness import Results, at_least, sized
from tests.integration.test_store import Card, Suit, Toy, ToyApp

EVENTS_A_COUP = 20


def sabot_store(url: str, coups: int) -> tuple[float, list[list[StoredEvent]]]:
    """Seconds to save `coups` coups of 20 events, and the rows written, by coup."""
    with ToyApp(url=url) as app:
        toy = Toy("batch", Suit.HEARTS)
        app.save(toy)
        version = toy.version
        started = time.perf_counter()
        for _ in range(coups):
            for _ in range(EVENTS_A_COUP):
                toy.deal(Card("9", Suit.SPADES))
            app.save(toy)
        elapsed = time.perf_counter() - started
        stored = list(app.recorder.select_events(toy.id, gt=version))
    return elapsed, [stored[i:i + EVENTS_A_COUP] for i in range(0, len(stored), EVENTS_A_COUP)]


def eventsourcing_default(path: Path, coups: list[list[StoredEvent]]) -> float:
    datastore = SQLiteDatastore(str(path))
    recorder = SQLiteApplicationRecorder(datastore)
    recorder.create_table()
    started = time.perf_counter()
    for rows in coups:
        recorder.insert_events([StoredEvent(uuid.UUID(str(r.originator_id)),
                                            r.originator_version, r.topic, r.state)
                                for r in rows])
    return time.perf_counter() - started


@pytest.mark.bench
def test_batch_store_on_postgres(postgres_url: str, results: Results) -> None:
    coups = sized(400, 50)
    elapsed, rows = sabot_store(postgres_url, coups)
    assert len(rows) == coups
    raw = raw_psycopg(postgres_url, [[(uuid.UUID(str(r.originator_id)), r.originator_version,
                                       r.topic, r.state) for r in coup] for coup in rows])
    results.report("batch store, 20-event coups (postgres, chain + signatures)",
                   coups / elapsed, "coups/s", baseline=coups / raw,
                   baseline_label="raw psycopg, same rows", goal=at_least(0.8))


@pytest.mark.bench
def test_batch_store_on_sqlite(tmp_path: Path, results: Results) -> None:
    coups = sized(400, 50)
    elapsed, rows = sabot_store(f"sqlite:///{tmp_path}/sabot.db", coups)
    assert len(rows) == coups
    default = eventsourcing_default(tmp_path / "es.db", rows)
    results.report("batch store, 20-event coups (sqlite, chain + signatures)",
                   coups / elapsed, "coups/s", baseline=coups / default,
                   baseline_label="eventsourcing's SQLite recorder", goal=at_least(1.5))
