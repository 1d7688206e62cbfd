"""The topology benchmark's databases (`tests.bench.topology`): a run drops what a killed run
left, never the database of a run going on beside it (CI's quick benchmarks while someone
measures: the earlier sweep dropped every benchmark database, a live run's too)."""

from __future__ import annotations

import subprocess

import psycopg

from tests.bench.topology import PREFIX, drop_leftovers, fresh_database
from tests.conftest import POSTGRES_URL, need_server


def names() -> set[str]:
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        return {row[0] for row in connection.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (PREFIX + "%",))}


def test_a_killed_run_s_database_is_dropped_and_a_live_run_s_kept() -> None:
    need_server("PostgreSQL", "127.0.0.1", 5432)
    ended = subprocess.Popen(["true"])  # a killed run's process: ended and reaped
    ended.wait()
    dead = f"{PREFIX}{ended.pid}_leftover"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{dead}"')
    with fresh_database() as url:
        live = url.rsplit("/", 1)[1]
        drop_leftovers()
        left = names()
        assert live in left
        assert dead not in left
    assert live not in names()
