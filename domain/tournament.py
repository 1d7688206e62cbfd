"""A baccara tournament from registration to prizes: the pure state machine.

The steps, in order: players register (and may unregister) until the seating draw; the draw
orders the entrants with a keyed stream from a secret seed whose commitment it records, and
deals them round the tables; rounds of play start and end; the tables report each coup's
bust-outs; after every change the tables are balanced (moves, or a table broken and its
players reseated at random from the same seeded stream); eliminations get finishing positions
from the bottom; when one player is left the prizes are awarded and the seed is revealed, so
that anyone can recompute the draw and every reseating.

Late registration and re-entry stay open through the end of round `late_rounds`. A player who
busts meanwhile is out but not yet placed (a late entrant could still finish below them); the
positions of those bust-outs are given, oldest first, when registration closes.

Every method validates before it changes anything, so a refused step leaves the tournament as
it was; the Tournament aggregate records each step as an event and replays it through these
methods. Chips during play live on the Table aggregates: the tournament records them when a
player is seated, moved, busted or reaches the end of a round.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

import msgspec

from domain.betting_order import BettingOrder
from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.formats import (
    Advance,
    ChipRule,
    Dealing,
    Limits,
    Selection,
    Stage,
    TieBreak,
    check_stages,
    select,
)
from domain.settings import TableSettings, Variant
from domain.shoe import commitment as commitment_of
from domain.shoe import keyed_shuffle

SEATING_V1 = "sabot-seating-v1"
SEATING_ALGORITHM = SEATING_V1  # the algorithm new draws use
BASIS_POINTS = 10_000  # a prize is a share of the pool in basis points: 10 000 is all of it
MAX_SEATS = 14
DRAW_LABEL = "draw"
DISQUALIFIED = 0  # the "coup" of an exit the organiser decided
MAX_PLAYOFFS = 3  # play-offs that tie again before the draw's order settles the tie


class TournamentSettings(msgspec.Struct, frozen=True, kw_only=True):
    """A tournament's format, fixed at creation.

    `stages`: the format's stages (`domain.formats`); none: one stage that plays until one
    player is left, its rounds of `coups_per_round` coups (and `minutes_per_round` minutes,
    whichever ends first) at `min_stake`..`max_stake`, cutting to the `advance` best stacks
    after every round (0: no cut). `prizes`: each finishing position's share of the pool
    (entries times `buy_in`) in basis points, first place first, summing to 10 000; or
    `fixed_prizes`: amounts, the pool being their sum. `late_rounds`: players may register,
    and busted players re-enter, until that round ends (0: until the draw). `reentries`: how
    many times a busted player may buy in again. `tolerance`: the largest difference in
    players between two tables that needs no balancing. `tables`: the tables the draw seats
    the entrants at (at least as many as the seats need). `tie_break`: how a tie on the line
    of a cut is settled. `dealing`: the workers deal every table, or croupiers do.
    """

    variant: Variant
    seats_per_table: int
    starting_chips: int
    min_stake: int
    max_stake: int
    coups_per_round: int
    minutes_per_round: int | None = None
    advance: int = 0
    prizes: tuple[int, ...] = (BASIS_POINTS,)
    buy_in: int = 0
    late_rounds: int = 0
    reentries: int = 0
    tolerance: int = 1
    stages: tuple[Stage, ...] = ()
    fixed_prizes: tuple[int, ...] = ()
    tables: int | None = None
    tie_break: TieBreak = TieBreak.SHARE
    dealing: Dealing = Dealing.AUTOMATIC
    betting_order: BettingOrder = BettingOrder.FREE  # rotating: bets in turn, each coup
    bet_seconds: int = 0  # each turn's time to bet (a stage may set its own); 0: none

    def plan(self) -> tuple[Stage, ...]:
        """The stages, the format's common fields filled in where a stage leaves them out."""
        advance = Advance(overall=self.advance) if self.advance else None
        stages = self.stages or (Stage(name="main", rounds=0, advance=advance),)
        common = (Limits(min_stake=self.min_stake, max_stake=self.max_stake),)
        return tuple(msgspec.structs.replace(
            stage, coups=self.coups_per_round if stage.coups is None else stage.coups,
            minutes=self.minutes_per_round if stage.minutes is None else stage.minutes,
            limits=stage.limits or common,
            bet_seconds=self.bet_seconds if stage.bet_seconds is None else stage.bet_seconds)
            for stage in stages)

    def table_settings(self) -> TableSettings:
        """The settings every table of the tournament is opened with: the first round's
        minimum and the largest maximum of the format, its betting order and first clock."""
        plan = self.plan()
        return TableSettings.default(
            self.variant, min_stake=plan[0].limits[0].min_stake,
            max_stake=max(limits.max_stake for stage in plan for limits in stage.limits),
            betting_order=self.betting_order, bet_seconds=plan[0].bet_seconds or 0)

    def check(self) -> TournamentSettings:
        """Refuse a structure no tournament can be played with."""
        if not 2 <= self.seats_per_table <= MAX_SEATS:
            raise RuleViolation(f"a table seats 2 to {MAX_SEATS} players",
                                rule="tournament-seats")
        if self.starting_chips < 1:
            raise RuleViolation("players start with at least one chip", rule="tournament-chips")
        if not 1 <= self.min_stake <= self.max_stake or self.min_stake > self.starting_chips:
            raise RuleViolation("stakes need 1 <= minimum <= maximum, and a minimum no more than "
                                "the starting chips", rule="tournament-stakes")
        if self.coups_per_round < 1 or (self.minutes_per_round is not None
                                        and self.minutes_per_round < 1):
            raise RuleViolation("a round lasts at least one coup and, if timed, one minute",
                                rule="tournament-round")
        if self.advance < 0:
            raise RuleViolation("the number advancing cannot be negative",
                                rule="tournament-advance")
        if (not self.prizes or any(bp < 1 for bp in self.prizes)
                or sum(self.prizes) != BASIS_POINTS
                or any(a < b for a, b in zip(self.prizes, self.prizes[1:], strict=False))):
            raise RuleViolation("prizes are positive shares in basis points, summing to 10000, "
                                "never more for a lower place", rule="tournament-prizes")
        if self.fixed_prizes and (any(a < 1 for a in self.fixed_prizes) or any(
                a < b for a, b in zip(self.fixed_prizes, self.fixed_prizes[1:], strict=False))):
            raise RuleViolation("fixed prizes are positive amounts, never more for a lower "
                                "place", rule="tournament-prizes")
        if self.tables is not None and self.tables < 1:
            raise RuleViolation("a tournament draws onto one table at least",
                                rule="tournament-tables")
        plan = self.plan()
        check_stages(plan, self.starting_chips, self.seats_per_table, self.tables,
                     betting_order=self.betting_order,
                     house_banks=TableSettings.default(self.variant).house_banks)
        if plan[0].rounds and self.late_rounds > plan[0].rounds:
            raise RuleViolation("late registration closes within the first stage",
                                rule="tournament-late")
        if self.buy_in < 0:
            raise RuleViolation("the buy-in cannot be negative", rule="tournament-buy-in")
        if self.late_rounds < 0 or self.reentries < 0 or (self.reentries
                                                          and not self.late_rounds):
            raise RuleViolation("re-entry needs a late registration window of one round or more",
                                rule="tournament-late")
        if self.tolerance < 1:
            raise RuleViolation("tables may differ by one player at least",
                                rule="tournament-tolerance")
        self.table_settings()
        return self


class TournamentStatus(StrEnum):
    """What the organiser's screen says of the tournament."""

    REGISTERING = "registering"
    RUNNING = "running"
    PAUSED = "paused"
    FINISHED = "finished"


class Phase(StrEnum):
    REGISTRATION = "registration"
    SEATED = "seated"  # drawn, the first round not started
    RUNNING = "running"  # a round is being played
    BETWEEN_ROUNDS = "between-rounds"
    FINISHED = "finished"


class Status(StrEnum):
    REGISTERED = "registered"  # waiting for a seat (the draw, or a late seat)
    SEATED = "seated"
    OUT = "out"  # busted or cut, finishing position not yet given
    PLACED = "placed"


class Entrant(msgspec.Struct, kw_only=True):
    """A player in the tournament. `draw_rank`: the order in which they were first seated (the
    draw's order, then late seats); it breaks ties between players."""

    player: str
    status: Status = Status.REGISTERED
    bot: bool = False  # a house bot, played by the workers
    entries: int = 1
    draw_rank: int | None = None
    table: str | None = None  # where they sit, or sat last
    seat: int | None = None
    chips: int = 0  # as last recorded by the tournament
    moves: int = 0
    position: int | None = None
    tied: int = 0  # how many players share positions position .. position + tied - 1
    prize: int | None = None  # awarded


class Seating(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    table: str
    seat: int


class Draw(msgspec.Struct, kw_only=True):
    """The seating draw as recorded: everything needed to recompute it but the seed."""

    commitment: str
    algorithm: str
    entrants: list[str]  # in registration order, the order the stream shuffles
    tables: int
    seats: list[Seating] = msgspec.field(default_factory=list)  # the draw's seats, in its order


class Bust(msgspec.Struct, frozen=True, kw_only=True):
    """A player out: chips at the start of the coup they busted in, or at the end of the round
    they were cut at. Players out together are ranked by these chips."""

    player: str
    chips: int


class Exit(msgspec.Struct, kw_only=True):
    """Players out at the same moment: one coup's bust-outs at one table, or a round's cut."""

    round: int
    table: str | None  # None: a cut, over every table
    coup: int | None  # None: a cut
    players: list[Bust]


class Placement(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    position: int
    tied: int
    table: str
    coup: int | None
    round: int


class Break(msgspec.Struct, frozen=True, kw_only=True):
    """A table broken: its players in seat order, and the order the seeded stream reseats them."""

    table: str
    players: tuple[str, ...]
    order: tuple[str, ...]


class Move(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    from_table: str
    to_table: str
    seat: int


class Result(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    position: int
    tied: int
    entries: int
    prize: int


class Clock(msgspec.Struct, kw_only=True):
    """A round's clock, from the times the director recorded (seconds since the epoch)."""

    started_at: float
    paused_at: float | None = None
    paused_for: float = 0.0

    def elapsed(self, now: float) -> float:
        """Seconds of play so far: a pause stops the clock."""
        end = self.paused_at if self.paused_at is not None else now
        return max(0.0, end - self.started_at - self.paused_for)


class Step(msgspec.Struct, kw_only=True):
    """A step of a round under way: every table plays one coup. `coups`: each table's coups
    closed at its start (the coup to reach is one more); `chips`: each player's at its start."""

    number: int
    coups: dict[str, int]
    chips: dict[str, int]


class PlayOff(msgspec.Struct, kw_only=True):
    """Players tied on the line of a cut, to play an extra coup for `places` places."""

    round: int
    players: list[str]
    places: int


INTERVENTIONS = ("move", "break-table", "disqualify", "correct-chips", "add-late-player",
                 "penalise")


class Intervention(msgspec.Struct, frozen=True, kw_only=True):
    """An organiser's correction, as recorded: who, why, and the chips before and after."""

    kind: str
    player: str
    reason: str
    actor: str
    chips_before: int
    chips_after: int
    table: str | None = None


SECRET_BET_V1 = "sabot-secret-bet-v1"


def secret_commitment(spot: str, amount: int, nonce: str) -> str:
    """The commitment a secret bet is placed with: SHA-256 (hex) of
    `sabot-secret-bet-v1/<spot>/<amount>/<nonce>`; the nonce (16 random bytes or more, in
    hex) keeps anyone from trying every spot and amount."""
    return hashlib.sha256(f"{SECRET_BET_V1}/{spot}/{amount}/{nonce}".encode()).hexdigest()


class SecretBet(msgspec.Struct, kw_only=True):
    """A bet on a coup that nobody, the croupier and the organiser included, can read before
    its cards are dealt: only its commitment is recorded until the player reveals it."""

    player: str
    table: str
    coup: int
    round: int
    commitment: str
    settled: bool = False


class TournamentState(msgspec.Struct, kw_only=True):
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
    def status(self) -> TournamentStatus:
        if self.phase is Phase.FINISHED:
            return TournamentStatus.FINISHED
        if self.phase is Phase.REGISTRATION:
            return TournamentStatus.REGISTERING
        return TournamentStatus.PAUSED if self.paused else TournamentStatus.RUNNING

    def coups_left(self) -> int | None:
        """Coups (steps) left in the round being played; None between rounds or untimed."""
        coups = self.current.coups
        if self.phase is not Phase.RUNNING or coups is None:
            return None
        return max(0, coups - self.steps)

    def seconds_left(self, now: float) -> float | None:
        minutes = self.current.minutes
        if self.phase is not Phase.RUNNING or minutes is None or self.clock is None:
            return None
        return max(0.0, minutes * 60 - self.clock.elapsed(now))

    def round_over(self, now: float) -> bool:
        """The round being played has played its coups, or its minutes (a step under way
        finishes first)."""
        if self.phase is not Phase.RUNNING or self.step is not None:
            return False
        coups, seconds = self.coups_left(), self.seconds_left(now)
        return coups == 0 or seconds == 0.0

    def next_cut(self) -> int | None:
        """How many players the next cut keeps (None: no cut ahead but the last stage's)."""
        stage = self.current
        if stage.advance is None:
            return 1 if stage.rounds else None
        if stage.rounds == 0:
            return 1 if self.final_table else stage.advance.overall
        return stage.advance.most(len(self.tables))

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

    def require(self, *phases: Phase, doing: str) -> None:
        if self.phase not in phases:
            wanted = " or ".join(p.value for p in phases)
            raise OutOfTurn(f"cannot {doing} now: the tournament is at {self.phase.value}, "
                            f"not {wanted}", rule="out-of-turn")

    # --- registration ---------------------------------------------------------------

    def register(self, player: str, bot: bool = False) -> None:
        if not player or player.startswith("@"):
            raise RuleViolation("a player id is not empty and does not start with @",
                                rule="player-id")
        if player in self.entrants:
            raise RuleViolation(f"{player} is already registered", rule="already-registered")
        self._require_registration_open("register")
        self.entrants[player] = Entrant(player=player, bot=bot)

    def unregister(self, player: str) -> None:
        self.entrant(player)
        self.require(Phase.REGISTRATION, doing="unregister")
        del self.entrants[player]

    def reenter(self, player: str) -> None:
        """A busted player buys in again while late registration is open."""
        entrant = self.entrant(player)
        self._require_registration_open("re-enter")
        if entrant.status is not Status.OUT:
            raise RuleViolation(f"{player} has not busted", rule="not-busted")
        if entrant.entries > self.settings.reentries:
            raise RuleViolation(f"{player} has used the {self.settings.reentries} re-entries "
                                "allowed", rule="no-reentry")
        for exit_ in self.exits:
            exit_.players = [b for b in exit_.players if b.player != player]
        self.exits = [exit_ for exit_ in self.exits if exit_.players]
        entrant.entries += 1
        entrant.status = Status.REGISTERED
        entrant.seat = None

    def _require_registration_open(self, doing: str) -> None:
        if not self.registration_open or self.phase is Phase.FINISHED:
            raise OutOfTurn(f"cannot {doing}: registration has closed",
                            rule="registration-closed")

    def _close_registration(self) -> None:
        self.registration_open = False
        self.bottom = len(self.entrants)

    # --- seats ----------------------------------------------------------------------

    def drawn_seating(self, seed: bytes) -> list[Seating]:
        """The draw a seed gives for the players registered now: the seats, in draw order."""
        self.require(Phase.REGISTRATION, doing="draw the seats")
        entrants = list(self.entrants)
        order = shuffled(seed, self.name, DRAW_LABEL, entrants)
        return deal(order, self.tables_for(len(entrants)), self.table_name)

    def tables_for(self, players: int) -> int:
        """Tables for the draw: as many as the seats need, or the format's `tables` if more
        (two players a table at least)."""
        needed = -(-players // self.settings.seats_per_table)
        return max(needed, min(self.settings.tables or 0, players // 2))

    def draw(self, commitment: str, algorithm: str, entrants: Sequence[str], tables: int) -> None:
        """Record the seating draw; the `PlayerSeatedAt` steps that follow are its seats."""
        self.require(Phase.REGISTRATION, doing="draw the seats")
        if algorithm != SEATING_V1:
            raise RuleViolation(f"unknown seating algorithm {algorithm!r}; known: {SEATING_V1}",
                                rule="seating-algorithm")
        if len(commitment) != 64 or commitment.strip("0123456789abcdef"):
            raise RuleViolation("a commitment is a SHA-256 in lowercase hex",
                                rule="seating-commitment")
        if list(entrants) != list(self.entrants):
            raise RuleViolation("the draw is of the players registered, in registration order",
                                rule="seating-entrants")
        paid = len(self.settings.fixed_prizes or self.settings.prizes)
        if len(entrants) < max(2, paid):
            raise RuleViolation(f"a tournament needs two players, and one for each of the {paid}"
                                " paid places", rule="too-few-players")
        heats = self.settings.plan()[0]
        first = heats.advance
        if heats.rounds and first is not None and first.most(tables) >= len(entrants):
            raise RuleViolation(f"{first.most(tables)} advancing from {len(entrants)} players at "
                                f"{tables} tables is more advancers than players",
                                rule="too-many-advancers")
        if tables != self.tables_for(len(entrants)):
            raise RuleViolation(f"{len(entrants)} players need {self.tables_for(len(entrants))}"
                                " tables", rule="seating-tables")
        self.seating = Draw(commitment=commitment, algorithm=algorithm, entrants=list(entrants),
                         tables=tables)
        for _ in range(tables):
            self._open_table()
        self.phase = Phase.SEATED
        if self.settings.late_rounds == 0:
            self._close_registration()

    def late_seat(self, player: str) -> Seating:
        """Where a late entrant (or a re-entry) sits: at the open table with the fewest players
        (the lowest number on a tie), on its lowest free seat; at a new table when all are full."""
        if self.entrant(player).status is not Status.REGISTERED or self.seating is None:
            raise OutOfTurn(f"{player} is not waiting for a late seat", rule="out-of-turn")
        for table in sorted(self.tables, key=lambda t: len(self.seated_at(t))):
            free = self.free_seats(table)
            if free:
                return Seating(player=player, table=table, seat=free[0])
        return Seating(player=player, table=self.table_name(self.tables_opened + 1), seat=1)

    def seat_at(self, player: str, table: str, seat: int, chips: int) -> None:
        """Seat a registered player with the starting chips (the draw, or a late seat)."""
        entrant = self.entrant(player)
        if self.seating is None:
            raise OutOfTurn("players are seated by the draw", rule="out-of-turn")
        if entrant.status is not Status.REGISTERED:
            raise RuleViolation(f"{player} is not waiting for a seat", rule="already-seated")
        new_table = (table == self.table_name(self.tables_opened + 1)
                     and not any(self.free_seats(t) for t in self.tables))
        if table not in self.tables and not new_table:
            raise NotFound(f"{table} is not an open table of {self.name}", rule="unknown-table")
        if seat not in (self.free_seats(table) if not new_table
                        else range(1, self.settings.seats_per_table + 1)):
            raise RuleViolation(f"seat {seat} of {table} is not free", rule="seat-taken")
        if chips != self.settings.starting_chips:
            raise RuleViolation(f"a player is seated with {self.settings.starting_chips} chips",
                                rule="seat-chips")
        if new_table:
            self._open_table()
        entrant.status, entrant.table, entrant.seat, entrant.chips = (Status.SEATED, table,
                                                                      seat, chips)
        if entrant.draw_rank is None:
            entrant.draw_rank = self.seats_given
            self.seats_given += 1
        if len(self.seating.seats) < len(self.seating.entrants):
            self.seating.seats.append(Seating(player=player, table=table, seat=seat))

    def _open_table(self) -> None:
        self.tables_opened += 1
        self.tables.append(self.table_name(self.tables_opened))

    def free_seats(self, table: str) -> list[int]:
        taken = {e.seat for e in self.seated_at(table)}
        return [s for s in range(1, self.settings.seats_per_table + 1) if s not in taken]

    # --- rounds ---------------------------------------------------------------------

    def ready_for_round(self) -> None:
        """Refuse to start a round now."""
        self.require(Phase.SEATED, Phase.BETWEEN_ROUNDS, doing="start a round")
        self._require_running("start a round")
        if self.decided:
            raise OutOfTurn("the tournament is decided", rule="tournament-decided")
        if self.playoff is not None:
            raise OutOfTurn("a tie at the cut waits for its play-off", rule="play-off-pending")

    def start_round(self, at: float) -> None:
        """Start the next round at `at` (the director's clock, recorded)."""
        self.ready_for_round()
        self.round += 1
        self.stage_round += 1
        self.steps, self.step = 0, None
        self.clock = Clock(started_at=at)
        self.phase = Phase.RUNNING

    def stage_reset(self) -> dict[str, int]:
        """The chips each player in play gains (or loses) if the stage about to start resets
        the stacks; empty when it carries them over or has started."""
        if self.stage_round or self.current.chips is not ChipRule.RESET:
            return {}
        start = self.settings.starting_chips
        return {p: start - self.entrants[p].chips for p in self.in_play()
                if self.entrants[p].chips != start}

    def reset_chips(self, deltas: Mapping[str, int]) -> None:
        """The stage starts with the starting stack for everyone (the deltas `stage_reset`)."""
        if dict(deltas) != self.stage_reset():
            raise RuleViolation("a reset brings every player in play to the starting chips",
                                rule="reset-mismatch")
        for player, delta in deltas.items():
            self.entrants[player].chips += delta
            self.chips_added += delta

    def start_step(self, number: int, coups: Mapping[str, int], chips: Mapping[str, int]) -> None:
        """A step of the round starts: every table with players will play one coup."""
        self.require(Phase.RUNNING, doing="start a step")
        self._require_running("start a step")
        if self.step is not None or number != self.steps + 1:
            raise RuleViolation(f"the next step of round {self.round} is not {number}",
                                rule="step-mismatch")
        if set(chips) != set(self.in_play()) or not set(coups) <= set(self.tables):
            raise RuleViolation("a step starts with the chips of every player in play and "
                                "the coups of open tables", rule="step-chips")
        self.steps = number
        self.step = Step(number=number, coups=dict(coups), chips=dict(chips))

    def end_step(self, number: int) -> None:
        if self.step is None or self.step.number != number:
            raise RuleViolation(f"step {number} is not under way", rule="step-mismatch")
        self.step = None

    def pause(self, at: float) -> None:
        self.require(Phase.SEATED, Phase.RUNNING, Phase.BETWEEN_ROUNDS, doing="pause")
        self._require_running("pause")
        self.paused = True
        if self.clock is not None and self.phase is Phase.RUNNING:
            self.clock.paused_at = at

    def resume(self, at: float) -> None:
        if not self.paused:
            raise OutOfTurn("the tournament is not paused", rule="not-paused")
        self.paused = False
        if self.clock is not None and self.clock.paused_at is not None:
            self.clock.paused_for += max(0.0, at - self.clock.paused_at)
            self.clock.paused_at = None

    def _require_running(self, doing: str) -> None:
        if self.paused:
            raise OutOfTurn(f"cannot {doing}: the tournament is paused", rule="paused")

    def appoint(self, epoch: int) -> None:
        """A director takes the tournament's lease with a newer fencing epoch."""
        if epoch <= self.epoch:
            raise OutOfTurn(f"epoch {epoch} is not newer than {self.epoch}", rule="stale-epoch")
        self.epoch = epoch

    def check_epoch(self, epoch: int | None) -> None:
        """Refuse a director's command from an epoch older than the lease's (None: not a
        director's command)."""
        if epoch is not None and epoch < self.epoch:
            raise OutOfTurn(f"epoch {epoch} is older than the director's ({self.epoch})",
                            rule="stale-epoch")

    def end_round(self, round_: int, chips: Mapping[str, int]) -> None:
        """End the round with every player's chips. Registration closes at the end of round
        `late_rounds`; then the cut the format calls for is made (`cut_due`)."""
        self.require(Phase.RUNNING, doing="end a round")
        if round_ != self.round:
            raise RuleViolation(f"round {self.round} is being played, not {round_}",
                                rule="round-mismatch")
        if self.step is not None:
            raise OutOfTurn("a step is under way", rule="step-open")
        players = self.in_play()
        if set(chips) != set(players):
            raise RuleViolation("a round ends with the chips of every player in play",
                                rule="round-chips")
        if any(chips[p] < 1 for p in players):
            raise RuleViolation("a player without chips is reported as busted first",
                                rule="bust-unreported")
        for player in players:
            self.entrants[player].chips = chips[player]
        self.phase = Phase.BETWEEN_ROUNDS
        self.clock = None
        if self.registration_open and round_ >= self.settings.late_rounds:
            self._close_registration()
        self._cut()

    def _cut(self) -> None:
        """The cut due at this round's end: every round of a stage played until one is left
        (to `advance`, to one at the final table); the end of any other stage (to who
        advances, or to the winner at the last stage's end). A tie on the line that the
        format settles by play-off leaves the cut waiting for it (`playoff`)."""
        stage = self.current
        if self.registration_open or self.phase is not Phase.BETWEEN_ROUNDS:
            return
        players = self.in_play()
        if stage.rounds == 0:
            if stage.advance is None:
                return
            chosen = self._select(players, 1 if self.final_table else stage.advance.overall)
        elif self.stage_round >= stage.rounds:
            chosen = (self._select(players, 1) if stage.advance is None
                      else self._advancers(players, stage.advance))
        else:
            return
        if self.playoff is not None:
            return
        self.playoff_chips, self.playoffs = {}, 0
        cut = sorted((p for p in players if p not in chosen),
                     key=lambda p: -self.entrants[p].chips)
        if cut:
            self.exits.append(Exit(round=self.round, table=None, coup=None,
                                   players=[Bust(player=p, chips=self.entrants[p].chips)
                                            for p in cut]))
        for player in cut:
            self.entrants[player].status = Status.OUT
            self.entrants[player].seat = None
        if stage.rounds and self.stage_round >= stage.rounds and not self.last_stage:
            self.stage += 1
            self.stage_round = 0

    def _key(self, player: str) -> tuple[int, ...]:
        """Better first: more chips, then a better play-off, then (by `draw-order`, or after
        `MAX_PLAYOFFS` play-offs that tied again) the earlier in the draw."""
        entrant = self.entrants[player]
        key = (-entrant.chips, -self.playoff_chips.get(player, 0))
        if self.settings.tie_break is TieBreak.DRAW_ORDER or self.playoffs >= MAX_PLAYOFFS:
            return (*key, entrant.draw_rank or 0)
        return key

    def _select(self, candidates: Sequence[str], keep: int) -> list[str]:
        """The `keep` best; an unsettled tie on the line calls a play-off and keeps nobody."""
        selection: Selection = select(candidates, keep, self._key, self.settings.tie_break)
        if selection.tied and self.playoff is None:
            self.playoff = PlayOff(round=self.round, players=selection.tied,
                                   places=selection.places)
        return selection.chosen

    def _advancers(self, players: list[str], advance: Advance) -> list[str]:
        """The top `per_table` of each table, the top `overall`, then the `wildcards`."""
        chosen: list[str] = []
        if advance.per_table:
            for table in self.tables:
                at = [p for p in players if self.entrants[p].table == table]
                chosen += self._select(at, advance.per_table)
        for keep in (advance.overall, advance.wildcards):
            if keep:
                chosen += self._select([p for p in players if p not in chosen], keep)
        return chosen

    def settle_playoff(self, chips: Mapping[str, int]) -> None:
        """The play-off coup's result: each tied player's chips after it. The cut is made
        again with them; a tie that remains calls another play-off."""
        playoff = self.playoff
        if playoff is None:
            raise OutOfTurn("no play-off is waiting", rule="no-play-off")
        if set(chips) != set(playoff.players):
            raise RuleViolation("a play-off reports the chips of each tied player",
                                rule="play-off-players")
        self.playoff = None
        self.playoff_chips.update(chips)
        self.playoffs += 1
        self._cut()

    # --- eliminations ---------------------------------------------------------------

    def bust(self, table: str, coup: int, busted: Sequence[Bust]) -> None:
        """Players left without chips by one coup at one table, with their chips at its start."""
        self.require(Phase.RUNNING, doing="record bust-outs")
        if table not in self.tables:
            raise NotFound(f"{table} is not an open table of {self.name}", rule="unknown-table")
        names = [b.player for b in busted]
        if not names or len(set(names)) != len(names):
            raise RuleViolation("a bust-out names each busted player once", rule="bust-players")
        for bust in busted:
            entrant = self.entrant(bust.player)
            if entrant.status is not Status.SEATED or entrant.table != table:
                raise RuleViolation(f"{bust.player} is not playing at {table}",
                                    rule="bust-players")
            if bust.chips < 1:
                raise RuleViolation("a player busts from one chip or more at the coup's start",
                                    rule="bust-chips")
        for bust in busted:
            entrant = self.entrants[bust.player]
            entrant.status, entrant.seat, entrant.chips = Status.OUT, None, 0
        self.exits.append(Exit(round=self.round, table=table, coup=coup, players=list(busted)))
        if self.registration_open and len(self.in_play()) <= 1:
            self._close_registration()

    def placements_due(self) -> list[Placement]:
        """The finishing positions the players out can be given now, oldest exits first."""
        if self.registration_open:
            return []
        due: list[Placement] = []
        bottom = self.bottom
        for exit_ in self.exits:
            due += self._ranked(exit_, bottom)
            bottom -= len(exit_.players)
        return due

    def _ranked(self, exit_: Exit, bottom: int) -> list[Placement]:
        """Players out together take positions bottom - k + 1 .. bottom, the most chips first;
        equal chips tie: each takes the best position of the ones they cover together."""
        top = bottom - len(exit_.players) + 1
        ordered = sorted(exit_.players, key=lambda b: -b.chips)
        chips = [b.chips for b in ordered]
        return [Placement(player=bust.player, position=top + chips.index(bust.chips),
                          tied=chips.count(bust.chips), round=exit_.round,
                          table=exit_.table or self.entrants[bust.player].table or "",
                          coup=exit_.coup)
                for bust in ordered]

    def place(self, placement: Placement) -> None:
        """Give a player out the finishing position the ranking gives them (oldest exit first)."""
        expected = self._ranked(self.exits[0], self.bottom) if self.exits else []
        if self.registration_open or placement not in expected:
            raise RuleViolation(f"{placement.player} does not finish at {placement.position} now",
                                rule="position-mismatch")
        entrant = self.entrants[placement.player]
        if entrant.status is not Status.OUT:
            raise RuleViolation(f"{placement.player} is already placed", rule="position-mismatch")
        entrant.status, entrant.position, entrant.tied = (Status.PLACED, placement.position,
                                                          placement.tied)
        head = self.exits[0]
        if all(self.entrants[b.player].status is Status.PLACED for b in head.players):
            self.exits.pop(0)
            self.bottom -= len(head.players)

    # --- balancing ------------------------------------------------------------------

    def balancing_plan(self, seed: bytes, breaking: str | None = None) -> list[Break | Move]:
        """The breaks and moves that balance the tables, in order.

        While the players fit at one table fewer, the table with the fewest players (the
        highest number on a tie) breaks: the seeded stream orders its players, and each in
        turn sits at the table with the fewest players (lowest number on a tie), on its
        lowest free seat. Then, while the largest and smallest tables differ by more than the
        tolerance, one player moves from the largest (lowest number on a tie) to the
        smallest (lowest number on a tie): the one moved least so far, earliest in the draw
        on a tie, to the lowest free seat. `breaking`: a table the organiser breaks first.
        """
        if self.phase in (Phase.REGISTRATION, Phase.FINISHED):
            return []
        self.check_seed(seed)
        number = {t: i for i, t in enumerate(self.tables)}
        layout = {t: {e.seat or 0: e.player for e in self.seated_at(t)} for t in self.tables}
        moves = {p: e.moves for p, e in self.entrants.items()}
        rank = {p: e.draw_rank or 0 for p, e in self.entrants.items()}
        seats = self.settings.seats_per_table
        plan: list[Break | Move] = []

        def smallest() -> str:
            return min(layout, key=lambda t: (len(layout[t]), number[t]))

        def reseat(player: str, from_table: str, to_table: str) -> None:
            seat = min(s for s in range(1, seats + 1) if s not in layout[to_table])
            layout[to_table][seat] = player
            moves[player] += 1
            plan.append(Move(player=player, from_table=from_table, to_table=to_table, seat=seat))

        if breaking is not None and (breaking not in layout or len(layout) < 2
                                     or sum(map(len, layout.values())) > (len(layout) - 1) * seats):
            raise RuleViolation(f"{breaking} is not a table whose players fit at the others",
                                rule="break-table")
        while len(layout) > 1:
            players = sum(len(at) for at in layout.values())
            if players <= (len(layout) - 1) * seats:
                broken = breaking if breaking in layout else min(
                    layout, key=lambda t: (len(layout[t]), -number[t]))
                at_broken = layout.pop(broken)
                leaving = tuple(at_broken[s] for s in sorted(at_broken))
                order = tuple(shuffled(seed, self.name, f"break/{broken}", leaving))
                plan.append(Break(table=broken, players=leaving, order=order))
                for player in order:
                    reseat(player, broken, smallest())
                continue
            largest = min(layout, key=lambda t: (-len(layout[t]), number[t]))
            small = smallest()
            if len(layout[largest]) - len(layout[small]) <= self.settings.tolerance:
                break
            seat = min(layout[largest], key=lambda s: (moves[layout[largest][s]],
                                                       rank[layout[largest][s]]))
            reseat(layout[largest].pop(seat), largest, small)
        return plan

    def break_table(self, table: str, players: Sequence[str], order: Sequence[str]) -> None:
        """Close a table; its players, reseated in `order`, move next."""
        if table not in self.tables or len(self.tables) < 2:
            raise RuleViolation(f"{table} is not a table that can break", rule="break-table")
        if list(players) != [e.player for e in self.seated_at(table)] or sorted(order) != sorted(
            players
        ):
            raise RuleViolation(f"a broken table's players are those at {table}, reseated once "
                                "each", rule="break-players")
        self.tables.remove(table)
        self.breaks.append(Break(table=table, players=tuple(players), order=tuple(order)))

    def move(self, player: str, from_table: str, to_table: str, seat: int, chips: int) -> None:
        """A player changes table with their chips."""
        entrant = self.entrant(player)
        if entrant.status is not Status.SEATED or entrant.table != from_table:
            raise RuleViolation(f"{player} is not playing at {from_table}", rule="move-player")
        if to_table not in self.tables or to_table == from_table:
            raise NotFound(f"{to_table} is not another open table", rule="unknown-table")
        if seat not in self.free_seats(to_table):
            raise RuleViolation(f"seat {seat} of {to_table} is not free", rule="seat-taken")
        if chips < 1:
            raise RuleViolation("a player in play has chips", rule="move-chips")
        entrant.table, entrant.seat, entrant.chips = to_table, seat, chips
        entrant.moves += 1

    # --- secret bets -----------------------------------------------------------------

    def place_secret_bet(self, bet: SecretBet) -> None:
        """One secret bet a player per round, where the stage allows it, on a coup of their
        table not yet dealt."""
        self.require(Phase.RUNNING, doing="place a secret bet")
        if not self.current.secret_bet:
            raise RuleViolation(f"the {self.current.name} stage has no secret bet",
                                rule="secret-bet-not-allowed")
        entrant = self.entrant(bet.player)
        if entrant.status is not Status.SEATED or entrant.table != bet.table:
            raise RuleViolation(f"{bet.player} is not playing at {bet.table}",
                                rule="secret-bet-player")
        if any(b.player == bet.player and b.round == self.round for b in self.secret_bets):
            raise RuleViolation(f"{bet.player} has used this round's secret bet",
                                rule="secret-bet-used")
        if len(bet.commitment) != 64 or bet.commitment.strip("0123456789abcdef"):
            raise RuleViolation("a commitment is a SHA-256 in lowercase hex",
                                rule="secret-bet-commitment")
        self.secret_bets.append(msgspec.structs.replace(bet, round=self.round))

    def secret_bet_of(self, player: str) -> SecretBet:
        """The player's secret bet of this round that is waiting for its reveal."""
        for bet in self.secret_bets:
            if bet.player == player and bet.round == self.round and not bet.settled:
                return bet
        raise NotFound(f"{player} has no secret bet waiting", rule="no-secret-bet")

    def settle_secret_bet(self, player: str, spot: str, amount: int, nonce: str,
                          delta: int) -> None:
        """The reveal: it must open the commitment, within the round's limits and the chips
        the player had; `delta` is what the bet won or lost at the coup's outcome."""
        bet = self.secret_bet_of(player)
        if secret_commitment(spot, amount, nonce) != bet.commitment:
            raise RuleViolation("the bet revealed is not the one committed to",
                                rule="secret-bet-mismatch")
        limits = self.limits
        if not limits.min_stake <= amount <= limits.max_stake:
            raise RuleViolation(f"a bet is {limits.min_stake} to {limits.max_stake}",
                                rule="secret-bet-amount")
        entrant = self.entrants[player]
        bet.settled = True
        entrant.chips += delta
        self.chips_added += delta

    def forfeits(self, chips: Mapping[str, int]) -> dict[str, int]:
        """At the round's end, each secret bet never revealed costs the round's maximum bet
        (leaving the player one chip at least)."""
        return {b.player: min(self.limits.max_stake, chips[b.player] - 1)
                for b in self.secret_bets if b.round == self.round and not b.settled
                and b.player in chips and chips[b.player] > 1}

    def forfeit(self, player: str, amount: int) -> None:
        bet = self.secret_bet_of(player)
        bet.settled = True
        self.entrants[player].chips -= amount
        self.chips_added -= amount

    # --- the organiser's interventions ----------------------------------------------

    def intervene(self, intervention: Intervention) -> None:
        """Record a correction; chip corrections and penalties change the player's chips,
        a disqualification puts them out (last of the players out with them)."""
        if not intervention.reason.strip():
            raise RuleViolation("an intervention gives its reason", rule="reason-required")
        self.require(Phase.SEATED, Phase.RUNNING, Phase.BETWEEN_ROUNDS, doing="intervene")
        if intervention.kind not in INTERVENTIONS:
            raise RuleViolation(f"no intervention {intervention.kind!r} (known: "
                                f"{', '.join(INTERVENTIONS)})", rule="intervention-kind")
        if intervention.kind == "break-table":
            self.interventions.append(intervention)
            return
        entrant = self.entrant(intervention.player)
        if entrant.status is not Status.SEATED:
            raise RuleViolation(f"{entrant.player} is not playing", rule="intervention-player")
        delta = intervention.chips_after - intervention.chips_before
        if intervention.kind == "penalise" and delta >= 0:
            raise RuleViolation("a penalty takes chips", rule="penalty-chips")
        if intervention.kind in ("correct-chips", "penalise"):
            if intervention.chips_after < 1:
                raise RuleViolation("a correction leaves the player chips; disqualify instead",
                                    rule="correction-chips")
            entrant.chips = intervention.chips_after
            self.chips_added += delta
        if intervention.kind == "disqualify":
            self.exits.append(Exit(round=self.round, table=entrant.table, coup=DISQUALIFIED,
                                   players=[Bust(player=entrant.player, chips=0)]))
            entrant.status, entrant.seat, entrant.chips = Status.OUT, None, 0
            if self.registration_open and len(self.in_play()) <= 1:
                self._close_registration()
        self.interventions.append(intervention)

    # --- prizes and the end ---------------------------------------------------------

    def standings(self) -> list[tuple[str, int, int]]:
        """(player, position, tied) of every placed player, and of the sole survivor at 1."""
        rows = [(e.player, e.position, e.tied) for e in self.entrants.values()
                if e.position is not None]
        survivors = self.in_play()
        if self.decided and survivors:
            rows.append((survivors[0], 1, 1))
        return sorted(rows, key=lambda r: (r[1], self.entrants[r[0]].draw_rank or 0))

    def prizes(self) -> dict[str, int]:
        """Each player's prize once the tournament is decided (see `shares`)."""
        table = (list(self.settings.fixed_prizes) if self.settings.fixed_prizes
                 else prize_table(self.pool, self.settings.prizes))
        groups: dict[int, list[str]] = {}
        for player, position, _ in self.standings():
            groups.setdefault(position, []).append(player)
        prizes: dict[str, int] = {}
        for position, players in groups.items():
            covered = sum(table[p - 1] for p in range(position, position + len(players))
                          if p <= len(table))
            prizes.update(zip(players, shares(covered, len(players)), strict=True))
        return prizes

    def require_decided(self) -> None:
        if not self.decided:
            raise OutOfTurn("prizes and the finish wait until one player is left",
                            rule="not-decided")

    def award(self, player: str, amount: int) -> None:
        entrant = self.entrant(player)
        self.require_decided()
        if entrant.prize is not None or amount < 1 or self.prizes().get(player) != amount:
            raise RuleViolation(f"{player}'s prize is not {amount}", rule="prize-mismatch")
        entrant.prize = amount

    def finish(self, seed: bytes, winners: Sequence[str]) -> None:
        """Declare the winners, check every prize awarded, and reveal the seed: the draw and
        every break must be what it gives."""
        self.require_decided()
        standings = self.standings()
        if list(winners) != [player for player, position, _ in standings if position == 1]:
            raise RuleViolation("the winners are the players at position 1", rule="winners")
        prizes = self.prizes()
        if any(amount and self.entrants[p].prize != amount for p, amount in prizes.items()):
            raise RuleViolation("every prize is awarded before the finish", rule="prizes-unpaid")
        self.verify(seed)
        for player in self.in_play():
            entrant = self.entrants[player]
            entrant.status, entrant.position, entrant.tied, entrant.seat = (Status.PLACED, 1, 1,
                                                                            None)
        self.seed = seed.hex()
        self.phase = Phase.FINISHED

    def results(self) -> list[Result]:
        """Finishing positions and prizes, the winners first (the draw's order within a tie)."""
        return [Result(player=player, position=position, tied=tied,
                       entries=self.entrants[player].entries,
                       prize=self.entrants[player].prize or 0)
                for player, position, tied in self.standings()]

    # --- the seed -------------------------------------------------------------------

    def check_seed(self, seed: bytes) -> None:
        if self.seating is None or commitment_of(seed) != self.seating.commitment:
            raise RuleViolation("the seed is not the one the draw committed to",
                                rule="seating-commitment")

    def verify(self, seed: bytes) -> None:
        """Recompute the draw and every break's reseating order from the seed."""
        self.check_seed(seed)
        assert self.seating is not None
        order = shuffled(seed, self.name, DRAW_LABEL, self.seating.entrants)
        if deal(order, self.seating.tables, self.table_name) != self.seating.seats:
            raise RuleViolation("the recorded draw is not the seed's", rule="seating-mismatch")
        for broken in self.breaks:
            if shuffled(seed, self.name, f"break/{broken.table}", broken.players) != list(
                broken.order
            ):
                raise RuleViolation(f"the reseating of {broken.table} is not the seed's",
                                    rule="seating-mismatch")


def shuffled(seed: bytes, tournament: str, label: str, players: Sequence[str]) -> list[str]:
    """sabot-seating-v1: the shoe's stream (sabot-shoe-v1) keyed by HMAC-SHA256(seed, message),
    message the length-prefixed algorithm name, tournament name and label ("draw", or
    "break/<table>"), drives the same unbiased Fisher-Yates over the players."""
    parts = (SEATING_V1.encode(), tournament.encode(), label.encode())
    message = b"".join(len(part).to_bytes(4, "big") + part for part in parts)
    return keyed_shuffle(hmac.digest(seed, message, "sha256"), list(players))


def deal(order: Sequence[str], tables: int, name: Callable[[int], str]) -> list[Seating]:
    """Deal the drawn order round the tables: the i-th player sits at table i mod T + 1, seat
    i div T + 1, so that no two tables differ by more than one player."""
    return [Seating(player=player, table=name(i % tables + 1), seat=i // tables + 1)
            for i, player in enumerate(order)]


def prize_table(pool: int, prizes: Sequence[int]) -> list[int]:
    """Each paid position's prize: floor(pool * basis points / 10 000); the chips the rounding
    leaves over go to first place, so the prizes add up to the pool exactly."""
    amounts = [pool * bp // BASIS_POINTS for bp in prizes]
    amounts[0] += pool - sum(amounts)
    return amounts


def shares(total: int, players: int) -> list[int]:
    """Tied players share the prizes of the positions they cover: each takes the floor of the
    equal share, and the chips left over go one each to the first of them in draw order."""
    share, left = divmod(total, players)
    return [share + (1 if i < left else 0) for i in range(players)]
