"""The state of a tournament and what reading it says: the one set of fields every part of
the tournament's steps (`domain.tournament.seating`, `balancing`, `stages`, `prizes`) works
on, the players, the tables, the stage and round, the phase guard.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from domain.errors import NotFound, OutOfTurn
from domain.table.room import Room
from domain.tournament.entrants import Entrant, Exit, Status
from domain.tournament.formats import Limits, Stage
from domain.tournament.records import (
    Break,
    Clock,
    Draw,
    Intervention,
    Phase,
    PlayOff,
    SecretBet,
    Step,
)
from domain.tournament.settings import TournamentSettings


class TournamentStatus(StrEnum):
    """What the organiser's screen says of the tournament."""

    REGISTERING = "registering"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class TournamentBase(msgspec.Struct, kw_only=True):
    """A tournament's fields, and what they say."""

    name: str
    settings: TournamentSettings
    phase: Phase = Phase.REGISTRATION
    entrants: dict[str, Entrant] = msgspec.field(default_factory=dict)  # registration order
    tables: list[str] = msgspec.field(default_factory=list)  # open tables, by number
    tables_opened: int = 0
    seating: Draw | None = None
    breaks: list[Break] = msgspec.field(default_factory=list)
    round: int = 0
    registration_open: bool = True
    exits: list[Exit] = msgspec.field(default_factory=list)  # out, not yet placed; oldest first
    bottom: int = 0  # the worst position not yet given, once registration has closed
    seats_given: int = 0
    seed: str = ""  # revealed at the finish
    stage: int = 0  # the stage being played (an index into the plan)
    stage_round: int = 0  # rounds of that stage started so far
    steps: int = 0  # steps of the round started so far
    step: Step | None = None  # the step under way
    clock: Clock | None = None  # the round's clock
    paused: bool = False
    playoff: PlayOff | None = None  # a tie on the line waiting for its extra coup
    playoff_chips: dict[str, int] = msgspec.field(default_factory=dict)
    playoffs: int = 0  # play-off coups played for the cut waiting
    chips_added: int = 0  # chips put in by resets and corrections, less those taken out
    epoch: int = 0  # the director holding the tournament's lease
    interventions: list[Intervention] = msgspec.field(default_factory=list)
    secret_bets: list[SecretBet] = msgspec.field(default_factory=list)
    cancelled: bool = False  # called off before its start
    archived: bool = False  # filed away after its finish

    # --- reading --------------------------------------------------------------------

    def entrant(self, player: str) -> Entrant:
        entrant = self.entrants.get(player)
        if entrant is None:
            raise NotFound(f"{player} is not in tournament {self.name}", rule="unknown-player")
        return entrant

    def table_name(self, number: int) -> str:
        return f"{self.name}-table-{number}"

    def in_play(self) -> list[str]:
        return [e.player for e in self.entrants.values() if e.status is Status.SEATED]

    def seated_at(self, table: str) -> list[Entrant]:
        """The players at a table, in seat order."""
        return sorted((e for e in self.entrants.values()
                       if e.status is Status.SEATED and e.table == table),
                      key=lambda e: e.seat or 0)

    def table_sizes(self) -> dict[str, int]:
        """Players at each open table."""
        return {table: len(self.seated_at(table)) for table in self.tables}

    @property
    def entries(self) -> int:
        """Buy-ins so far: one per registration and re-entry."""
        return sum(e.entries for e in self.entrants.values())

    @property
    def pool(self) -> int:
        if self.settings.fixed_prizes:
            return sum(self.settings.fixed_prizes)
        return self.entries * self.settings.buy_in

    @property
    def chips_issued(self) -> int:
        return self.entries * self.settings.starting_chips + self.chips_added

    @property
    def current(self) -> Stage:
        """The stage being played (or next to be played)."""
        return self.settings.plan()[self.stage]

    @property
    def last_stage(self) -> bool:
        return self.stage == len(self.settings.plan()) - 1

    @property
    def limits(self) -> Limits:
        """The betting limits of the round being played (or of the next one)."""
        return self.current.limits_for(max(1, self.stage_round))

    @property
    def listed(self) -> bool:
        """In the lobby and the listings: neither cancelled nor archived."""
        return not (self.cancelled or self.archived)

    @property
    def status(self) -> TournamentStatus:
        if self.cancelled:
            return TournamentStatus.CANCELLED
        if self.phase is Phase.FINISHED:
            return TournamentStatus.FINISHED
        if self.phase is Phase.REGISTRATION:
            return TournamentStatus.REGISTERING
        return TournamentStatus.PAUSED if self.paused else TournamentStatus.RUNNING


    @property
    def final_table(self) -> bool:
        """One table left, and nobody can join any more."""
        return (not self.registration_open and len(self.tables) == 1
                and self.phase is not Phase.FINISHED)

    @property
    def decided(self) -> bool:
        """Every position is known but the sole survivor's, who has won: time for the prizes."""
        return (self.phase not in (Phase.REGISTRATION, Phase.FINISHED)
                and not self.registration_open and not self.exits and len(self.in_play()) <= 1)

    def room(self) -> Room:
        """What its tables decide a command with: paused or not, who of them are people."""
        return Room(paused=self.paused, people=frozenset(
            e.player for e in self.entrants.values() if not e.bot))

    def require(self, *phases: Phase, doing: str) -> None:
        if self.cancelled:
            raise OutOfTurn(f"cannot {doing}: the tournament was cancelled",
                            rule="tournament-cancelled")
        if self.phase not in phases:
            wanted = " or ".join(p.value for p in phases)
            raise OutOfTurn(f"cannot {doing} now: the tournament is at {self.phase.value}, "
                            f"not {wanted}", rule="out-of-turn")

    def close_registration(self) -> None:
        self.registration_open = False
        self.bottom = len(self.entrants)
