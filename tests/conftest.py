"""Shared fixtures: the real servers of the machine, skipped on a laptop without them.

Under CI=true a missing server is a failure, never a skip.

`make test` runs tests/integration, tests/e2e and tests/bench on both cores (pytest-xdist,
`-n 2 --dist loadfile`: a module's tests, and its module-scoped servers, stay in one process),
then the tests marked `serial` alone. What two tests at once must not share:
- PostgreSQL: each test has its own schema (`postgres_url`) or databases (`new_database`);
  nothing changes the server's settings (ALTER SYSTEM), resets its statistics or ends other
  sessions; a wait on the server's locks names its own relation, not every lock of the server.
- Redis: a worker consumes a queue named for its test, or a database number of its own
  (`test_evening_api`); a live channel is named by a table's random id.
- Ports: `free_port()`, never a fixed one; files: `tmp_path` (a test run in the repository
  shares `.sabot/`, whose keys are created atomically and whose checkpoints are named by schema).
- Time: bounds generous enough for a loaded machine.
- Sessions: the server allows 100 (`max_connections`); the parallel pass peaked at 74 of ours.
A test that cannot keep to these is marked `serial`, with a comment that says why: holding the
server-wide schema lock (`test_migrations`), a worker on the default queue of Redis db 0
(`test_tournament_run`), a bound of seconds against the checkpointer's own retry
(`test_stuck_writer`), four workers' pools of sessions at once (`test_director_spread`).
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator

import pytest

POSTGRES_URL = os.environ.get("SABOT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("SABOT_TEST_REDIS", "redis://127.0.0.1:6379/0")
IN_CI = os.environ.get("CI", "").lower() == "true"


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def need_server(name: str, host: str, port: int) -> None:
    """Skip (or, under CI, fail) when a server the test needs is not listening."""
    if _reachable(host, port):
        return
    message = f"{name} is not listening on {host}:{port}"
    if IN_CI:
        pytest.fail(f"{message}, and CI=true forbids skipping")
    pytest.skip(f"{message}; this test needs the real server")


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh schema in the test database, dropped afterwards: tests never see each other."""
    need_server("PostgreSQL", "127.0.0.1", 5432)
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{POSTGRES_URL}?schema={schema}"
    finally:
        close_writers_left_open(schema)
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def close_writers_left_open(schema: str) -> None:
    """A writer a test left open would go on trying to checkpoint a dropped schema for the rest
    of the run (and every later `/ready` of this process would say so): close it first."""
    from infra.store.checkpointer import _LIVE

    for checkpointer in list(_LIVE):
        if f".{schema}." in checkpointer.path.name:
            checkpointer.close()


@pytest.fixture
def new_database() -> Iterator[Callable[[], str]]:
    """Makes empty databases on the test server (`new_database()` gives a URL), dropped at
    the end (for tournaments spread over several databases, `infra.store.homes`)."""
    need_server("PostgreSQL", "127.0.0.1", 5432)
    import psycopg

    made: list[str] = []

    def make() -> str:
        name = f"sabot_home_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return POSTGRES_URL.rsplit("/", 1)[0] + "/" + name

    yield make
    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        for name in made:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def redis_url() -> str:
    need_server("Redis", "127.0.0.1", 6379)
    return REDIS_URL


@pytest.fixture
def sqlite_url(tmp_path: os.PathLike[str]) -> str:
    return f"sqlite:///{os.fspath(tmp_path)}/sabot.db"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """Run the test once on the embedded SQLite store and once on the real PostgreSQL."""
    fixture = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    return str(request.getfixturevalue(fixture))
