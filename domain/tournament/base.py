"""The state of a tournament and what reading it says: the one set of fields every part of
the tournament's steps (`domain.tournament.seating`, `balancing`, `stages`, `prizes`) works
on, the players, the tables, the stage and round, the phase guard.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from domain.errors import NotFound, OutOfTurn
from domain.table.base import TableBase
from domain.table.room import Room, round_over
from domain.tournament.entrants import Entrant, Exit, Status
from domain.tournament.formats import Limits, Stage
from domain.tournament.records import (
    Announcement,
    Break,
    Clock,
    Draw,
    Intervention,
    Pause,
    Phase,
    PlayOff,
    PlayOffResult,
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
    round_coups: dict[str, int] = msgspec.field(default_factory=dict)  # at the first step
    clock: Clock | None = None  # the round's clock
    break_clock: Clock | None = None  # the break's under way (or just over) between rounds
    break_seconds: float = 0.0  # its length
    break_round: int = 0  # the round the last break followed
    paused: bool = False
    pauses: list[Pause] = msgspec.field(default_factory=list)  # every pause, oldest first
    playoff: PlayOff | None = None  # a tie on the line waiting for its extra coup
    playoff_chips: dict[str, int] = msgspec.field(default_factory=dict)
    playoffs: int = 0  # play-off coups played for the cut waiting
    playoff_idle: list[str] = msgspec.field(default_factory=list)  # no bet in their last one
    playoff_results: list[PlayOffResult] = msgspec.field(default_factory=list)  # oldest first
    coups_bet: dict[str, int] = msgspec.field(default_factory=dict)  # at the last round's end
    short: list[str] = msgspec.field(default_factory=list)  # of `min_bets` since the last cut
    chips_added: int = 0  # chips put in by resets and corrections, less those taken out
    epoch: int = 0  # the director holding the tournament's lease
    interventions: list[Intervention] = msgspec.field(default_factory=list)
    secret_bets: list[SecretBet] = msgspec.field(default_factory=list)
    cancelled: bool = False  # called off before its start
    archived: bool = False  # filed away after its finish
    announcements: list[Announcement] = msgspec.field(default_factory=list)  # oldest first

    # --- reading --------------------------------------------------------------------

    def entrant(self, player: str) -> Entrant:
        entrant = self.entrants.get(player)
        if entrant is None:
            raise NotFound(f"{player} is not in tournament {self.name}", rule="unknown-player")
        return entrant

    def table_name(self, number: int) -> str:
        return f"{self.name}-table-{number}"

    def croupier_deals(self, table: str) -> bool:
        """Whether the tournament's `table` (its name) is dealt by a croupier
        (`TournamentSettings.croupier_deals`); a table the draw did not number (a play-off's)
        the house deals."""
        number = table.removeprefix(self.table_name(0)[:-1])
        return number != table and number.isdigit() and self.settings.croupier_deals(
            int(number))

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

    def room(self, table: str | None = None, closed: int = 0) -> Room:
        """What its tables decide a command with: paused or not, who of them are people, the
        people's bet clock, whether the croupier may act for the bots, and the last coup of
        the round at `table` (which has closed `closed` coups)."""
        return Room(paused=self.paused, people=frozenset(
            e.player for e in self.entrants.values() if not e.bot),
            people_bet_seconds=self.settings.people_bet_seconds,
            croupier_plays_bots=self.settings.croupier_plays_bots,
            last_coup=None if table is None else self.last_coup_at(table, closed),
            finished=self.phase is Phase.FINISHED)

    def last_coup_at(self, table: str, closed: int) -> int | None:
        """The last coup the round under way has at one of the tournament's tables (0: none,
        between rounds and after the last); None before the first round (no round's end
        moves anyone yet) and at a table it does not play rounds at (a play-off's). A round of
        so many coups ends that many coups after the table's coups at its first step; a round
        also of so many minutes has only the coup of the step under way, since the director
        ends it at a step's end once its time is up."""
        if table not in self.tables or self.phase is Phase.SEATED:
            return None
        step = self.step
        if self.phase is not Phase.RUNNING:
            return 0
        coups = self.current.coups
        if coups is None or self.current.minutes is not None:  # time may be up at a step's end
            return step.coups[table] + 1 if step is not None and table in step.coups else 0
        if table in self.round_coups:
            return self.round_coups[table] + coups
        if step is not None and table in step.coups:  # opened since the round's first step
            return step.coups[table] + coups - self.steps + 1
        return closed + coups - self.steps

    def played(self, since: float, now: float) -> float:
        """Seconds of play from `since` to `now`: a pause stops every clock of the room (a
        turn to bet, a decision, a bot's think time), which resumes with the time it had; a
        clock started before the round under way (a table done with the last round's coups,
        its next turn waiting through the break and the other tables) starts with the round."""
        if self.clock is not None:
            since = max(since, self.clock.started_at)
        return max(0.0, now - since - sum(p.within(since, now) for p in self.pauses))

    def clock_waits(self, table: str, state: TableBase) -> bool:
        """Whether a person's clock at `table` (as it stands, `state`) waits for the next
        round: the table has played the round's last coup, so what it awaits is refused
        until then (`round-over`), and the tournament plays on (`played` then counts from
        the round's start)."""
        return self.phase in (Phase.RUNNING, Phase.BETWEEN_ROUNDS) and round_over(
            state, self.room(table, state.coup_number))

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
