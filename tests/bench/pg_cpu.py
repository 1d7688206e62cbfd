"""PostgreSQL's server CPU spent for a client: the backend processes serving the connections
of one `application_name`, read from /proc/<pid>/stat (the server must run on this machine).

`tagged(name)` makes every connection libpq opens in the block carry `application_name`
`name` (`PGAPPNAME`); `BackendCpu(name)` samples the CPU of the backends carrying it, from a
connection of its own, so that a backend that closes in between still counts up to its last
sample.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of process `pid` so far, None if it is gone or not here."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def backend_pid(connection: psycopg.Connection[object]) -> int:
    row = connection.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[index]


def server_is_local(url: str) -> bool:
    """Whether the server of `url` runs on this machine (its backend's /proc entry is here)."""
    with psycopg.connect(url.partition("?")[0]) as connection:
        return process_cpu(backend_pid(connection)) is not None


@contextmanager
def tagged(name: str) -> Iterator[None]:
    """Connections opened in the block carry `application_name` `name`."""
    before = os.environ.get("PGAPPNAME")
    os.environ["PGAPPNAME"] = name
    try:
        yield
    finally:
        if before is None:
            del os.environ["PGAPPNAME"]
        else:
            os.environ["PGAPPNAME"] = before


class BackendCpu:
    """The CPU the backends of `application_name` spent between `start()` and `stop()`."""

    def __init__(self, url: str, application_name: str, every: float = 0.1) -> None:
        self.url, self.name, self.every = url.partition("?")[0], application_name, every
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._connection = psycopg.connect(self.url, autocommit=True,
                                           application_name="sabot-bench-monitor")
        self._sample(at_start=True)
        self._thread.start()

    def stop(self) -> float:
        """CPU seconds spent by those backends since `start()`."""
        self._stop.set()
        self._thread.join()
        self._sample(at_start=False)
        self._connection.close()
        return sum(cpu - self.first.get(pid, 0.0) for pid, cpu in self.last.items())

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample(at_start=False)

    def _sample(self, *, at_start: bool) -> None:
        rows = self._connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s",
            (self.name,)).fetchall()
        for (pid,) in rows:
            cpu = process_cpu(pid)
            if cpu is None:
                continue
            if at_start:
                self.first[pid] = cpu
            self.last[pid] = cpu
