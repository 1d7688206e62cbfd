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

import hmac
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum

import msgspec

from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.settings import TableSettings, Variant
from domain.shoe import commitment as commitment_of
from domain.shoe import keyed_shuffle

SEATING_V1 = "sabot-seating-v1"
SEATING_ALGORITHM = SEATING_V1  # the algorithm new draws use
BASIS_POINTS = 10_000  # a prize is a share of the pool in basis points: 10 000 is all of it
MAX_SEATS = 14
DRAW_LABEL = "draw"


class TournamentSettings(msgspec.Struct, frozen=True, kw_only=True):
    """A tournament's structure, fixed at creation.

    `advance`: how many players go on from each round, by chips at its end (0: no cut, play
    down to one winner). `prizes`: each finishing position's share of the pool (entries times
    `buy_in`) in basis points, first place first, summing to 10 000. `late_rounds`: players
    may register, and busted players re-enter, until that round ends (0: until the draw).
    `reentries`: how many times a busted player may buy in again. `tolerance`: the largest
    difference in players between two tables that needs no balancing.
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

    def table_settings(self) -> TableSettings:
        """The settings every table of the tournament is opened with."""
        return TableSettings.default(self.variant, min_stake=self.min_stake,
                                     max_stake=self.max_stake)

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
        return self.entries * self.settings.buy_in

    @property
    def chips_issued(self) -> int:
        return self.entries * self.settings.starting_chips

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

    def register(self, player: str) -> None:
        if not player or player.startswith("@"):
            raise RuleViolation("a player id is not empty and does not start with @",
                                rule="player-id")
        if player in self.entrants:
            raise RuleViolation(f"{player} is already registered", rule="already-registered")
        self._require_registration_open("register")
        self.entrants[player] = Entrant(player=player)

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
        return -(-players // self.settings.seats_per_table)

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
        if len(entrants) < max(2, len(self.settings.prizes)):
            raise RuleViolation("a tournament needs two players, and one for every paid place",
                                rule="too-few-players")
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
            free = self._free_seats(table)
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
                     and not any(self._free_seats(t) for t in self.tables))
        if table not in self.tables and not new_table:
            raise NotFound(f"{table} is not an open table of {self.name}", rule="unknown-table")
        if seat not in (self._free_seats(table) if not new_table
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

    def _free_seats(self, table: str) -> list[int]:
        taken = {e.seat for e in self.seated_at(table)}
        return [s for s in range(1, self.settings.seats_per_table + 1) if s not in taken]

    # --- rounds ---------------------------------------------------------------------

    def start_round(self) -> None:
        self.require(Phase.SEATED, Phase.BETWEEN_ROUNDS, doing="start a round")
        if self.decided:
            raise OutOfTurn("the tournament is decided", rule="tournament-decided")
        self.round += 1
        self.phase = Phase.RUNNING

    def end_round(self, round_: int, chips: Mapping[str, int]) -> None:
        """End the round with every player's chips. Registration closes at the end of round
        `late_rounds`; then, with `advance`, the players outside the first `advance` by chips
        (the first one at the final table) are cut. Tied players on the line all advance."""
        self.require(Phase.RUNNING, doing="end a round")
        if round_ != self.round:
            raise RuleViolation(f"round {self.round} is being played, not {round_}",
                                rule="round-mismatch")
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
        if self.registration_open and round_ >= self.settings.late_rounds:
            self._close_registration()
        if self.settings.advance and not self.registration_open:
            self._cut(players, 1 if self.final_table else self.settings.advance)

    def _cut(self, players: list[str], keep: int) -> None:
        if len(players) <= keep:
            return
        ranked = sorted(players, key=lambda p: -self.entrants[p].chips)
        line = self.entrants[ranked[keep - 1]].chips
        cut = [p for p in ranked if self.entrants[p].chips < line]
        if not cut:
            return
        self.exits.append(Exit(round=self.round, table=None, coup=None,
                               players=[Bust(player=p, chips=self.entrants[p].chips)
                                        for p in cut]))
        for player in cut:
            self.entrants[player].status = Status.OUT
            self.entrants[player].seat = None

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

    def balancing_plan(self, seed: bytes) -> list[Break | Move]:
        """The breaks and moves that balance the tables, in order.

        While the players fit at one table fewer, the table with the fewest players (the
        highest number on a tie) breaks: the seeded stream orders its players, and each in
        turn sits at the table with the fewest players (lowest number on a tie), on its
        lowest free seat. Then, while the largest and smallest tables differ by more than the
        tolerance, one player moves from the largest (lowest number on a tie) to the
        smallest (lowest number on a tie): the one moved least so far, earliest in the draw
        on a tie, to the lowest free seat.
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

        while len(layout) > 1:
            players = sum(len(at) for at in layout.values())
            if players <= (len(layout) - 1) * seats:
                broken = min(layout, key=lambda t: (len(layout[t]), -number[t]))
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
        if seat not in self._free_seats(to_table):
            raise RuleViolation(f"seat {seat} of {to_table} is not free", rule="seat-taken")
        if chips < 1:
            raise RuleViolation("a player in play has chips", rule="move-chips")
        entrant.table, entrant.seat, entrant.chips = to_table, seat, chips
        entrant.moves += 1

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
        table = prize_table(self.pool, self.settings.prizes)
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
