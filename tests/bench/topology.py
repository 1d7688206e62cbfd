"""The installation the topology benchmark runs, as processes: its database, its children
(`sabot serve --no-worker`, `sabot worker`), what each costs (CPU, RSS from /proc), what the
store recorded (events, coups, command ids) and the raw psycopg baseline of the same run.

Every child runs under coreutils' `timeout`, which ends the child's whole process group at
its bound even when the benchmark itself was killed; the benchmark's databases share the
prefix `PREFIX` and are named after the process that made them, and every one left by a
killed run (its process gone) is dropped when the next run starts, not one of a run going on
beside it (CI's quick benchmarks while someone measures).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import httpx
import psycopg
from eventsourcing.utils import get_topic

from domain.table.aggregate import Table
from tests.conftest import POSTGRES_URL
from tests.e2e.test_api import KEY

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "sabot_bench_topology_"
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
OWN = "sabot-bench-topology"  # the benchmark's own connections' application name


def drop_leftovers() -> None:
    """Drop every database a run of this benchmark made and did not drop: a killed run's,
    whose process is gone."""
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        names = [row[0] for row in connection.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (PREFIX + "%",))]
        for name in names:
            if not _running(name.removeprefix(PREFIX).split("_", 1)[0]):
                connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _running(maker: str) -> bool:
    """Whether the process `maker` (a pid, as a database's name gives it) is alive."""
    if not maker.isdigit():
        return False  # named before names gave their maker
    try:
        os.kill(int(maker), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's, alive
    return True


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new database of the benchmark's own, named after this process, dropped afterwards;
    its URL."""
    name = f"{PREFIX}{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it, read from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def cpu_seconds(pids: Sequence[int]) -> dict[int, float]:
    """User + system CPU seconds of each live process of `pids`."""
    seconds = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        seconds[pid] = (int(fields[11]) + int(fields[12])) / TICK
    return seconds


def rss_bytes(pids: Sequence[int]) -> int:
    total = 0
    for pid in pids:
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except OSError:
            continue
    return total


@dataclass
class Child:
    """A `sabot` command of the installation, in its own directory and process group."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    url: str = ""

    def tree(self) -> list[int]:
        return descendants(self.process.pid)

    def cpu(self) -> float:
        return sum(cpu_seconds(self.tree()).values())

    def rss(self) -> int:
        return rss_bytes(self.tree())

    def alive(self) -> None:
        assert self.process.poll() is None, \
            f"{self.name} exited {self.process.returncode}: {self.log.read_text()[-3000:]}"

    def tail(self, lines: int = 12) -> str:
        """Its exit code, if it ended, and the last lines it logged other than requests."""
        logged = [line for line in self.log.read_text(errors="replace").splitlines()
                  if '"http.request"' not in line]
        return "\n".join([f"== {self.name} (exit {self.process.poll()})", *logged[-lines:]])

    def terminate(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        """Terminate it, then kill its group if it has not ended in 15 s."""
        if self.process.poll() is None:
            self.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def spawn(name: str, args: Sequence[str], home: Path, bound: float,
          environ: dict[str, str]) -> Child:
    """Start `sabot ARGS` in `home`, killed with its whole group after `bound` seconds."""
    home.mkdir(parents=True, exist_ok=True)
    log = home / f"{name}.log"
    with log.open("w") as stream:
        process = subprocess.Popen(
            ["timeout", "--kill-after=5", f"{bound:.0f}", sys.executable, "-m", "api.cli", *args],
            cwd=home, stdout=subprocess.DEVNULL, stderr=stream, start_new_session=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "SABOT_SECRET_KEY": KEY.hex(),
                 "PGAPPNAME": name, **environ})
    return Child(name, process, log)


def wait_ready(child: Child, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while True:
        child.alive()
        try:
            if httpx.get(f"{child.url}/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"{child.name} did not start in {seconds:.0f} s"
        time.sleep(0.2)


@dataclass(frozen=True)
class Tally:
    """What the store holds at one moment: events, coups, commands; and the CPU of the
    installation's PostgreSQL backends (the benchmark's own, named `OWN`, left out)."""

    events: int
    coups: int
    commands: int
    backends: dict[int, float]
    applications: dict[int, str]


def tally(url: str) -> Tally:
    coup = get_topic(Table.CoupSettled)
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as connection:
        events, coups = connection.execute(
            "SELECT count(*), count(*) FILTER (WHERE topic = %s) FROM stored_events",
            (coup,)).fetchone() or (0, 0)
        commands = (connection.execute("SELECT count(*) FROM command_log").fetchone() or (0,))[0]
        applications: dict[int, str] = dict(connection.execute(
            "SELECT pid, application_name FROM pg_stat_activity WHERE datname = %s"
            " AND application_name <> %s AND pid <> pg_backend_pid()", (name, OWN)).fetchall())
    return Tally(events, coups, commands, cpu_seconds(list(applications)), applications)


def server_cpu(before: dict[int, float], after: dict[int, float]) -> float:
    """PostgreSQL backends' CPU between two tallies (a backend born between counts whole)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def server_cpu_by_application(first: Tally, last: Tally) -> dict[str, float]:
    """`server_cpu` by the backends' application name (the installation's process)."""
    spent: dict[str, float] = {}
    for pid, seconds in last.backends.items():
        application = last.applications[pid]
        spent[application] = spent.get(application, 0.0) + seconds - first.backends.get(pid, 0.0)
    return spent


def missing(url: str, keys: Sequence[str]) -> list[str]:
    """The idempotency keys answered as applied that no command id of the log ends with
    (the log's key is the command id: none is there twice)."""
    with psycopg.connect(url, autocommit=True) as connection:
        logged = {row[0].rsplit("/", 1)[1] for row in connection.execute(
            "SELECT command_id FROM command_log WHERE command_id LIKE 'api/%%'")}
    return [key for key in keys if key not in logged]


class Raw(NamedTuple):
    """Raw psycopg's figures: transactions a second, the backends' CPU a row, and the CPU of
    a transaction, client and backends (the installation's command's baseline)."""

    rate: float
    server_cpu_a_row: float
    cpu_a_transaction: float


def raw_rate(url: str, connections: int, rows: int, seconds: float) -> Raw:
    """Raw psycopg on `connections` connections at once, each committing transactions of
    `rows` inserted rows for `seconds` (this process running nothing else meanwhile)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE IF NOT EXISTS raw_topology (id UUID, version INTEGER, "
                           "topic TEXT, state BYTEA, PRIMARY KEY (id, version))")
    counts = [0] * connections
    pids = [0] * connections
    start = threading.Barrier(connections + 1)
    stop = threading.Event()
    state = os.urandom(300)

    def insert(index: int) -> None:
        with psycopg.connect(url) as connection:
            pids[index] = (connection.execute("SELECT pg_backend_pid()").fetchone() or (0,))[0]
            connection.commit()
            stream, version = uuid.uuid4(), 0
            start.wait()
            while not stop.is_set():
                with connection.transaction(), connection.cursor() as cursor:
                    cursor.executemany("INSERT INTO raw_topology VALUES (%s, %s, %s, %s)",
                                       [(stream, version + i, "raw", state) for i in range(rows)])
                version += rows
                counts[index] += 1

    threads = [threading.Thread(target=insert, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    start.wait()
    before, client = cpu_seconds(pids), time.process_time()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    elapsed = time.perf_counter() - began
    cpu = server_cpu(before, cpu_seconds(pids))
    client = time.process_time() - client
    transactions = sum(counts)
    for thread in threads:
        thread.join(timeout=30)
    return Raw(transactions / elapsed, cpu / max(1, transactions * rows),
               (cpu + client) / max(1, transactions))
