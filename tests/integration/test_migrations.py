"""Versioned schema migrations on real stores: a store written by the schema before versions
(the committed fixture, `fixtures/schema_v1/make.py`) upgrades, verifies and plays on; two
upgrades at once apply each step once, the second after waiting for the first; a store of a
newer schema is refused in one line; `sabot serve`, `worker` and `play` upgrade on start."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import httpx
import psycopg
import pytest

from api.cli import main
from infra.store import migrations
from infra.store.database import SCHEMA_LOCK
from infra.store.opening import open_store
from infra.store.urls import sqlite_path
from tests.client import CLIENT
from tests.e2e.test_deploy import free_port
from tests.integration.fixtures.schema_v1.make import SECRET_KEY, SEED
from tests.integration.test_audit import sql

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "schema_v1"
ROOT = Path(__file__).resolve().parents[2]


def schema_1_store(url: str, folder: Path) -> dict[str, str]:
    """Load the fixture's store into the empty database at `url`; the environment (keys and
    checkpoint file, copied into `folder`) that its writers and auditors need."""
    dialect = "sqlite" if url.startswith("sqlite:") else "postgres"
    key = folder / "signing.key"
    shutil.copy(FIXTURE / "signing.key", key)
    key.chmod(0o600)
    checkpoints = folder / "store.checkpoints"
    shutil.copy(FIXTURE / f"{dialect}.checkpoints", checkpoints)
    dump = (FIXTURE / f"{dialect}.sql").read_text()
    if dialect == "sqlite":
        with closing(sqlite3.connect(sqlite_path(url))) as connection:
            connection.executescript(dump)
            connection.execute("PRAGMA journal_mode=WAL")  # as every Sabot store is
    else:
        base, _, schema = url.partition("?schema=")
        with psycopg.connect(base, autocommit=True) as connection:
            connection.execute(dump.replace("CREATE SCHEMA @SCHEMA@;", "")  # type: ignore[arg-type]
                               .replace("@SCHEMA@", schema))
    return {"SABOT_SIGNING_KEY": str(key), "SABOT_CHECKPOINTS": str(checkpoints),
            "SABOT_SECRET_KEY": SECRET_KEY}


def schema(url: str) -> migrations.Status:
    with open_store(url, create=False) as store:
        return migrations.status(store.database)


def sabot(*args: str, env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "api.cli", *args], cwd=cwd, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def schema_1_url(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The fixture's store at `database_url`, its keys in this process's environment."""
    for name, value in schema_1_store(database_url, tmp_path).items():
        monkeypatch.setenv(name, value)
    return database_url


def test_a_store_of_schema_1_upgrades_verifies_and_plays_on(
        schema_1_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    database_url = schema_1_url
    db = ["--database", database_url]
    before = schema(database_url)
    assert (before.version, before.unversioned) == (1, True)
    assert [step.version for step in before.pending] == list(range(1, migrations.LATEST + 1))
    assert main(["db", "upgrade", "--json", *db]) == 0
    upgrade = json.loads(capsys.readouterr().out)
    assert upgrade == {"before": 1, "after": migrations.LATEST,
                       "applied": list(range(1, migrations.LATEST + 1))}
    assert main(["db", "status", "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "version": migrations.LATEST, "latest": migrations.LATEST, "unversioned": False,
        "pending": []}
    assert main(["audit", "verify", *db]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["play", "--players", "3", "--coups", "6", "--seed", SEED, "--table", "fixture",
                 "--json", *db]) == 0
    played = json.loads(capsys.readouterr().out)
    assert played["coups"] > 4  # the fixture's table, 4 coups in, dealt on from its sealed seed
    assert main(["token", "list", "--json", *db]) == 0
    (token,) = json.loads(capsys.readouterr().out)  # issued by the old schema
    assert main(["token", "revoke", token["id"], *db]) == 0
    assert main(["audit", "verify", *db]) == 0
    assert main(["db", "upgrade", *db]) == 0
    assert capsys.readouterr().out.endswith(f"store schema {migrations.LATEST} is up to date\n")


@pytest.mark.serial  # holds the schema lock of the whole server (tests/conftest.py)
def test_two_upgrades_at_once_apply_each_step_once(database_url: str, tmp_path: Path) -> None:
    """The lock is held while both start: both wait; then one applies, the other finds it
    done."""
    env = {**schema_1_store(database_url, tmp_path), "SQLITE_LOCK_TIMEOUT": "60",
           "PGAPPNAME": f"upgrade-{uuid.uuid4().hex[:8]}"}
    command = ("db", "upgrade", "--json", "--database", database_url)
    with holding_the_schema_lock(database_url) as waiting:
        upgrades = [sabot(*command, env=env, cwd=tmp_path) for _ in range(2)]
        deadline = time.monotonic() + 60
        while waiting(env["PGAPPNAME"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [upgrade.poll() for upgrade in upgrades] == [None, None]
    answers = [upgrade.communicate(timeout=60) for upgrade in upgrades]
    assert [upgrade.returncode for upgrade in upgrades] == [0, 0], answers
    applied = sorted(json.loads(out)["applied"] for out, _ in answers)
    assert applied == [[], list(range(1, migrations.LATEST + 1))]
    assert sql(database_url, "SELECT version FROM schema_version ORDER BY version") == [
        (version,) for version in range(1, migrations.LATEST + 1)]


@contextmanager
def holding_the_schema_lock(url: str) -> Iterator[Callable[[str], int]]:
    """The schema lock held by the test (SQLite's write lock, PostgreSQL's advisory lock);
    yields how many processes of an application name wait for it (SQLite cannot tell: after
    5 s, both are taken to be waiting)."""
    if url.startswith("sqlite:"):
        started = time.monotonic()
        with closing(sqlite3.connect(sqlite_path(url), isolation_level=None)) as lite:
            lite.execute("BEGIN IMMEDIATE")
            yield lambda name: 2 if time.monotonic() - started > 5 else 0
            lite.rollback()
        return
    with psycopg.connect(url.partition("?")[0], autocommit=True) as connection:
        connection.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))

        def waiting(name: str) -> int:
            row = connection.execute(
                "SELECT count(*) FROM pg_locks JOIN pg_stat_activity USING (pid)"
                " WHERE locktype = 'advisory' AND NOT granted AND application_name = %s",
                (name,)).fetchone()
            return int(row[0]) if row else 0

        try:
            yield waiting
        finally:
            connection.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK,))


def test_a_store_of_a_newer_schema_is_refused_in_one_line(
        schema_1_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    database_url = schema_1_url
    db = ["--database", database_url]
    assert main(["db", "upgrade", *db]) == 0
    newer = migrations.LATEST + 1
    sql(database_url, "INSERT INTO schema_version (version, title, applied_at)"
        " VALUES (?, 'from the future', 'tomorrow')", (newer,))
    capsys.readouterr()
    line = f"sabot: store schema {newer} is newer than this Sabot ({migrations.LATEST}): " \
           "upgrade Sabot\n"
    for command in (["db", "status"], ["db", "upgrade"], ["play", "--coups", "1"],
                    ["audit", "verify"], ["token", "list"]):
        assert main([*command, *db]) == 2, command
        assert capsys.readouterr() == ("", line), command
    assert sql(database_url, "SELECT MAX(version) FROM schema_version") == [(newer,)]


def test_serve_worker_and_play_upgrade_the_store_on_start(
        sqlite_url: str, postgres_url: str, tmp_path: Path) -> None:
    stores = {}
    for role, url in (("serve", postgres_url), ("worker", sqlite_url), ("play", "")):
        folder = tmp_path / role
        folder.mkdir()
        url = url or f"sqlite:///{folder}/sabot.db"
        stores[role] = (url, folder, schema_1_store(url, folder))
        assert schema(url).unversioned
    url, folder, env = stores["play"]
    play = sabot("play", "--coups", "1", "--json", "--database", url, env=env, cwd=folder)
    assert play.wait(timeout=120) == 0, play.communicate()
    url, folder, env = stores["serve"]
    port = free_port()
    serve = sabot("serve", "--no-worker", "--port", str(port), "--database", url, env=env,
                  cwd=folder)
    url, folder, env = stores["worker"]
    worker = sabot("worker", "--pool", "solo", "--no-director", "--database", url,
                   env=env, cwd=folder)
    try:
        deadline = time.monotonic() + 90
        while not all(schema(url).version == migrations.LATEST for url, _, _ in
                      stores.values()):
            assert serve.poll() is None and worker.poll() is None, "serve or worker exited"
            assert time.monotonic() < deadline, {r: schema(s[0]) for r, s in stores.items()}
            time.sleep(0.5)
        health = wait_for(f"http://127.0.0.1:{port}/health", deadline)
        assert health.status_code == 200
    finally:
        for process in (serve, worker):
            process.terminate()
            process.communicate(timeout=30)
    assert all(not schema(url).unversioned for url, _, _ in stores.values())


def wait_for(url: str, deadline: float) -> httpx.Response:
    while True:
        try:
            return CLIENT.get(url, timeout=3)
        except httpx.TransportError:
            assert time.monotonic() < deadline, f"{url} never answered"
            time.sleep(0.3)
