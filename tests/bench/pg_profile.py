"""Where an installation's PostgreSQL time goes, without pg_stat_statements: a sampler of the
statements its backends are running, and the tables' scan counters.

`Sampler` looks at `pg_stat_activity` every `EVERY` seconds from a connection of its own
(named `tests.bench.topology.OWN`, so left out of the installation's CPU) and counts, by
the backend's `application_name` (the process) and the statement's text with its literals
folded, the samples in which a backend was running it on the CPU (no wait event): a
statistical profile of the server's CPU by statement. `scans` reads each table's counters
(sequential and index scans, rows read and written), `scan_deltas` subtracts two readings.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Mapping

import psycopg

EVERY = 0.01  # seconds between two samples
NUMBERS = re.compile(r"\b\d+(\.\d+)?\b|'[^']*'")
SPACES = re.compile(r"\s+")
TABLE = re.compile(r'"(\w+)"\."(\w+)"|\b(?:FROM|INTO|UPDATE)\s+(\w+)', re.IGNORECASE)


def folded(statement: str) -> str:
    """The statement with its literals as `?` and its spaces single, at most 160 characters."""
    return SPACES.sub(" ", NUMBERS.sub("?", statement)).strip()[:160]


class Sampler:
    """Samples of the statements the backends of database `name` run on the CPU."""

    def __init__(self, url: str, own: str) -> None:
        self.url, self.own = url, own
        self.samples: Counter[tuple[str, str]] = Counter()
        self.taken = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> Sampler:
        self._stop.set()
        self._thread.join(10)
        return self

    def _run(self) -> None:
        name = self.url.rsplit("/", 1)[1]
        with psycopg.connect(self.url, autocommit=True, application_name=self.own) as db:
            while not self._stop.wait(EVERY):
                rows = db.execute(
                    "SELECT application_name, query FROM pg_stat_activity WHERE datname = %s"
                    " AND state = 'active' AND wait_event IS NULL AND application_name <> %s",
                    (name, self.own)).fetchall()
                self.taken += 1
                for application, query in rows:
                    self.samples[application, folded(query)] += 1

    def lines(self, top: int = 25) -> list[str]:
        """The `top` statements by samples: share of all samples, process, statement."""
        total = max(1, sum(self.samples.values()))
        return [f"{count / total:6.1%} {count:6d} {application:10s} {statement}"
                for (application, statement), count in self.samples.most_common(top)]

    def by_table(self) -> list[str]:
        """The samples by process and the first table each statement names (or its first
        word: BEGIN, COMMIT, SET, SELECT ? without a table), a line each, most first."""
        total = max(1, sum(self.samples.values()))
        tables: Counter[tuple[str, str]] = Counter()
        for (application, statement), count in self.samples.items():
            found = TABLE.search(statement)
            table = (found.group(2) or found.group(3)) if found else statement.split(" ")[0]
            tables[application, f"{statement.split(' ')[0]} {table}"] += count
        return [f"{count / total:6.1%} {count:6d} {application:10s} {what}"
                for (application, what), count in tables.most_common()]


COUNTERS = ("seq_scan", "seq_tup_read", "idx_scan", "idx_tup_fetch", "n_tup_ins", "n_tup_upd",
            "n_tup_del")


def scans(url: str) -> dict[str, dict[str, int]]:
    """Each user table's scan and write counters, by table name."""
    with psycopg.connect(url, autocommit=True) as db:
        rows = db.execute(f"SELECT relname, {', '.join(COUNTERS)} FROM pg_stat_user_tables"
                          ).fetchall()
    return {row[0]: {c: int(v or 0) for c, v in zip(COUNTERS, row[1:], strict=True)}
            for row in rows}


def scan_deltas(before: Mapping[str, Mapping[str, int]],
                after: Mapping[str, Mapping[str, int]], top: int = 15) -> list[str]:
    """The tables that read the most rows between two `scans`, a line each."""
    deltas = {table: {c: counts[c] - before.get(table, {}).get(c, 0) for c in COUNTERS}
              for table, counts in after.items()}
    ranked = sorted(deltas.items(), key=lambda item: -(item[1]["seq_tup_read"]
                                                       + item[1]["idx_tup_fetch"]))
    return [f"{table:28s} " + " ".join(f"{c}={d[c]}" for c in COUNTERS)
            for table, d in ranked[:top]]
