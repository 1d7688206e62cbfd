"""A format's preview on the pure engine: whole tournaments of bots in memory, summarised."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from domain.game.settings import Variant
from domain.tournament.formats import Advance, Stage, TieBreak
from domain.tournament.presets import preset
from domain.tournament.settings import TournamentSettings
from infra.services.preview import preview

_WATCHED: list[list[str]] = []  # the open watches: what each saw touched


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHED:
        return
    writing = event == "open" and isinstance(args[1], str) and any(m in args[1] for m in "wax+")
    if writing or event.startswith(("sqlite3.", "socket.", "os.mkdir", "os.remove",
                                    "os.rename", "shutil.", "tempfile.", "subprocess.")):
        _WATCHED[-1].append(f"{event} {args[0]!r}")


sys.addaudithook(_audit)  # an audit hook stays for the process: it watches only in `watch`


@contextmanager
def watch() -> Iterator[list[str]]:
    """The files written, folders made, databases and sockets opened inside the block."""
    seen: list[str] = []
    _WATCHED.append(seen)
    try:
        yield seen
    finally:
        _WATCHED.pop()


def test_a_preview_reports_duration_stacks_at_the_cuts_and_play_offs() -> None:
    heats = preset("punto-banco-heats", coups_per_round=3, tables=2, bet_seconds=0)
    seen: list[int] = []
    found = preview(heats, 12, 2, seed=b"look", pace=60, on_run=lambda run: seen.append(run.coups))
    assert found.runs == len(found.each) == len(seen) == 2
    assert found.coups.mean == 3 * 4 and found.minutes.mean == 12.0  # 4 rounds of 3 coups
    assert found.minutes_dealing == found.minutes  # no bet clock
    assert [s.stage for s in found.spreads] == ["heats", "heats", "semi-final", "final"]
    players = [s.players for s in found.spreads]
    assert players[0] == 12 and players == sorted(players, reverse=True) and players[-1] == 4
    assert all(s.smallest <= s.median <= s.largest for s in found.spreads)
    assert found.runs_with_playoff <= found.runs and found.playoffs >= found.runs_with_playoff
    again = preview(heats, 12, 2, seed=b"look", pace=60)
    assert again.each == found.each  # the same seeds play the same runs


def test_the_preview_touches_no_file_no_database_no_network() -> None:
    with watch() as touched:
        found = preview(preset("chemin-de-fer-freeze-out", coups_per_round=2), 6, 1,
                        seed=b"quiet")
    assert found.runs == 1 and found.coups.mean > 0
    assert touched == []
    with watch() as touched:  # the watch sees what a store would do
        open("/dev/null", "w").close()
    assert touched == ["open '/dev/null'"]


def test_the_same_seed_gives_the_same_report_another_seed_another() -> None:
    heats = preset("punto-banco-heats", coups_per_round=2, tables=2)
    first = preview(heats, 14, 3, seed=b"same")
    assert msgspec.json.encode(preview(heats, 14, 3, seed=b"same")) == msgspec.json.encode(first)
    other = preview(heats, 14, 3, seed=b"other")
    assert [r.spreads for r in other.each] != [r.spreads for r in first.each]


def test_a_tie_on_the_cut_line_is_reported_as_play_offs() -> None:
    """Every stake all-in, every winner doubles: the winners of a table tie for its one
    place, and a play-off coup settles it."""
    all_in = TournamentSettings(
        variant=Variant.PUNTO_BANCO, seats_per_table=4, starting_chips=1_000, min_stake=1_000,
        max_stake=1_000, coups_per_round=1, tie_break=TieBreak.PLAY_OFF,
        stages=(Stage(name="heat", rounds=1, advance=Advance(per_table=1)),
                Stage(name="final", rounds=1))).check()
    found = preview(all_in, 8, 4, seed=b"tie")
    assert found.runs_with_playoff == 4 and found.playoffs == sum(r.playoffs for r in found.each)
    assert all(r.playoffs >= 1 for r in found.each)
    assert found.spreads[0].stage == "heat" and found.spreads[0].largest == 2_000
    shared = preview(msgspec.structs.replace(all_in, tie_break=TieBreak.SHARE), 8, 4,
                     seed=b"tie")
    assert shared.playoffs == shared.runs_with_playoff == 0  # tied players all go on


def test_rounds_by_minutes_end_by_minutes_at_the_stated_pace() -> None:
    """Four rounds of three minutes, a hundred coups allowed: a minute a coup plays three a
    round, half a minute six; the minutes stay twelve."""
    timed = preset("punto-banco-heats", coups_per_round=100, minutes_per_round=3, tables=2,
                   bet_seconds=0)
    slow = preview(timed, 12, 1, seed=b"clock", pace=60)
    fast = preview(timed, 12, 1, seed=b"clock", pace=30)
    assert slow.coups.mean == 4 * 3 and fast.coups.mean == 4 * 6
    assert slow.minutes.mean == fast.minutes.mean == 12.0
    assert slow.pace_seconds == 60 and fast.pace_seconds == 30


def test_minutes_count_the_format_s_bet_clock_at_every_turn() -> None:
    """12 players on 2 tables betting in turn, 20 s a turn, a minute's dealing a coup: the
    heats' 6 coups take 60 + 6 x 20 s each (6 players a table), the semi-final's 3 as many
    (its 6 players at one table), the final's 3, 60 + 4 x 20 s: 34 minutes; 12 at the
    dealing pace alone. Rounds of 3 minutes: one coup each, the final's two."""
    heats = preset("punto-banco-heats", coups_per_round=3, tables=2)
    assert heats.bet_seconds == 20
    found = preview(heats, 12, 1, seed=b"look", pace=60)
    assert found.coups.mean == 12 and found.minutes_dealing.mean == 12.0
    assert found.minutes.mean == (6 * 180 + 3 * 180 + 3 * 140) / 60 == 34.0
    timed = preview(msgspec.structs.replace(heats, coups_per_round=100, minutes_per_round=3),
                    12, 1, seed=b"look", pace=60)
    assert timed.coups.mean == 1 + 1 + 1 + 2  # 180 s a coup, then the final's 140 s twice


def test_a_preview_says_what_sitting_out_costs_and_how_ties_are_settled() -> None:
    idle = msgspec.structs.replace(preset("punto-banco-eight"), min_bets=6, coups_per_round=6)
    found = preview(idle, 16, 1, seed=b"rules", pace=30)
    assert found.rules == [
        "a turn to bet the bet clock passes costs its player the round's minimum stake, taken "
        "by the house",
        "a player with fewer than 6 bets (coups with chips at stake) in a round since the last "
        "cut ranks after everyone who made them",
        "a tie on a cut's line is played off by an extra coup: who bets in it goes first, then "
        "its chips; tied after 3 play-offs, the seating draw's order"]
    assert sum(found.settled.values()) == found.playoffs
    assert preview(msgspec.structs.replace(idle, tie_break=TieBreak.SHARE, min_bets=msgspec.UNSET,
                                           sitting_out=msgspec.UNSET), 16, 1).rules == [
        "a turn to bet the bet clock passes costs nothing",
        "a tie on a cut's line: every tied player goes on"]
