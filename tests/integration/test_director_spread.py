"""Director processes add up: four real `sabot worker` processes on one PostgreSQL store share
eight running tournaments out two each (`infra.store.leases.Census`), one director a
tournament, every tournament moving; a worker killed with SIGKILL has its tournaments taken
over by the others within a few seconds of its leases' expiry, none over its new share."""

from __future__ import annotations

import math
import time
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import msgspec
import pytest

from infra.services.tables import TableService
from infra.services.tournaments import LEASE_SECONDS, Tournaments
from infra.store.database import Database
from infra.store.leases import HOLDER
from tests.e2e.test_tournaments_api import KEY, worker
from tests.integration.test_director_crash import wait_for_director
from tests.integration.test_tournament_run import SETTINGS

TOURNAMENTS = 8
# None finishes during the test (a finished tournament is no one's share): a director plays
# some 40 coups a second, and a player with a thousand maximum stakes does not go bust in a few
# hundred coups.
LONG = msgspec.structs.replace(SETTINGS, coups_per_round=100_000, starting_chips=100_000)


def started(tournaments: Tournaments, n: int) -> uuid.UUID:
    tournament_id = tournaments.create(f"cup-{n}", LONG, seed=b"spread %d" % n,
                                       command_id=f"create-{n}")
    for p in range(6):
        tournaments.register(tournament_id, f"p{p}", bot=True, command_id=f"reg-{n}-{p}")
    tournaments.start(tournament_id, command_id=f"start-{n}")
    return tournament_id


def live(database: Database) -> tuple[set[str], dict[str, str]]:
    """The directors alive and who holds each live lease, as the leases' table says."""
    with database.transaction(write=False) as cursor:
        rows = database.execute(cursor, "SELECT tournament_id, holder FROM {tournament_leases}"
                                " WHERE expires >= ?", (time.time(),)).fetchall()
    return ({row["holder"] for row in rows if row["tournament_id"].startswith(HOLDER)},
            {row["tournament_id"]: row["holder"] for row in rows
             if not row["tournament_id"].startswith(HOLDER)})


def settle(database: Database, fair: Callable[[set[str], dict[str, str]], bool],
           seconds: float) -> tuple[set[str], dict[str, str]]:
    deadline = time.monotonic() + seconds
    while not fair(*(seen := live(database))):
        holders, owners = seen
        assert time.monotonic() < deadline, (
            f"{len(holders)} directors alive, {len(owners)} of {TOURNAMENTS} tournaments held:"
            f" {dict(Counter(owners.values()))}")
        time.sleep(0.2)
    return seen


def shared_out(count: int) -> Callable[[set[str], dict[str, str]], bool]:
    """Every tournament held by one of `count` directors alive, none over its share."""
    def fair(holders: set[str], owners: dict[str, str]) -> bool:
        share = math.ceil(TOURNAMENTS / count)
        held = Counter(owners.values())
        return (len(holders) == count and len(owners) == TOURNAMENTS
                and set(held) <= holders and max(held.values()) <= share)
    return fair


@pytest.mark.serial  # four workers' pools: the most PostgreSQL sessions of any test
def test_four_directors_share_the_tournaments_and_take_a_dead_one_s_over(
        postgres_url: str, tmp_path: Path) -> None:
    service = TableService(url=postgres_url, secret_key=KEY)
    try:
        tournaments = Tournaments(service)
        ids = [started(tournaments, n) for n in range(TOURNAMENTS)]
        database = service.database
        with ExitStack() as stack:
            processes = []
            for n in range(4):
                cwd = tmp_path / f"w{n}"
                cwd.mkdir()
                processes.append(stack.enter_context(worker(postgres_url, cwd)))
            for n in range(4):
                wait_for_director(tmp_path / f"w{n}")
            holders, owners = settle(database, shared_out(4), 60)
            assert sorted(Counter(owners.values()).values()) == [2, 2, 2, 2]
            versions = {t: tournaments.tournament(t).version for t in ids}
            deadline = time.monotonic() + 60
            while any(tournaments.tournament(t).version == versions[t] for t in ids):
                assert time.monotonic() < deadline, "a tournament did not move"
                time.sleep(0.5)

            dead = processes[0]
            holder = next(h for h in holders if f"-{dead.pid}-" in h)
            orphans = [t for t, h in live(database)[1].items() if h == holder]
            dead.kill()  # SIGKILL: its leases and its own row are left to run out
            dead.wait()
            holders, owners = settle(database, shared_out(3), LEASE_SECONDS + 25)
            assert holder not in holders and holder not in owners.values()
            moved = {uuid.UUID(t): tournaments.tournament(uuid.UUID(t)).version for t in orphans}
            deadline = time.monotonic() + 60
            while any(tournaments.tournament(t).version == v for t, v in moved.items()):
                assert time.monotonic() < deadline, "a dead director's tournament did not move"
                time.sleep(0.5)
    finally:
        service.close()
