"""A tournament's seats: the seating draw from a secret seed whose commitment it records,
the seats it deals, late seats, and the check of the revealed seed against the draw and
every break's reseating (sabot-seating-v1).

These are the steps of `TournamentBase` (domain/tournament/state.py), which keeps the state and
asks them; each validates before it changes anything.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Sequence
from itertools import count

from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.game.shoe import commitment as commitment_of
from domain.game.shoe import keyed_shuffle
from domain.tournament.base import TournamentBase
from domain.tournament.entrants import Status
from domain.tournament.records import Draw, Phase, Seating
from domain.tournament.settings import TournamentSettings

SEATING_V1 = "sabot-seating-v1"
SEATING_ALGORITHM = SEATING_V1  # the algorithm new draws use
DRAW_LABEL = "draw"


def drawn_seating(state: TournamentBase, seed: bytes) -> list[Seating]:
    """The draw a seed gives for the players registered now: the seats, in draw order."""
    state.require(Phase.REGISTRATION, doing="draw the seats")
    entrants = list(state.entrants)
    order = shuffled(seed, state.name, DRAW_LABEL, entrants)
    return deal(order, tables_for(state, len(entrants)), state.table_name)


def tables_for(state: TournamentBase, players: int) -> int:
    return tables_needed(state.settings, players)


def tables_needed(settings: TournamentSettings, players: int) -> int:
    """Tables for the draw: as many as the seats need, or the format's `tables` if more
    (two players a table at least)."""
    needed = -(-players // settings.seats_per_table)
    return max(needed, min(settings.tables or 0, players // 2))


def field_refusal(settings: TournamentSettings, players: int) -> RuleViolation | None:
    """Why the draw refuses `players` entrants in this format (None: it takes them): two
    players at least and one a paid place, and fewer advancing from the heats than play."""
    paid = len(settings.fixed_prizes or settings.prizes)
    if players < max(2, paid):
        return RuleViolation(f"a tournament needs two players, and one for each of the {paid}"
                             " paid places", rule="too-few-players")
    heats = settings.plan()[0]
    first, tables = heats.advance, tables_needed(settings, players)
    if heats.rounds and first is not None and first.most(tables) >= players:
        return RuleViolation(f"{first.most(tables)} advancing from {players} players at "
                             f"{tables} tables is more advancers than players",
                             rule="too-many-advancers")
    return None


def smallest_field(settings: TournamentSettings) -> int:
    """The fewest entrants the draw takes in this format (shown beside the presets)."""
    return next(players for players in count(2) if field_refusal(settings, players) is None)


def draw(state: TournamentBase, commitment: str, algorithm: str, entrants: Sequence[str],
         tables: int) -> None:
    """Record the seating draw; the `PlayerSeatedAt` steps that follow are its seats."""
    state.require(Phase.REGISTRATION, doing="draw the seats")
    if algorithm != SEATING_V1:
        raise RuleViolation(f"unknown seating algorithm {algorithm!r}; known: {SEATING_V1}",
                            rule="seating-algorithm")
    if len(commitment) != 64 or commitment.strip("0123456789abcdef"):
        raise RuleViolation("a commitment is a SHA-256 in lowercase hex",
                            rule="seating-commitment")
    if list(entrants) != list(state.entrants):
        raise RuleViolation("the draw is of the players registered, in registration order",
                            rule="seating-entrants")
    refusal = field_refusal(state.settings, len(entrants))
    if refusal is not None:
        raise refusal
    if tables != tables_for(state, len(entrants)):
        raise RuleViolation(f"{len(entrants)} players need {tables_for(state, len(entrants))}"
                            " tables", rule="seating-tables")
    state.seating = Draw(commitment=commitment, algorithm=algorithm, entrants=list(entrants),
                     tables=tables)
    for _ in range(tables):
        _open_table(state)
    state.phase = Phase.SEATED
    if state.settings.late_rounds == 0:
        state.close_registration()


def late_seat(state: TournamentBase, player: str) -> Seating:
    """Where a late entrant (or a re-entry) sits: at the open table with the fewest players
    (the lowest number on a tie), on its lowest free seat; at a new table when all are full."""
    if state.entrant(player).status is not Status.REGISTERED or state.seating is None:
        raise OutOfTurn(f"{player} is not waiting for a late seat", rule="out-of-turn")
    for table in sorted(state.tables, key=lambda t: len(state.seated_at(t))):
        free = free_seats(state, table)
        if free:
            return Seating(player=player, table=table, seat=free[0])
    return Seating(player=player, table=state.table_name(state.tables_opened + 1), seat=1)


def seat_at(state: TournamentBase, player: str, table: str, seat: int, chips: int) -> None:
    """Seat a registered player with the starting chips (the draw, or a late seat)."""
    entrant = state.entrant(player)
    if state.seating is None:
        raise OutOfTurn("players are seated by the draw", rule="out-of-turn")
    if entrant.status is not Status.REGISTERED:
        raise RuleViolation(f"{player} is not waiting for a seat", rule="already-seated")
    new_table = (table == state.table_name(state.tables_opened + 1)
                 and not any(free_seats_at(state, state.tables).values()))
    if table not in state.tables and not new_table:
        raise NotFound(f"{table} is not an open table of {state.name}", rule="unknown-table")
    if seat not in (free_seats(state, table) if not new_table
                    else range(1, state.settings.seats_per_table + 1)):
        raise RuleViolation(f"seat {seat} of {table} is not free", rule="seat-taken")
    if chips != state.settings.starting_chips:
        raise RuleViolation(f"a player is seated with {state.settings.starting_chips} chips",
                            rule="seat-chips")
    if new_table:
        _open_table(state)
    entrant.status, entrant.table, entrant.seat, entrant.chips = (Status.SEATED, table,
                                                                  seat, chips)
    if entrant.draw_rank is None:
        entrant.draw_rank = state.seats_given
        state.seats_given += 1
    if len(state.seating.seats) < len(state.seating.entrants):
        state.seating.seats.append(Seating(player=player, table=table, seat=seat))


def _open_table(state: TournamentBase) -> None:
    state.tables_opened += 1
    state.tables.append(state.table_name(state.tables_opened))


def free_seats(state: TournamentBase, table: str) -> list[int]:
    return free_seats_at(state, [table])[table]


def free_seats_at(state: TournamentBase, tables: Iterable[str]) -> dict[str, list[int]]:
    """The free seats of each of `tables`, the entrants read once for them all (at a draw,
    every table is asked each time one is opened)."""
    taken: dict[str, set[int | None]] = {table: set() for table in tables}
    for entrant in state.entrants.values():
        if entrant.status is Status.SEATED and entrant.table is not None and (
                entrant.table in taken):
            taken[entrant.table].add(entrant.seat)
    seats = range(1, state.settings.seats_per_table + 1)
    return {table: [s for s in seats if s not in used] for table, used in taken.items()}


def check_seed(state: TournamentBase, seed: bytes) -> None:
    if state.seating is None or commitment_of(seed) != state.seating.commitment:
        raise RuleViolation("the seed is not the one the draw committed to",
                            rule="seating-commitment")


def verify(state: TournamentBase, seed: bytes) -> None:
    """Recompute the draw and every break's reseating order from the seed."""
    check_seed(state, seed)
    assert state.seating is not None
    order = shuffled(seed, state.name, DRAW_LABEL, state.seating.entrants)
    if deal(order, state.seating.tables, state.table_name) != state.seating.seats:
        raise RuleViolation("the recorded draw is not the seed's", rule="seating-mismatch")
    for broken in state.breaks:
        if shuffled(seed, state.name, f"break/{broken.table}", broken.players) != list(
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
