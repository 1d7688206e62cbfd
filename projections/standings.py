"""Standings: each player's chips, coups played and biggest win, per table and per tournament.

`view_standings` holds one row per player and table (with the table's tournament, from
`Table.Opened`). A player's chips are their seat's chips, plus the bank while they hold it;
a player who left a table keeps a row with the chips they left with (`seated` false). A coup
played is one where the player was paid or charged (a bet, a stake, a duel) or held the bank;
a coup's win is the change in the player's chips, bank included, from the close of betting to
the close of the coup; the biggest win is the largest such change (0 if none was positive).

Per tournament, a player's chips are the sum over the tables where they are seated now, or,
if they are seated nowhere, over the tables they left; coups are summed and the biggest win
is the largest of the tables'.

Ranking: more chips ranks first; equal chips share a rank and the next rank skips (1, 1, 3:
standard competition ranking); players of equal rank are listed by player id.

A tournament's standings (`tournament_standings`) are the one order the API, the CLI and the
page show: the players still in by chips (the earlier drawn first on a tie; those short of the
format's minimum of bets since the last cut after the others, as the cut will rank them), then
the players out, by their finishing positions (those out but not yet placed, while late
registration is open, by how long they lasted); once the tournament is finished, its official
positions and prizes, the winner first: the results' order.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec

from domain.table.aggregate import Table
from domain.tournament.entrants import Entrant, Status
from domain.tournament.state import TournamentState
from infra.store.database import Database
from projections.table_fold import Before, Folded, TableFoldView, holdings_of
from projections.view import Event


class PlayerStats(msgspec.Struct):
    coups: int = 0
    biggest_win: int = 0
    left_with: int | None = None


class StandingsMemo(msgspec.Struct):
    players: dict[str, PlayerStats] = msgspec.field(default_factory=dict)
    at_close_of_betting: dict[str, int] = msgspec.field(default_factory=dict)
    in_coup: list[str] = msgspec.field(default_factory=list)


class Standing(msgspec.Struct, frozen=True):
    rank: int
    player: str
    chips: int
    coups: int
    biggest_win: int
    tables: list[str]
    status: str = ""  # in a tournament: registered, seated, out, placed
    position: int | None = None  # the finishing position, once given
    prize: int | None = None


class StandingsView(TableFoldView[StandingsMemo]):
    name = "standings"
    memo_type = StandingsMemo
    tables = ("view_standings",)
    schema = (
        "CREATE TABLE IF NOT EXISTS {view_standings} ("
        " table_id TEXT NOT NULL, player TEXT NOT NULL, table_name TEXT NOT NULL,"
        " tournament TEXT, chips BIGINT NOT NULL, seated BOOLEAN NOT NULL,"
        " coups BIGINT NOT NULL, biggest_win BIGINT NOT NULL, PRIMARY KEY (table_id, player))",
        "CREATE INDEX IF NOT EXISTS view_standings_tournament ON {view_standings} (tournament)",
    )

    def observe(self, folded: Folded[StandingsMemo], event: Event,
                before: Before | None) -> None:
        memo, table = folded.memo, folded.table
        assert table is not None
        match event:
            case Table.PlayerSeated(player=player):
                memo.players.setdefault(player, PlayerStats()).left_with = None
            case Table.PlayerLeft(player=player):
                assert before is not None
                memo.players[player].left_with = before.holdings()[player]
            case Table.BettingClosed():
                assert before is not None
                memo.at_close_of_betting, memo.in_coup = before.holdings(), []
            case Table.PayoutMade(payout=payout):
                if payout.player not in memo.in_coup:
                    memo.in_coup.append(payout.player)
            case Table.CoupClosed(banker=banker):
                after = holdings_of(table)
                played = dict.fromkeys([*memo.in_coup, *([banker] if banker else [])])
                for player in played:
                    stats = memo.players[player]
                    stats.coups += 1
                    won = after.get(player, 0) - memo.at_close_of_betting.get(player, 0)
                    stats.biggest_win = max(stats.biggest_win, won)
                memo.at_close_of_betting, memo.in_coup = {}, []

    def flush(self, cursor: Any, folded: Folded[StandingsMemo]) -> None:
        table = folded.table
        assert table is not None
        now = holdings_of(table)
        for player, stats in folded.memo.players.items():
            seated = player in now
            chips = now[player] if seated else stats.left_with or 0
            self.database.execute(
                cursor,
                "INSERT INTO {view_standings} (table_id, player, table_name, tournament, chips,"
                " seated, coups, biggest_win) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (table_id, player) DO UPDATE SET chips = excluded.chips,"
                " seated = excluded.seated, coups = excluded.coups,"
                " biggest_win = excluded.biggest_win",
                (str(folded.table_id), player, table.name, table.tournament, chips, seated,
                 stats.coups, stats.biggest_win),
            )


class _Total(msgspec.Struct):
    chips: int = 0
    left: int = 0
    seated: bool = False
    coups: int = 0
    biggest_win: int = 0
    tables: list[str] = msgspec.field(default_factory=list)


def ranked(totals: dict[str, _Total]) -> list[Standing]:
    """Standard competition ranking on chips, ties listed by player id."""
    chips = {p: t.chips if t.seated else t.left for p, t in totals.items()}
    order = sorted(totals, key=lambda p: (-chips[p], p))
    return [
        Standing(1 + sum(1 for q in order if chips[q] > chips[p]), p, chips[p], totals[p].coups,
                 totals[p].biggest_win, totals[p].tables)
        for p in order
    ]


def tournament_standings(database: Database, state: TournamentState) -> list[Standing]:
    """A tournament's standings: in play by chips, then out by finishing position."""
    stats = {row.player: row for row in standings(database, tournament=state.name)}
    entrants = state.entrants
    def standing(entrant: Entrant) -> tuple[bool, int]:
        return entrant.player in state.short, -_chips(stats, entrant.player, entrant.chips)

    in_play = sorted((e for e in entrants.values()
                      if e.status in (Status.SEATED, Status.REGISTERED)),
                     key=lambda e: (*standing(e), e.draw_rank or 0))
    waiting = [bust.player for exit_ in reversed(state.exits) for bust in exit_.ranked()]
    placed = sorted((e for e in entrants.values() if e.position is not None),
                    key=lambda e: (e.position or 0, e.draw_rank or 0))
    rows: list[Standing] = []
    for entrant in [*in_play, *(entrants[p] for p in waiting), *placed]:
        chips = _chips(stats, entrant.player, entrant.chips) if entrant in in_play else (
            stats[entrant.player].chips if entrant.player in stats else 0)
        if entrant.position is not None:
            rank = entrant.position
        elif entrant in in_play:
            rank = 1 + sum(1 for e in in_play if standing(e) < standing(entrant))
        else:
            rank = len(rows) + 1
        found = stats.get(entrant.player)
        rows.append(Standing(rank, entrant.player, chips, found.coups if found else 0,
                             found.biggest_win if found else 0, found.tables if found else [],
                             status=entrant.status.value, position=entrant.position,
                             prize=entrant.prize))
    return rows


def _chips(stats: dict[str, Standing], player: str, recorded: int) -> int:
    found = stats.get(player)
    return found.chips if found is not None else recorded


def standings(database: Database, *, tournament: str | None = None,
              table_id: UUID | None = None) -> list[Standing]:
    """The standings of a tournament's tables (by chips), or of one table."""
    where, key = ("tournament", tournament) if table_id is None else ("table_id", str(table_id))
    rows = database.read_all(
        "SELECT player, table_name, chips, seated, coups, biggest_win FROM {view_standings}"
        f" WHERE {where} = ? ORDER BY table_name", (key,))
    totals: dict[str, _Total] = {}
    for row in rows:
        total = totals.setdefault(row["player"], _Total())
        if row["seated"]:
            total.chips += row["chips"]
            total.seated = True
        else:
            total.left += row["chips"]
        total.coups += row["coups"]
        total.biggest_win = max(total.biggest_win, row["biggest_win"])
        total.tables.append(row["table_name"])
    return ranked(totals)
