"""The director as a worker duty: every `sabot worker` (unless `--no-director`) directs the
tournaments of its store.

A thread of the worker's main process looks at the store's tournaments in turn and takes
steps (`infra.services.tournaments.Director.tick`) for each one it holds the lease of, for at most
`BUDGET` seconds a tournament before it looks at the next; it sleeps `IDLE` seconds when
nothing moved. Several workers may run it: the lease lets one act per tournament and the
others take over within a few seconds of its expiry. The clock is the worker's own, recorded
in the events (round started, paused, resumed), so a restart neither restarts nor skips a
round's time. A finished tournament is not looked at again by this process.

The director's own commands send the deadlines they start (a turn to bet, a hand's decision)
as the workers' and the API's do, except at the tables of a tournament dealt automatically,
where the director plays every player at once and nobody waits (`director_deadlines`).

A step that fails is logged with the tournament and tried again after a pause that grows
with each failure (`Failures`): every command of a step has an id derived from the
tournament's recorded position, so what was applied before the failure is not applied twice.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import structlog
from celery import signals

from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Dealing
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from infra.store.outbox import BetDeadline, Deadline
from workers.services import send_deadline

log = structlog.get_logger("sabot.workers.director")

BUDGET = 2.0  # seconds spent on one tournament before looking at the others
IDLE = 0.2  # seconds to sleep when no tournament moved
BACKOFF_MAX = 30.0  # seconds at most between two tries of a tournament whose step fails


def holder_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class Failures:
    """Tournaments whose last step failed, tried again after a growing pause (1 s, 2 s, ...
    up to `BACKOFF_MAX`), so that one broken tournament neither floods the log nor starves
    the others."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.count: dict[uuid.UUID, int] = {}
        self.after: dict[uuid.UUID, float] = {}

    def waiting(self, tournament_id: uuid.UUID) -> bool:
        return self.clock() < self.after.get(tournament_id, 0.0)

    def failed(self, tournament_id: uuid.UUID) -> None:
        count = self.count[tournament_id] = self.count.get(tournament_id, 0) + 1
        self.after[tournament_id] = self.clock() + min(BACKOFF_MAX, 2.0 ** (count - 1))

    def succeeded(self, tournament_id: uuid.UUID) -> None:
        self.count.pop(tournament_id, None)
        self.after.pop(tournament_id, None)


def turn(director: Director, finished: set[uuid.UUID], failures: Failures) -> bool:
    """One look at every tournament not known finished; whether any moved."""
    moved = False
    for tournament_id in director.tournaments.ids():
        if tournament_id in finished or failures.waiting(tournament_id):
            continue
        director.leases.renew(director.holder, time.time(), director.lease_seconds)
        until = time.monotonic() + BUDGET
        try:
            while time.monotonic() < until:
                tick = director.tick(tournament_id)
                if tick is Tick.FINISHED:
                    finished.add(tournament_id)
                    log.info("tournament finished", tournament_id=str(tournament_id))
                if tick is not Tick.ACTED:
                    break
                moved = True
            failures.succeeded(tournament_id)
        except Exception:
            failures.failed(tournament_id)
            log.exception("director step failed", tournament_id=str(tournament_id),
                          failures=failures.count[tournament_id])
    return moved


def director_deadlines(director: Director,
                       send: Callable[[Deadline | BetDeadline], object]) -> None:
    """Send (`send`) the deadlines the director's commands start, but at the tables of a
    tournament dealt automatically: those are marked sent, and expire with the outbox."""
    automatic: dict[uuid.UUID, bool] = {}  # a table's dealing never changes

    def awaited(deadline: Deadline | BetDeadline) -> None:
        table_id = deadline.table_id
        if table_id not in automatic:
            name = director.service.table(table_id).tournament
            automatic[table_id] = name is not None and director.tournaments.state(
                Tournament.create_id(name)).settings.dealing is Dealing.AUTOMATIC
        if not automatic[table_id]:
            send(deadline)

    director.service.effects.on(Deadline, awaited)
    director.service.effects.on(BetDeadline, awaited)


def duty(database_url: str, stop: threading.Event) -> None:
    service = TableService(url=database_url)
    director = Director(service, holder=holder_name())
    director_deadlines(director, send_deadline)
    finished: set[uuid.UUID] = set()
    failures = Failures()
    log.info("director started", holder=director.holder)
    try:
        while not stop.is_set():
            try:
                moved = turn(director, finished, failures)
            except Exception:  # the store unreachable: try again later
                log.exception("director could not read the tournaments")
                moved = False
            if not moved:
                stop.wait(IDLE)
    finally:
        service.close()


def start(database_url: str) -> threading.Event:
    """Run the duty in a daemon thread; set the event returned to stop it."""
    stop = threading.Event()
    threading.Thread(target=duty, args=(database_url, stop), name="sabot-director",
                     daemon=True).start()
    return stop


def start_when_ready(database_url: str) -> None:
    """Start the duty once the celery worker is up (its logging configured)."""

    def ready(**_: Any) -> None:
        start(database_url)

    signals.worker_ready.connect(ready, weak=False)
