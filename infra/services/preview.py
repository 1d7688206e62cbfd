"""A format's preview: play it K times with house bots before announcing it.

Each run is a whole tournament of `players` bots on the pure engine: the Tournament and its Tables
held in memory (`infra.services.memory`, no database, no file), directed by the director's own
decisions (`infra.services.direction.direct`) on a `MemoryDesk`, the bots dealing every table. The
master seed of run i is the SHA-256 of the preview's seed and i; the seating and every shoe
derive from it as in a real tournament (so a run is the tournament `--seed` would play). The
clock moves each step by `pace` seconds of dealing (the bets made within it) and, where the
stage bets in turn against a bet clock, by every turn of the fullest table's betting run out,
so rounds by minutes end as they would at the tables. The preview reports the expected
duration (coups; minutes at that clock, and at the dealing pace alone), the spread of the
stacks at each round's end (where the cuts are made), how often a tie on a cut's line
needed a play-off and what settled them, and says what the format makes sitting out cost
(`sitting_out`, `min_bets`) and how it settles a tie (`rules`).
"""

from __future__ import annotations

import hashlib
import statistics
import uuid
from collections import Counter
from collections.abc import Callable, Iterable

import msgspec

from domain.actors import ORGANISER
from domain.game.settings import BettingOrder, SittingOut
from domain.game.shoe import commitment
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.state import TableState
from domain.tournament import commands as tc
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import TieBreak
from domain.tournament.settings import TournamentSettings
from domain.tournament.stages import MAX_PLAYOFFS
from domain.tournament.state import TournamentState
from domain.tournament.table_orders import table_orders
from infra.services.autoplay import play_coups
from infra.services.direction import (
    DIRECTOR,
    Tick,
    direct,
    secret_bet_on,
    secret_bet_reveal,
    send_order,
)
from infra.services.memory import MemoryStore
from infra.services.tables import seating_seed_from, seeds_from

PACE = 45  # seconds a coup's dealing takes at a table (its betting too, without a bet clock)


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
    minutes: float  # at the dealing pace, every turn of a bet clock run out
    minutes_dealing: float  # at the dealing pace alone: every player betting at once
    rounds: int
    playoffs: int
    spreads: list[Spread]
    settled: dict[str, int] = msgspec.field(default_factory=dict)  # play-offs by what settled


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
    minutes_dealing: Range
    rounds: Range
    runs_with_playoff: int  # runs where a tie on a cut's line needed a play-off
    playoffs: int  # play-off coups over every run
    spreads: list[Spread]  # the median run's stacks at each round's end
    each: list[Run]
    settled: dict[str, int] = msgspec.field(default_factory=dict)  # play-offs by what settled
    rules: list[str] = msgspec.field(default_factory=list)  # `rules`: sitting out, ties


def rules(settings: TournamentSettings) -> list[str]:
    """What the format makes sitting out cost and how it settles a tie on a cut's line."""
    said = ["a turn to bet the bet clock passes costs its player the round's minimum stake, "
            "taken by the house" if settings.sitting_out is SittingOut.MIN_STAKE
            else "a turn to bet the bet clock passes costs nothing"]
    if settings.min_bets:
        said.append(f"a player with fewer than {settings.min_bets} bets (coups with chips at "
                    "stake) in a round since the last cut ranks after everyone who made them")
    said.append({
        TieBreak.SHARE: "a tie on a cut's line: every tied player goes on",
        TieBreak.DRAW_ORDER: "a tie on a cut's line: the earlier in the seating draw goes on",
        TieBreak.PLAY_OFF: "a tie on a cut's line is played off by an extra coup: who bets in "
                           "it goes first, then its chips; tied after "
                           f"{MAX_PLAYOFFS} play-offs, the seating draw's order"}[
        settings.tie_break])
    return said


class MemoryDesk:
    """The director's `Desk` on a `MemoryStore`: one tournament, its tables dealt by the bots,
    its clock moved by `step_seconds` at every step."""

    epoch = 0  # a single director, never replaced

    def __init__(self, settings: TournamentSettings, seed: bytes, pace: int) -> None:
        self._master = hashlib.sha256(seed).digest()
        self.store = MemoryStore(seeds_from(self._master))
        self.pace, self.seconds = pace, 0
        self._ids: dict[str, uuid.UUID] = {}  # the tables' ids by name (a hash each to make)
        self.tournament = Tournament(name="preview", settings=settings, actor=ORGANISER,
                                     command_id="create", master=commitment(self._master))
        self.tournament_id = self.tournament.id
        self.store.record(self.tournament, "create")

    def now(self) -> float:
        return float(self.seconds)

    def state(self) -> TournamentState:
        return self.tournament.state

    def table_id(self, name: str) -> uuid.UUID:
        table_id = self._ids.get(name)
        if table_id is None:
            table_id = self._ids[name] = Table.create_id(name)
        return table_id

    def tables(self) -> dict[str, TableState]:
        return {name: table for name in self.state().tables
                if (table := self.table(name)) is not None}

    def table(self, name: str) -> TableState | None:
        table_id = self.table_id(name)
        return self.store.state(table_id) if self.store.exists(table_id) else None

    def open_table(self, name: str, command_id: str) -> None:
        state = self.state()
        self.store.open_table(name, state.settings.table_settings(), command_id=command_id,
                              tournament=state.name, actor=DIRECTOR)

    def execute(self, name: str, command: c.TableCommand) -> None:
        self.store.execute(self.table_id(name), command)

    def do(self, command: tc.TournamentCommand) -> None:
        recorded = self.store.apply_once(self.tournament_id, "tournament", command.command_id,
                                         lambda t: t.execute(command, self.seating_seed))
        first = recorded.version - len(recorded.events)
        for event in self.store.events_of(self.tournament_id, gt=first, lte=recorded.version):
            if isinstance(event, Tournament.StepStarted):
                self.seconds += step_seconds(self.state(), self.tables().values(), self.pace)
            if isinstance(event, Tournament.BreakStarted):
                self.seconds += round(event.seconds)
            for order in table_orders(self.tournament, event):
                send_order(self.store, self.tournament, order)

    def deal(self, name: str, until: int) -> bool:
        self.play(name, until)
        return True

    def play(self, name: str, until: int) -> bool:
        play_coups(self.store, self.table_id(name), self._master, "bots", until)
        return True

    def master(self) -> bytes:
        return self._master

    def seating_seed(self) -> bytes:
        return seating_seed_from(self._master)

    def place_secret_bet(self, player: str, commitment: str, command_id: str) -> None:
        table = self.state().entrant(player).table or ""
        self.do(secret_bet_on(self.store.state(self.table_id(table)), table, player,
                              commitment, actor=player, command_id=command_id))

    def reveal_secret_bet(self, player: str, spot: str, amount: int, nonce: str,
                          command_id: str) -> None:
        bet = self.state().secret_bet_of(player)
        self.do(secret_bet_reveal(bet, self.store.events_of(self.table_id(bet.table)), spot,
                                  amount, nonce, actor=player, command_id=command_id))

    def round_ended(self) -> None:
        """Nothing to checkpoint: nothing is kept."""


def play_once(settings: TournamentSettings, players: int, seed: bytes, pace: int) -> Run:
    """One whole tournament of `players` house bots, in memory, summarised."""
    desk = MemoryDesk(settings, seed, pace)
    for n in range(players):
        desk.do(tc.RegisterPlayer(player=f"bot-{n + 1:03d}", bot=True, actor=ORGANISER,
                                  command_id=f"register-{n}"))
    desk.do(tc.DrawSeating(actor=ORGANISER, command_id="start"))
    while (tick := direct(desk, desk.now())) is Tick.ACTED:
        continue
    assert tick is Tick.FINISHED  # nothing makes a preview's tournament wait
    return summary(desk.store.events_of(desk.tournament_id), pace, desk.seconds)


def step_seconds(state: TournamentState, tables: Iterable[TableState], pace: int) -> int:
    """How long a step of the round under way takes at the tables: the dealing pace and,
    where the stage bets in turn against a clock, every turn of the fullest table's betting
    run out (the longest a coup may take)."""
    clock = state.current.bet_seconds or 0
    if state.settings.betting_order is not BettingOrder.ROTATING or not clock:
        return pace
    return pace + clock * max((len(table.players()) for table in tables), default=0)


def summary(events: list[Tournament.Event], pace: int, seconds: float) -> Run:
    """A run from its tournament's events; `seconds`: the time its steps took."""
    stage, steps, playoffs = "", 0, 0
    spreads: list[Spread] = []
    settled: Counter[str] = Counter()
    for event in events:
        match event:
            case Tournament.StageStarted(name=name):
                stage = name
            case Tournament.StepStarted():
                steps += 1
            case Tournament.PlayOffPlayed(decided_by=decided_by):
                playoffs += 1
                settled[str(decided_by)] += 1
            case Tournament.RoundEnded(round=number, chips=chips) if chips:
                stacks = sorted(chips.values())
                spreads.append(Spread(stage=stage, round=number, players=len(stacks),
                                      smallest=stacks[0], median=int(statistics.median(stacks)),
                                      largest=stacks[-1]))
    return Run(coups=steps, minutes=round(seconds / 60, 1),
               minutes_dealing=round(steps * pace / 60, 1),
               rounds=len(spreads), playoffs=playoffs, spreads=spreads,
               settled=dict(settled))


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
                   minutes_dealing=Range.of([r.minutes_dealing for r in done]),
                   rounds=Range.of([r.rounds for r in done]),
                   runs_with_playoff=sum(1 for r in done if r.playoffs),
                   playoffs=sum(r.playoffs for r in done), spreads=median.spreads, each=done,
                   settled=dict(sum((Counter(r.settled) for r in done), Counter())),
                   rules=rules(settings))
