"""A tournament survives its director's worker dying at any moment: the worker (a real `sabot
worker` subprocess on PostgreSQL) is killed with SIGKILL at random points, a new one takes
over when the lease expires, and the tournament ends exactly as an uninterrupted run with the
same seed: the same results, the same tournament decisions, every table's events with the
same command ids, none applied twice."""

from __future__ import annotations

import random
import time
from pathlib import Path

from infra.tournaments import Director, Tournaments
from tests.e2e.test_tournaments_api import KEY, worker
from tests.integration.test_director import prepared, record

KILLS = 5
FINISH = 240.0


def wait_for_director(cwd: Path) -> None:
    deadline = time.monotonic() + 30
    while b"director started" not in (cwd / "worker.log").read_bytes():
        assert time.monotonic() < deadline, (cwd / "worker.log").read_text()[-2000:]
        time.sleep(0.05)


def test_sigkill_of_the_director_at_random_points_changes_nothing(
        sqlite_url: str, postgres_url: str, tmp_path: Path) -> None:
    alone, alone_id = prepared(sqlite_url)
    Director(alone).run(alone_id)
    expected = record(alone, alone_id)

    service, tournament_id = prepared(postgres_url, key=KEY)
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
    assert got["results"] == expected["results"]
    assert got["decisions"] == expected["decisions"]
    assert got["tables"] == expected["tables"]
