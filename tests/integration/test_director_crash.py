"""A tournament survives its director's worker dying at any moment: the worker (a real `sabot
worker` subprocess on PostgreSQL) is killed with SIGKILL at random points, a new one takes
over when the lease expires, and the tournament ends exactly as an uninterrupted run with the
same seed: the same results, the same tournament decisions, every table's events with the
same command ids, none applied twice."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import msgspec

from infra.services.tournaments import Director, Tournaments
from tests.e2e.test_tournaments_api import KEY, worker
from tests.integration.test_director import prepared, record
from tests.integration.test_tournament_run import SETTINGS

KILLS = 5
FINISH = 240.0
# Long enough that five directors, each killed 0.3 to 2.5 s after it starts, leave it unfinished
# however fast the machine: the kills must land mid-tournament, not after its end.
LONG = msgspec.structs.replace(SETTINGS, coups_per_round=160)


def wait_for_director(cwd: Path) -> None:
    deadline = time.monotonic() + 30
    while b"director started" not in (cwd / "worker.log").read_bytes():
        assert time.monotonic() < deadline, (cwd / "worker.log").read_text()[-2000:]
        time.sleep(0.05)


def test_sigkill_of_the_director_at_random_points_changes_nothing(
        sqlite_url: str, postgres_url: str, tmp_path: Path) -> None:
    # The uninterrupted run on SQLite plays in a thread while the workers (other processes)
    # are started and killed: it is compared only at the end.
    expected: dict[str, Any] = {}
    failed: list[BaseException] = []

    def alone_run() -> None:
        try:
            alone, alone_id = prepared(sqlite_url, LONG)
            Director(alone).run(alone_id)
            expected.update(record(alone, alone_id))
        except BaseException as error:
            failed.append(error)

    reference = threading.Thread(target=alone_run, daemon=True)
    reference.start()

    service, tournament_id = prepared(postgres_url, LONG, key=KEY)
    tournaments = Tournaments(service)
    rng = random.Random(13)
    killed_at: list[tuple[int, str]] = []
    reported: list[float] = []
    for n in range(KILLS):
        cwd = tmp_path / f"w{n}"
        cwd.mkdir()
        with worker(postgres_url, cwd) as process:
            wait_for_director(cwd)
            time.sleep(rng.uniform(0.3, 2.5))
            assert tournaments.view(tournament_id).director is not None
            process.kill()  # SIGKILL: no clean shutdown, the lease is left to expire
            process.wait()
            died = time.monotonic()
        if n == 0:  # the organiser's view says so within 10 s
            while (director := tournaments.view(tournament_id).director) and director.alive:
                assert time.monotonic() - died < 10
                time.sleep(0.1)
            assert director is not None and not director.alive
            reported.append(time.monotonic() - died)
        state = tournaments.state(tournament_id)
        killed_at.append((state.round, state.phase.value))
        if state.phase.value == "finished":
            break
    assert len(killed_at) >= KILLS and killed_at[0][1] != "finished", killed_at
    assert reported and reported[0] < 10
    cwd = tmp_path / "last"
    cwd.mkdir()
    with worker(postgres_url, cwd):
        deadline = time.monotonic() + FINISH
        while tournaments.state(tournament_id).phase.value != "finished":
            assert time.monotonic() < deadline, (cwd / "worker.log").read_text()[-3000:]
            time.sleep(0.3)
    got = record(service, tournament_id)
    reference.join(timeout=FINISH)
    if failed:
        raise failed[0]
    assert expected, "the uninterrupted run did not finish"
    assert got["results"] == expected["results"]
    assert got["decisions"] == expected["decisions"]
    assert got["tables"] == expected["tables"]
