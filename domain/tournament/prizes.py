"""A tournament's finishing positions and prizes: the bust-outs, the positions the players
out are given (from the bottom, once registration has closed), the standings, the prize
table and its shares on a tie, the awards and the finish that reveals the seed.

These are the steps of `TournamentBase` (domain/tournament/state.py), which keeps the state and
asks them; each validates before it changes anything.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import msgspec

from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.tournament import seating
from domain.tournament.base import TournamentBase
from domain.tournament.entrants import Bust, Exit, Status
from domain.tournament.records import Phase
from domain.tournament.settings import BASIS_POINTS


class Placement(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    position: int
    tied: int
    table: str
    coup: int | None
    round: int


class Result(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    position: int
    tied: int
    entries: int
    prize: int


def bust_out(state: TournamentBase, table: str, coup: int, busted: Sequence[Bust]) -> None:
    """Players left without chips by one coup at one table, with their chips at its start."""
    state.require(Phase.RUNNING, doing="record bust-outs")
    if table not in state.tables:
        raise NotFound(f"{table} is not an open table of {state.name}", rule="unknown-table")
    names = [b.player for b in busted]
    if not names or len(set(names)) != len(names):
        raise RuleViolation("a bust-out names each busted player once", rule="bust-players")
    for bust in busted:
        entrant = state.entrant(bust.player)
        if entrant.status is not Status.SEATED or entrant.table != table:
            raise RuleViolation(f"{bust.player} is not playing at {table}",
                                rule="bust-players")
        if bust.chips < 1:
            raise RuleViolation("a player busts from one chip or more at the coup's start",
                                rule="bust-chips")
    for bust in busted:
        entrant = state.entrants[bust.player]
        entrant.status, entrant.seat, entrant.chips = Status.OUT, None, 0
    state.exits.append(Exit(round=state.round, table=table, coup=coup, players=list(busted)))
    if state.registration_open and len(state.in_play()) <= 1:
        state.close_registration()


def placements_due(state: TournamentBase) -> list[Placement]:
    """The finishing positions the players out can be given now, oldest exits first."""
    if state.registration_open:
        return []
    due: list[Placement] = []
    bottom = state.bottom
    for exit_ in state.exits:
        due += _ranked(state, exit_, bottom)
        bottom -= len(exit_.players)
    return due


def _ranked(state: TournamentBase, exit_: Exit, bottom: int) -> list[Placement]:
    """Players out together take positions bottom - k + 1 .. bottom, those short of the
    format's minimum of bets last, then the most chips first; equal ranks tie: each takes the
    best position of the ones they cover together."""
    top, rank = bottom - len(exit_.players) + 1, exit_.rank
    ordered = exit_.ranked()
    first: dict[tuple[bool, int], int] = {}  # where each rank first comes
    for index, bust in enumerate(ordered):
        first.setdefault(rank(bust), index)
    tied = Counter(map(rank, ordered))
    return [_placement(state, exit_, bust.player, top + first[rank(bust)], tied[rank(bust)])
            for bust in ordered]


def _placement(state: TournamentBase, exit_: Exit, player: str, position: int,
               tied: int) -> Placement:
    return Placement(player=player, position=position, tied=tied, round=exit_.round,
                     table=exit_.table or state.entrants[player].table or "", coup=exit_.coup)


def _placement_of(state: TournamentBase, exit_: Exit, bottom: int,
                  player: str) -> Placement | None:
    """`player`'s placement of `_ranked(state, exit_, bottom)` (None: not out in `exit_`),
    from the players out with them who rank before them and those who rank alike, counted
    without sorting (a cut places its players one by one: ranking the cut at each would cost
    the square of its size)."""
    bust = next((b for b in exit_.players if b.player == player), None)
    if bust is None:
        return None
    ranks = [exit_.rank(b) for b in exit_.players]
    mine = exit_.rank(bust)
    return _placement(state, exit_, player,
                      bottom - len(exit_.players) + 1 + sum(r < mine for r in ranks),
                      ranks.count(mine))


def place(state: TournamentBase, placement: Placement) -> None:
    """Give a player out the finishing position the ranking gives them (oldest exit first)."""
    expected = (_placement_of(state, state.exits[0], state.bottom, placement.player)
                if state.exits else None)
    if state.registration_open or placement != expected:
        raise RuleViolation(f"{placement.player} does not finish at {placement.position} now",
                            rule="position-mismatch")
    entrant = state.entrants[placement.player]
    if entrant.status is not Status.OUT:
        raise RuleViolation(f"{placement.player} is already placed", rule="position-mismatch")
    entrant.status, entrant.position, entrant.tied = (Status.PLACED, placement.position,
                                                      placement.tied)
    head = state.exits[0]
    if all(state.entrants[b.player].status is Status.PLACED for b in head.players):
        state.exits.pop(0)
        state.bottom -= len(head.players)


def standings(state: TournamentBase) -> list[tuple[str, int, int]]:
    """(player, position, tied) of every placed player, and of the sole survivor at 1."""
    rows = [(e.player, e.position, e.tied) for e in state.entrants.values()
            if e.position is not None]
    survivors = state.in_play()
    if state.decided and survivors:
        rows.append((survivors[0], 1, 1))
    return sorted(rows, key=lambda r: (r[1], state.entrants[r[0]].draw_rank or 0))


def prizes(state: TournamentBase) -> dict[str, int]:
    """Each player's prize once the tournament is decided (see `shares`)."""
    table = (list(state.settings.fixed_prizes) if state.settings.fixed_prizes
             else prize_table(state.pool, state.settings.prizes))
    groups: dict[int, list[str]] = {}
    for player, position, _ in standings(state):
        groups.setdefault(position, []).append(player)
    prizes: dict[str, int] = {}
    for position, players in groups.items():
        covered = sum(table[p - 1] for p in range(position, position + len(players))
                      if p <= len(table))
        prizes.update(zip(players, shares(covered, len(players)), strict=True))
    return prizes


def require_decided(state: TournamentBase) -> None:
    if not state.decided:
        raise OutOfTurn("prizes and the finish wait until one player is left",
                        rule="not-decided")


def award(state: TournamentBase, player: str, amount: int) -> None:
    entrant = state.entrant(player)
    require_decided(state)
    if entrant.prize is not None or amount < 1 or prizes(state).get(player) != amount:
        raise RuleViolation(f"{player}'s prize is not {amount}", rule="prize-mismatch")
    entrant.prize = amount


def finish(state: TournamentBase, seed: bytes, winners: Sequence[str]) -> None:
    """Declare the winners, check every prize awarded, and reveal the seed: the draw and
    every break must be what it gives."""
    require_decided(state)
    ranked = standings(state)
    if list(winners) != [player for player, position, _ in ranked if position == 1]:
        raise RuleViolation("the winners are the players at position 1", rule="winners")
    due = prizes(state)
    if any(amount and state.entrants[p].prize != amount for p, amount in due.items()):
        raise RuleViolation("every prize is awarded before the finish", rule="prizes-unpaid")
    seating.verify(state, seed)
    for player in state.in_play():
        entrant = state.entrants[player]
        entrant.status, entrant.position, entrant.tied, entrant.seat = (Status.PLACED, 1, 1,
                                                                        None)
    state.seed = seed.hex()
    state.phase = Phase.FINISHED


def results(state: TournamentBase) -> list[Result]:
    """Finishing positions and prizes, the winners first (the draw's order within a tie)."""
    return [Result(player=player, position=position, tied=tied,
                   entries=state.entrants[player].entries,
                   prize=state.entrants[player].prize or 0)
            for player, position, tied in standings(state)]


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
