"""The measured windows of a topology run: what is marked when a window opens and closes (the
store's tally, each child's CPU and RSS, the benchmark process's own CPU), PostgreSQL's
statements sampled from the first window's opening to the end, and the two ways of running
windows: one window of paced load, or the capacity run's steps.

The capacity run adds closed-loop clients (each plays one table, no think time) step by step,
a window each step, until the commands they have applied a second stops growing (a step below
`GROWTH` times the best so far) or the steps run out; its figures are its best step's. The
clients' rate is the criterion, not the installation's: the bot tournaments' directors share
the machine, and an HTTP command costs more than a director's, so the installation's
commands/s falls as the clients take the cores from the bots.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from tests.bench.harness import QUICK, sized
from tests.bench.pg_profile import Sampler, scans
from tests.bench.topology import OWN, Child, Tally, cpu_seconds, server_cpu, tally
from tests.bench.topology_clients import Load, Sample

STEPS = (2, 8) if QUICK else (4, 8, 16, 32, 64)  # closed-loop clients a step, a table each
STEP_SECONDS = sized(15, 5)
SETTLE = sized(3, 1)  # seconds the clients added by a step play before its window
GROWTH = 1.05


@dataclass(frozen=True)
class Mark:
    at: float
    tally: Tally
    usage: dict[str, tuple[float, int]]  # each child's CPU seconds and RSS
    client: float  # the benchmark process's CPU seconds


@dataclass(frozen=True)
class Window:
    first: Mark
    last: Mark

    @property
    def elapsed(self) -> float:
        return self.last.at - self.first.at

    @property
    def commands(self) -> int:
        return self.last.tally.commands - self.first.tally.commands

    def cpu(self) -> dict[str, float]:
        """CPU seconds in the window: each child, the benchmark's client process, and the
        installation's PostgreSQL backends."""
        return {**{name: self.last.usage[name][0] - self.first.usage[name][0]
                   for name in self.last.usage},
                "client": self.last.client - self.first.client,
                "postgres": server_cpu(self.first.tally.backends, self.last.tally.backends)}


@dataclass(frozen=True)
class Step:
    """A window at `clients` clients (a paced run's: its human tables), what they saw."""

    clients: int
    window: Window
    sample: Sample

    @property
    def rate(self) -> float:
        """The installation's commands a second: the clients' and the directors'."""
        return self.window.commands / self.window.elapsed

    @property
    def served(self) -> float:
        """The commands the clients had applied a second."""
        return sum(self.sample.by_replica.values()) / self.window.elapsed


class Meter:
    """Marks a run's windows over its children and database."""

    def __init__(self, database: str, children: list[Child]) -> None:
        self.database, self.children = database, children
        self.sampler = Sampler(database, OWN)
        self.scans: list[dict[str, dict[str, int]]] = []
        self.opened: Mark | None = None

    def mark(self) -> Mark:
        for child in self.children:
            child.alive()
        return Mark(time.perf_counter(), tally(self.database),
                    {c.name: (c.cpu(), c.rss()) for c in self.children},
                    sum(cpu_seconds([os.getpid()]).values()))

    def open(self) -> None:
        if not self.scans:
            self.scans.append(scans(self.database))
            self.sampler.start()
        self.opened = self.mark()

    def close(self) -> Window:
        assert self.opened is not None
        return Window(self.opened, self.mark())

    def finish(self) -> None:
        """The end of the run's last window: PostgreSQL's sampling and counters stop."""
        self.sampler.stop()
        self.scans.append(scans(self.database))


async def measure(clients: int, meter: Meter, load: Load, seconds: float) -> Step:
    meter.open()
    load.measuring = True
    await asyncio.sleep(seconds)
    load.measuring = False
    return Step(clients, meter.close(), load.take())


async def saturate(add_clients: Callable[[int], None], meter: Meter, load: Load) -> list[Step]:
    """The capacity run's steps; the first step's clients are already playing."""
    steps: list[Step] = []
    for clients in STEPS:
        if steps:
            add_clients(clients)
            await asyncio.sleep(SETTLE)
        steps.append(await measure(clients, meter, load, STEP_SECONDS))
        if len(steps) > 1 and steps[-1].served < GROWTH * max(s.served for s in steps[:-1]):
            break
    return steps


def best(steps: list[Step]) -> Step:
    return max(steps, key=lambda step: step.served)
