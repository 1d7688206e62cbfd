"""Keeping the views caught up outside the request path: one thread that runs them to the head.

A `Follower` runs every view (`Runner.catch_up_together`, shared batches) whenever the store's
head moved: at once when a commit is published (`infra.store.notices.COMMITS`: this process's,
and on PostgreSQL any process's, through LISTEN/NOTIFY) or `wake()` is called, and every
`interval` seconds (`INTERVAL` by default) as the fallback of a notice lost. Reads do not run
the views: they serve the tables as the follower left them, with the position they are at
(`api.view_reader`). `sabot worker` starts one (unless `--no-views` or `--pool prefork`), so
`sabot serve` with its embedded worker shows fresh views; `sabot projections run --follow`
runs one in the foreground. Several followers (two workers) share the work safely: a batch
locks the views' tracking rows, so they take turns and no event is applied twice.

An error of the store (the database away) is logged and tried again at the next look; a view
stopped by an event it cannot apply stays stopped (recorded, `/ready` names it) while the
others go on.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from infra.store import notices
from infra.store.database import Database
from projections.runner import Runner
from projections.view import ProjectionFailed

INTERVAL = 0.25  # seconds between two looks at the store's head when no commit was heard
# (each batch writes every view's notes of each table it touched: a look every 0.1 s, twice
# that with two workers, wrote them every 7 events in the topology benchmark, 0.25 s every 12)

log = logging.getLogger("sabot.projections")

Ran = Callable[[dict[str, int], dict[str, ProjectionFailed]], None]
"""Called after each run with the events applied to each view and the views stopped."""


class Follower:
    """A thread that keeps `names` (every view of `runner`) caught up with the store."""

    def __init__(self, runner: Runner, names: Sequence[str] | None = None, *,
                 interval: float = INTERVAL, ran: Ran | None = None) -> None:
        self.runner = runner
        self.names = list(names or runner.views)
        self.interval = interval
        self.ran = ran
        self._woken = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Follower:
        self._thread = threading.Thread(target=self.run, name="sabot-views", daemon=True)
        self._thread.start()
        return self

    def _homes(self) -> list[Database]:
        return list({id(db): db for db in self.runner.homes.values()}.values())

    def wake(self) -> None:
        """Look at the head now rather than at the end of the interval."""
        self._woken.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._woken.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def run(self) -> None:
        """Run until `stop()`: the views once each time the heads moved."""
        seen: tuple[int, ...] | None = None
        commits = [notices.positions(database, notices.COMMITS) for database in self._homes()]
        for published in commits:  # woken by each commit, this process's or another's
            published.subscribe(self.wake)
        try:
            while not self._stopping.is_set():
                try:
                    seen = self.step(seen)
                except Exception:  # the store away, a connection lost: the next look tries
                    if self._stopping.is_set():
                        break  # its store closed under a look that outlived stop()'s wait
                    log.exception("the views could not be run; trying again")
                    seen = None
                self._woken.wait(self.interval)
                self._woken.clear()
        finally:
            for published in commits:
                published.unsubscribe(self.wake)

    def step(self, seen: tuple[int, ...] | None) -> tuple[int, ...]:
        """One look: the views run if the heads are not `seen` (the heads of the last run
        that reached them); the heads this run set out for."""
        heads = self.runner.heads()
        if heads == seen:
            return heads
        applied, failed = self.runner.catch_up_together(self.names)
        if self.ran is not None:
            self.ran(applied, failed)
        return heads if self.runner.at_heads([name for name in self.names
                                              if name not in failed], heads) else ()
