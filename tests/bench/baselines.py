"""The baselines the benchmarks measure in the same run: the raw drivers writing the same
rows, one transaction a batch, and a table aggregate in memory (no store, seeds in a dict)."""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Sequence

import psycopg

from domain.game.settings import TableSettings, Variant
from domain.table.aggregate import Table
from domain.table.commands import SeatPlayer
from infra.services.tables import TableService
from tests.bench.tables import CHIPS, PLAYERS

Row = tuple[uuid.UUID, int, str, bytes]
"""A stored event's row: originator id, version, topic, state."""


def raw_sqlite(path: str, transactions: Sequence[Sequence[Row]]) -> float:
    """Seconds for `sqlite3` to write `transactions` of rows into a fresh table."""
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE raw (id BLOB, version INTEGER, topic TEXT, state BLOB, "
                       "PRIMARY KEY (id, version))")
    start = time.perf_counter()
    for rows in transactions:
        with connection:
            connection.executemany("INSERT INTO raw VALUES (?, ?, ?, ?)",
                                   [(r[0].bytes, *r[1:]) for r in rows])
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


def raw_psycopg(url: str, transactions: Sequence[Sequence[Row]]) -> float:
    """Seconds for `psycopg` to write `transactions` of rows into a fresh table of the test
    schema `url` names."""
    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        connection.execute("CREATE TABLE raw (id UUID, version INTEGER, topic TEXT, "
                           "state BYTEA, PRIMARY KEY (id, version))")
        start = time.perf_counter()
        for rows in transactions:
            with connection.transaction(), connection.cursor() as cursor:
                cursor.executemany("INSERT INTO raw VALUES (%s, %s, %s, %s)", rows)
        return time.perf_counter() - start


class MemoryVault:
    """Seeds in a dict: the in-memory table's stand-in for the vault's SQL."""

    def __init__(self) -> None:
        self.seeds: dict[str, bytes] = {}

    def store(self, shoe_id: str, seed: bytes) -> None:
        self.seeds[shoe_id] = seed

    def unseal(self, shoe_id: str) -> bytes:
        return self.seeds[shoe_id]


def memory_table(svc: TableService, name: str, variant: Variant = Variant.PUNTO_BANCO) -> Table:
    """A seated table (punto banco unless told) in memory, its seeds in `svc`'s vault, made a
    dict."""
    svc._vault = MemoryVault()  # type: ignore[assignment]
    table = Table(name=name, settings=TableSettings.default(variant),
                  tournament=None, actor="@bench", command_id="open")
    for i in range(PLAYERS):
        table.execute(SeatPlayer(command_id=f"seat-{i}", actor="@bench", player=f"p{i}",
                                 chips=CHIPS), svc.cards)
    table.collect_events()
    return table
