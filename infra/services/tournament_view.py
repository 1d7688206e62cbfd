"""A tournament as the big screen and the results page show it: `TournamentView` (one JSON
shape for `GET /tournaments/{id}` and `sabot tournament show --json`, made by `view_of` from the
tournament, its open tables and its director's lease) and `Results`."""

from __future__ import annotations

import msgspec

from domain.table.state import TableState
from domain.tournament import stages
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Limits
from domain.tournament.prizes import prize_table
from domain.tournament.records import Announcement, PlayOffResult
from domain.tournament.records import Phase as TournamentPhase
from infra.services.direction import chips_of
from infra.store.leases import Lease


class SeatLine(msgspec.Struct, frozen=True):
    player: str
    chips: int
    bot: bool


class TableLine(msgspec.Struct, frozen=True):
    name: str
    players: list[SeatLine]
    croupier: bool = False  # dealt by a croupier (`TournamentBase.croupier_deals`), else the house


class DirectorLine(msgspec.Struct, frozen=True, kw_only=True):
    """Who directs the tournament; `alive` false: its lease ran out (its worker died or was
    stopped) and no other took it: the tournament waits for a worker."""

    holder: str
    epoch: int
    alive: bool
    seconds_since: float  # since the lease ran out (0 while alive)


ANNOUNCEMENTS_SHOWN = 5  # the latest announcements a tournament's view carries


class TournamentView(msgspec.Struct, frozen=True, kw_only=True):
    """A tournament as the big screen shows it (`GET /tournaments/{id}`)."""

    id: str
    name: str
    variant: str
    status: str  # registering, running, paused, finished
    stage: str
    round: int
    coups_left: int | None
    seconds_left: float | None
    min_stake: int
    max_stake: int
    entrants: int
    players_left: int
    average_stack: int
    prize_pool: int
    payouts: list[int]  # each paid position's prize (first place first), at the pool now
    secret_bet: bool  # the stage under way allows each player one secret bet a round
    next_cut: int | None
    playoff: list[str]
    winner: str | None
    director: DirectorLine | None  # None: no director has taken it yet
    tables: list[TableLine]
    announcements: list[Announcement] = msgspec.field(default_factory=list)  # newest first
    break_seconds_left: float | None = None  # a break between rounds under way (0: it is over)
    next_limits: Limits | None = None  # the next round's, None: no round known to follow
    last_coup: bool = False  # the coup under way (or about to be) is the round's last
    archived: bool = False  # filed away by the organiser once finished (out of the listings)
    sitting_out: str = "free"  # what a turn the bet clock passes costs: free, min-stake
    min_bets: int = 0  # the format's minimum of bets a round (0: none)
    tie_break: str = "share"  # how a tie on the line of a cut is settled
    short: list[str] = msgspec.field(default_factory=list)  # of `min_bets` since the last cut
    last_playoff: PlayOffResult | None = None  # the latest play-off: what settled it


class Position(msgspec.Struct, frozen=True):
    player: str
    position: int
    tied: int
    prize: int


class Results(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    name: str
    status: str
    winner: str | None
    winners: list[str]
    prize_pool: int
    positions: list[Position]
    published: bool = False  # false: provisional, a dispute may still move chips
    published_by: str | None = None
    published_at: float | None = None  # seconds since the epoch


def view_of(tournament: Tournament, tables: dict[str, TableState], lease: Lease | None,
            now: float) -> TournamentView:
    state, settings = tournament.state, tournament.state.settings
    chips = chips_of(tables.values())
    winners = [r.player for r in state.results() if r.position == 1]
    finished = state.phase is TournamentPhase.FINISHED
    left = winners if finished else state.in_play() if state.seating else list(state.entrants)
    stacks = [chips.get(p, state.entrants[p].chips or state.settings.starting_chips)
              for p in left]
    lines = [TableLine(name=name, players=[
        SeatLine(player=e.player, chips=chips.get(e.player, e.chips), bot=e.bot)
        for e in state.seated_at(name)], croupier=state.croupier_deals(name))
        for name in state.tables]
    return TournamentView(
        id=str(tournament.id), name=state.name, variant=state.settings.variant.value,
        status=state.status.value, stage=state.current.name, round=state.round,
        coups_left=state.coups_left(), seconds_left=state.seconds_left(now),
        min_stake=state.limits.min_stake, max_stake=state.limits.max_stake,
        entrants=state.entries, players_left=len(left),
        average_stack=sum(stacks) // len(stacks) if stacks else 0, prize_pool=state.pool,
        payouts=list(state.settings.fixed_prizes) or prize_table(state.pool,
                                                                 state.settings.prizes),
        secret_bet=state.current.secret_bet,
        next_cut=state.next_cut(), playoff=state.playoff.players if state.playoff else [],
        winner=winners[0] if finished and len(winners) == 1 else None,
        director=None if lease is None else DirectorLine(
            holder=lease.holder, epoch=lease.epoch, alive=lease.expires >= now,
            seconds_since=round(max(0.0, now - lease.expires), 1)),
        tables=lines, announcements=state.announcements[::-1][:ANNOUNCEMENTS_SHOWN],
        break_seconds_left=state.break_left(now), next_limits=stages.next_limits(state),
        last_coup=stages.last_coup(state, now), archived=state.archived,
        sitting_out=str(settings.sitting_out or "free"), min_bets=settings.min_bets or 0,
        tie_break=settings.tie_break.value, short=list(state.short),
        last_playoff=state.playoff_results[-1] if state.playoff_results else None)
