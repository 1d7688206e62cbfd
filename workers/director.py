"""The director as a worker duty: every `sabot worker` (unless `--no-director`) directs the
tournaments of its store.

A thread of the worker's main process looks at the store's tournaments in turn and takes
steps (`infra.services.tournaments.Director.tick`) for each one of its share, for at most
`BUDGET` seconds a tournament before it looks at the next; it sleeps `IDLE` seconds when
nothing moved. Several workers may run it: the lease lets one act per tournament, and each
process holds at most its fair share of the running tournaments (`infra.store.leases.Census`),
giving back, between two steps, what is over it when another director starts, so that N
tournaments spread over H processes about N/H each; the others take a dead director's
tournaments over within a few seconds of its leases' expiry. The clock is the worker's own, recorded
in the events (round started, paused, resumed), so a restart neither restarts nor skips a
round's time. A finished tournament is not looked at again by this process.

The director's own commands send the deadlines they start (a turn to bet, a hand's decision)
as the workers' and the API's do, except at the tables of a tournament dealt automatically,
where the director keeps the people's clocks itself as it deals (the bots act at once; a
person's default comes under the deadline's own command id, so applied once whoever applies it;
a pause stops those clocks: `infra.services.tournaments.StoreDesk.deal_house`).

The effects its commands send (`infra.store.outbox`) are marked sent `MARK_BATCH` commands at
a time and at the end of each turn, not in a transaction each: a director killed in between
leaves them to be sent again, which their consumers take as duplicates.

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
from domain.tournament.records import Phase as TournamentPhase
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from infra.store.leases import Census
from infra.store.outbox import CLOCKS, Clock
from workers.services import send_deadline

log = structlog.get_logger("sabot.workers.director")

BUDGET = 2.0  # seconds spent on one tournament before looking at the others
IDLE = 0.2  # seconds to sleep when no tournament moved
BACKOFF_MAX = 30.0  # seconds at most between two tries of a tournament whose step fails
RENEW = 1.0  # seconds between two counts (and renewals of the leases) within a turn
LOOK_AGAIN = 10.0  # seconds between two reads of a tournament another director holds
MARK_BATCH = 64  # commands whose effects sent are marked in one transaction (and each turn's)


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


def turn(director: Director, finished: set[uuid.UUID], failures: Failures,
         looked: Looked | None = None) -> bool:
    """One look at every tournament not known finished, stepping this process's share of
    them (`infra.store.leases.Census`); whether any moved."""
    census = director.leases.census(director.holder, time.time(), director.lease_seconds)
    running = [t for t in director.tournaments.ids() if t not in finished]
    if looked is not None:
        looked.finished_elsewhere(director, census, running, finished)
        running = [t for t in running if t not in finished]
    mine = share(director, census, running)
    moved = False
    counted = time.monotonic()
    for tournament_id in list(mine):
        if time.monotonic() - counted > RENEW:  # count again: a director may have started
            census = director.leases.census(director.holder, time.time(),
                                            director.lease_seconds)
            mine = share(director, census, running)
            counted = time.monotonic()
        if tournament_id not in mine or failures.waiting(tournament_id):
            continue
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
    director.service.effects.flush()
    return moved


def share(director: Director, census: Census, running: list[uuid.UUID]) -> list[uuid.UUID]:
    """The tournaments this director directs now, the free ones of its share taken at once
    (the others count them from then on); what is over its share is given back, so that a
    director that started takes it between two steps."""
    mine, surplus = census.share(running, director.holder)
    for tournament_id in surplus:
        director.leases.release(tournament_id, director.holder)
    return [t for t in mine if str(t) in census.owners or director.leases.acquire(
        t, director.holder, time.time(), director.lease_seconds) is not None]


class Looked:
    """When this process last read each tournament another director holds, to learn those
    that finished (the director that finished one keeps its lease): a finished tournament
    counted as running would make every share too large. Each is read at most every
    `LOOK_AGAIN` seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.at: dict[uuid.UUID, float] = {}

    def finished_elsewhere(self, director: Director, census: Census,
                           running: list[uuid.UUID], finished: set[uuid.UUID]) -> None:
        now = self.clock()
        for tournament_id in running:
            owner = census.owners.get(str(tournament_id))
            if owner in (None, director.holder) or now < self.at.get(tournament_id,
                                                                    -LOOK_AGAIN) + LOOK_AGAIN:
                continue
            self.at[tournament_id] = now
            state = director.tournaments.state(tournament_id)
            if state.cancelled or state.phase is TournamentPhase.FINISHED:
                finished.add(tournament_id)
                self.at.pop(tournament_id)


def director_deadlines(director: Director, send: Callable[[Clock], object]) -> None:
    """Send (`send`) the deadlines the director's commands start, but at the tables the house
    deals, whose clocks the director keeps: those are marked sent, and expire with the outbox."""
    automatic: dict[uuid.UUID, bool] = {}  # a table's dealing never changes

    def awaited(deadline: Clock) -> None:
        table_id = deadline.table_id
        if table_id not in automatic:
            table = director.service.table(table_id)
            automatic[table_id] = table.tournament is not None and not director.tournaments.state(
                Tournament.create_id(table.tournament)).croupier_deals(table.name)
        if not automatic[table_id]:
            send(deadline)

    for clock in CLOCKS:
        director.service.effects.on(clock, awaited)


def duty(database_url: str, stop: threading.Event) -> None:
    service = TableService(url=database_url)
    service.effects.mark_batch = MARK_BATCH
    director = Director(service, holder=holder_name())
    director_deadlines(director, send_deadline)
    finished: set[uuid.UUID] = set()
    failures = Failures()
    looked = Looked()
    log.info("director started", holder=director.holder)
    try:
        while not stop.is_set():
            try:
                moved = turn(director, finished, failures, looked)
            except Exception:  # the store unreachable: try again later
                log.exception("director could not read the tournaments")
                moved = False
            if not moved:
                stop.wait(IDLE)
    finally:
        try:
            service.effects.flush()
        finally:
            service.close()  # its last checkpoint
        log.info("director stopped", holder=director.holder)


STOP_SECONDS = 30.0
"""How long a stopping worker waits for its director's turn to end and its tail to be anchored."""


def start(database_url: str) -> tuple[threading.Event, threading.Thread]:
    """Run the duty in a daemon thread; set the event returned to stop it."""
    stop = threading.Event()
    thread = threading.Thread(target=duty, args=(database_url, stop), name="sabot-director",
                              daemon=True)
    thread.start()
    return stop, thread


def start_when_ready(database_url: str) -> None:
    """Start the duty once the celery worker is up (its logging configured), and stop it when
    the worker shuts down (SIGTERM, SIGINT: celery's warm shutdown): its turn ends, its
    effects are marked and its store closed, so the last checkpoint covers every event it
    wrote. Left to run as a daemon thread, it dealt on after the exit's checkpoint, leaving
    an unanchored tail (issue 36: 720 events on PostgreSQL with Redis)."""
    running: list[tuple[threading.Event, threading.Thread]] = []

    def ready(**_: Any) -> None:
        running.append(start(database_url))

    def shutdown(**_sent: Any) -> None:
        for stop, _ in running:
            stop.set()
        for _, thread in running:
            thread.join(STOP_SECONDS)
            if thread.is_alive():
                log.error("director still dealing after shutdown: its last events wait for "
                          "the next checkpoint", waited=STOP_SECONDS)

    signals.worker_ready.connect(ready, weak=False)
    signals.worker_shutdown.connect(shutdown, weak=False)
