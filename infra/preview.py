"""A format's preview: play it K times with house bots before announcing it.

Each run is a whole tournament of `players` bots on a throwaway store (a SQLite file in a
temporary folder, deleted after), directed by the real director on a simulated clock that
moves `pace` seconds a coup, so rounds by minutes end as they would at the tables. The
preview reports the expected duration (coups, and minutes at that pace), the spread of the
stacks at each round's end (where the cuts are made), and how often a tie on a cut's line
needed a play-off.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec

from domain.tournament import TournamentSettings
from domain.tournament_aggregate import Tournament
from infra.service import TableService
from infra.tournaments import Director

PACE = 45  # seconds a coup takes at a table, betting and dealing included


class Spread(msgspec.Struct, frozen=True, kw_only=True):
    """The stacks of the players in play at the end of round `round` (before its cut)."""

    stage: str
    round: int
    players: int
    smallest: int
    median: int
    largest: int


class Run(msgspec.Struct, frozen=True, kw_only=True):
    coups: int  # steps: each a coup at every table
    minutes: float
    rounds: int
    playoffs: int
    spreads: list[Spread]


class Range(msgspec.Struct, frozen=True):
    mean: float
    smallest: float
    largest: float

    @classmethod
    def of(cls, values: list[float]) -> Range:
        return cls(round(statistics.fmean(values), 1), min(values), max(values))


class Preview(msgspec.Struct, frozen=True, kw_only=True):
    players: int
    runs: int
    pace_seconds: int
    coups: Range
    minutes: Range
    rounds: Range
    runs_with_playoff: int  # runs where a tie on a cut's line needed a play-off
    playoffs: int  # play-off coups over every run
    spreads: list[Spread]  # the median run's stacks at each round's end
    each: list[Run]


def play_once(settings: TournamentSettings, players: int, seed: bytes, pace: int) -> Run:
    with tempfile.TemporaryDirectory(prefix="sabot-preview-") as folder:
        service = TableService(url=f"sqlite:///{Path(folder) / 'preview.db'}",
                               secret_key=bytes(32))
        try:
            now = [0.0]
            director = Director(service, clock=lambda: now[0])
            tournaments = director.tournaments
            tournament_id = tournaments.create("preview", settings, seed=seed,
                                               command_id="create")
            for n in range(players):
                tournaments.register(tournament_id, f"bot-{n + 1:03d}", bot=True,
                                     command_id=f"register-{n}")
            tournaments.start(tournament_id, command_id="start")
            steps = [0]

            def tick() -> None:
                state = tournaments.state(tournament_id)
                steps[0] += state.step is not None and state.steps != steps[0]
                now[0] = steps[0] * float(pace)

            director.run(tournament_id, on_tick=tick, idle=0.0)
            return summary(service.events_of(tournament_id), pace)
        finally:
            service.close()


def summary(events: list[Tournament.Event], pace: int) -> Run:
    stage, steps, playoffs = "", 0, 0
    spreads: list[Spread] = []
    for event in events:
        match event:
            case Tournament.StageStarted(name=name):
                stage = name
            case Tournament.StepStarted():
                steps += 1
            case Tournament.PlayOffPlayed():
                playoffs += 1
            case Tournament.RoundEnded(round=number, chips=chips) if chips:
                stacks = sorted(chips.values())
                spreads.append(Spread(stage=stage, round=number, players=len(stacks),
                                      smallest=stacks[0], median=int(statistics.median(stacks)),
                                      largest=stacks[-1]))
    return Run(coups=steps, minutes=round(steps * pace / 60, 1),
               rounds=len(spreads), playoffs=playoffs, spreads=spreads)


def preview(settings: TournamentSettings, players: int, runs: int, *, seed: bytes = b"",
            pace: int = PACE, on_run: Callable[[Run], object] = lambda _: None) -> Preview:
    """Play the format `runs` times with `players` bots (run i from `seed` and i)."""
    done = []
    for n in range(runs):
        run = play_once(settings.check(), players, seed + n.to_bytes(4, "big"), pace)
        done.append(run)
        on_run(run)
    median = sorted(done, key=lambda r: r.coups)[len(done) // 2]
    return Preview(players=players, runs=runs, pace_seconds=pace,
                   coups=Range.of([r.coups for r in done]),
                   minutes=Range.of([r.minutes for r in done]),
                   rounds=Range.of([r.rounds for r in done]),
                   runs_with_playoff=sum(1 for r in done if r.playoffs),
                   playoffs=sum(r.playoffs for r in done), spreads=median.spreads, each=done)
