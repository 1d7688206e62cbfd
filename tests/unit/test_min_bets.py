"""What sitting out costs, the other way round (issue 37): a format's minimum of bets a round
(`TournamentSettings.min_bets`) ranks a player short of it after everyone who met it at the
next cut, the final's included; and a play-off is settled as the format's `play-off` says,
"tied players play an extra coup: who bets goes first, then its chips" (`TieBreak.PLAY_OFF`),
tied again after the third by the draw's order, what settled it recorded with the play-off."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
import pytest

from domain.errors import RuleViolation
from domain.table import commands as c
from domain.table.base import Phase as TablePhase
from domain.tournament.aggregate import Tournament
from domain.tournament.commands import (
    EndRound,
    EndStep,
    FinishTournament,
    RecordBustOuts,
    RegisterPlayer,
    SettlePlayOff,
    StartRound,
    StartStep,
)
from domain.tournament.entrants import Bust
from domain.tournament.formats import Advance, Stage, TieBreak
from domain.tournament.records import PlayOffDecision
from domain.tournament.settings import TournamentSettings
from domain.tournament.stages import MAX_PLAYOFFS
from infra.store.mapper import MsgpackTranscoder, MsgspecMapper
from projections.standings import tournament_standings
from tests.unit.test_betting_order import bet, play_until, rotating_table
from tests.unit.test_formats import LEVELS, Run, fmt, heats_and_final, refused


def minimum(settings: TournamentSettings, bets: int = 2) -> TournamentSettings:
    return msgspec.structs.replace(settings, min_bets=bets)


def played(run: Run, chips: Mapping[str, int], bets: Mapping[str, int]) -> None:
    """A round of the format's coups ending with `chips` and each player's `bets` in it (the
    director reports the bets made since the start: the last round's added)."""
    run.do(StartRound, at=0.0)
    now = {p: run.s.entrants[p].chips for p in run.s.in_play()}
    while not run.s.round_over(0.0):
        run.do(StartStep, coups={t: 0 for t in run.s.tables}, chips=now)
        run.do(EndStep)
    so_far = {p: run.s.coups_bet.get(p, 0) + bets.get(p, 0) for p in run.s.in_play()}
    run.do(EndRound, chips={**now, **chips}, coups_bet=so_far)


def positions(run: Run) -> dict[str, int | None]:
    return {p: e.position for p, e in run.s.entrants.items()}


# --- the format -----------------------------------------------------------------------------


@pytest.mark.parametrize(("settings", "words"), [
    (minimum(heats_and_final(overall=2), 4), "a round of 3 coups cannot hold 4 bets"),
    (minimum(heats_and_final(overall=2), -1), "0 (none) or more"),
    (minimum(fmt(Stage(name="freeze-out", rounds=0, limits=LEVELS))), "has none"),
])
def test_a_minimum_no_round_can_hold_or_no_cut_ranks_by_is_refused(
        settings: TournamentSettings, words: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        settings.check()
    assert caught.value.rule == "tournament-min-bets" and words in caught.value.message


def test_formats_recorded_before_the_setting_encode_and_decode_as_they_did() -> None:
    before = heats_and_final(overall=2)
    assert b"min_bets" not in msgspec.json.encode(before)
    assert msgspec.json.decode(msgspec.json.encode(before), type=TournamentSettings) == before
    after = minimum(before).check()
    assert msgspec.json.decode(msgspec.json.encode(after), type=TournamentSettings).min_bets == 2
    assert minimum(before, 0).check().min_bets == 0  # none, as unset


# --- the ranking ------------------------------------------------------------------------------


def test_a_player_short_of_the_minimum_ranks_after_everyone_who_met_it_at_the_cut() -> None:
    run = Run(minimum(heats_and_final(overall=2)), 6).start()
    a, b, c_, d, e, f = run.s.in_play()
    played(run, {a: 5000, b: 2000, c_: 1500, d: 1400, e: 900, f: 800},
           {a: 1, b: 2, c_: 3, d: 2, e: 0, f: 2})
    # a's 5000 and e's 900 are short of 2 bets: b and c go on, a and e rank last
    assert sorted(run.s.in_play()) == sorted([b, c_])
    assert positions(run) == {a: 5, b: None, c_: None, d: 3, e: 6, f: 4}
    assert run.s.short == []  # the cut is made: the next counts afresh


def test_an_idle_player_cannot_win_the_final() -> None:
    run = Run(minimum(heats_and_final(overall=3)), 6).start()
    players = run.s.in_play()
    played(run, {p: 1000 + 10 * i for i, p in enumerate(players)}, {p: 3 for p in players})
    x, y, z = sorted(run.s.in_play())
    played(run, {x: 9000, y: 200, z: 100}, {x: 0, y: 2, z: 2})
    run.do(FinishTournament)
    assert [(r.player, r.position) for r in run.s.results()[:3]] == [(y, 1), (z, 2), (x, 3)]


def test_every_round_since_the_last_cut_counts() -> None:
    run = Run(minimum(fmt(Stage(name="heats", rounds=2, limits=LEVELS,
                                advance=Advance(overall=2)),
                          Stage(name="final", rounds=1, limits=LEVELS))), 4).start()
    a, b, c_, d = run.s.in_play()
    played(run, {}, {a: 0, b: 2, c_: 2, d: 2})  # no cut yet: a is short of this round's
    assert run.s.short == [a]
    played(run, {a: 3000, b: 2000, c_: 1500, d: 1000}, {a: 3, b: 2, c_: 2, d: 2})
    assert sorted(run.s.in_play()) == sorted([b, c_]) and run.s.entrants[a].position == 4


def test_a_stage_that_cuts_nobody_at_its_rounds_ends_ranks_nobody_by_the_minimum() -> None:
    run = Run(minimum(fmt(Stage(name="heats", rounds=1, limits=LEVELS,
                                advance=Advance(overall=3)),
                          Stage(name="freeze-out", rounds=0, limits=LEVELS))), 4).start()
    a, *others = run.s.in_play()
    played(run, {a: 2000}, {a: 2, **{p: 2 for p in others}})
    survivor = run.s.in_play()[0]
    played(run, {}, {survivor: 0})  # the final plays until one is left: busting decides
    assert run.s.short == []


def test_a_re_entry_starts_afresh() -> None:
    run = Run(minimum(fmt(Stage(name="heats", rounds=2, limits=LEVELS,
                                advance=Advance(overall=2)),
                          Stage(name="final", rounds=1, limits=LEVELS),
                          late_rounds=2, reentries=1)), 4).start()
    a, *others = run.s.in_play()
    played(run, {}, {a: 0, **{p: 2 for p in others}})
    assert run.s.short == [a]
    run.do(StartRound, at=0.0)
    run.do(RecordBustOuts, table=run.s.entrants[a].table, coup=4,
           busted=[Bust(player=a, chips=1000)])
    run.do(RegisterPlayer, player=a)  # a busted player registering again re-enters
    assert run.s.entrants[a].entries == 2 and run.s.short == []


class NoViews:
    """A database whose standings view is empty: the tournament's own chips stand."""

    def read_all(self, *_: object) -> list[dict[str, object]]:
        return []


def test_the_standings_rank_a_player_short_since_the_last_cut_as_the_cut_will() -> None:
    run = Run(minimum(fmt(Stage(name="heats", rounds=2, limits=LEVELS,
                                advance=Advance(overall=2)),
                          Stage(name="final", rounds=1, limits=LEVELS))), 4).start()
    a, b, c_, d = run.s.in_play()
    played(run, {a: 3000, b: 2000, c_: 2000, d: 1000}, {a: 1, b: 2, c_: 2, d: 2})
    rows = tournament_standings(NoViews(), run.s)  # type: ignore[arg-type]
    assert [(r.rank, r.player) for r in rows] == [(1, b), (1, c_), (3, d), (4, a)]


def test_a_round_ends_with_everyone_s_bets_never_fewer_than_before() -> None:
    run = Run(minimum(heats_and_final(overall=2)), 4).start()
    run.do(StartRound, at=0.0)
    now = {p: run.s.entrants[p].chips for p in run.s.in_play()}
    while not run.s.round_over(0.0):
        run.do(StartStep, coups={t: 0 for t in run.s.tables}, chips=now)
        run.do(EndStep)
    refused(run, "round-bets", EndRound, chips=now)
    refused(run, "round-bets", EndRound, chips=now, coups_bet={p: 3 for p in list(now)[1:]})
    run.s.coups_bet = {p: 2 for p in now}
    refused(run, "round-bets", EndRound, chips=now, coups_bet={p: 1 for p in now})


def coup_bet_by_ann(counts_bets: bool) -> dict[str, int]:
    """What a table counts of a coup ann bets in and bob and cy pass."""
    table, cards = rotating_table()
    if counts_bets:
        table.state.settings = msgspec.structs.replace(table.state.settings, counts_bets=True)
    table.execute(bet("ann"), cards)
    for player in ("bob", "cy"):
        table.execute(c.PassBetTurn(command_id=f"pass-{player}", actor=player, player=player),
                      cards)
    play_until(table, cards, lambda: table.state.coup_number == 1
               and table.state.phase is TablePhase.BETTING)
    return table.state.coups_bet


def test_a_table_counts_the_coups_each_player_had_chips_at_stake_in_where_asked() -> None:
    assert coup_bet_by_ann(counts_bets=True) == {"ann": 1}
    assert coup_bet_by_ann(counts_bets=False) == {}  # as tables opened before replay


def test_a_tournament_s_tables_count_the_bets_for_a_minimum_or_a_play_off() -> None:
    assert minimum(heats_and_final(overall=2)).table_settings().counts_bets is True
    played_off = msgspec.structs.replace(heats_and_final(overall=2), tie_break=TieBreak.PLAY_OFF)
    assert played_off.table_settings().counts_bets is True
    assert b"counts_bets" not in msgspec.json.encode(heats_and_final(overall=2).table_settings())


# --- the play-off -----------------------------------------------------------------------------


def tied(players: int = 6) -> tuple[Run, str, str]:
    """A cut of two with b and c tied on its line, to be played off."""
    run = Run(msgspec.structs.replace(heats_and_final(overall=2),
                                      tie_break=TieBreak.PLAY_OFF), players).start()
    a, b, c_, *rest = run.s.in_play()
    run.round({a: 2000, b: 1500, c_: 1500, **{p: 100 for p in rest}})
    assert run.s.playoff is not None
    return run, b, c_


def decided(run: Run) -> list[Any]:
    return [(e.idle, e.decided_by) for e in run.t.collect_events()
            if isinstance(e, Tournament.PlayOffPlayed)]


def test_who_bets_in_the_play_off_goes_before_who_does_not_whatever_the_chips() -> None:
    """"who bets goes first": c kept the play-off's stack without a bet, b bet and lost."""
    run, b, c_ = tied()
    run.t.collect_events()
    run.do(SettlePlayOff, table="po", chips={b: 10, c_: 1000}, idle=[c_])
    assert decided(run) == [([c_], PlayOffDecision.BETS)]
    assert b in run.s.in_play() and c_ not in run.s.in_play()
    assert run.s.playoff_results[-1].decision is PlayOffDecision.BETS


def test_between_players_who_bet_the_play_off_s_chips_decide() -> None:
    """"then its chips"."""
    run, b, c_ = tied()
    run.t.collect_events()
    run.do(SettlePlayOff, table="po", chips={b: 30, c_: 55})
    assert decided(run) == [([], PlayOffDecision.CHIPS)] and c_ in run.s.in_play()


def test_players_who_never_bet_play_off_again_then_the_draw_decides_and_it_is_recorded() -> None:
    """Nobody bets: tied again, another play-off; after the third the draw's order, recorded
    as such rather than silently."""
    run, b, c_ = tied()
    run.t.collect_events()
    for _ in range(MAX_PLAYOFFS):
        run.do(SettlePlayOff, table="po", chips={b: 100, c_: 100}, idle=[b, c_])
    assert decided(run) == [([b, c_], PlayOffDecision.AGAIN)] * (MAX_PLAYOFFS - 1) + [
        ([b, c_], PlayOffDecision.DRAW_ORDER)]
    first = min((b, c_), key=lambda p: run.s.entrants[p].draw_rank)
    assert run.s.playoff is None and first in run.s.in_play()
    assert [r.decision for r in run.s.playoff_results][-1] is PlayOffDecision.DRAW_ORDER


NEW_FIELDS = {"PlayOffPlayed": ("idle", "decided_by"), "RoundEnded": ("coups_bet",)}


def test_rounds_and_play_offs_recorded_before_these_rules_still_replay() -> None:
    run, b, c_ = tied()
    run.do(SettlePlayOff, table="po", chips={b: 30, c_: 55})
    mapper, untyped = MsgspecMapper(), MsgpackTranscoder()
    replayed: Any = None
    for recorded in run.t.collect_events():
        stored = mapper.to_stored_event(recorded)
        if type(recorded).__name__ in NEW_FIELDS:
            state = untyped.decode(stored.state)
            for field in NEW_FIELDS[type(recorded).__name__]:
                del state[field]
            stored = type(stored)(originator_id=stored.originator_id,
                                  originator_version=stored.originator_version,
                                  topic=stored.topic, state=untyped.encode(state))
        replayed = mapper.to_domain_event(stored).mutate(replayed)
    assert msgspec.to_builtins(replayed.state) == msgspec.to_builtins(run.s)


def test_a_recorded_decision_the_play_off_does_not_give_is_refused() -> None:
    run, b, c_ = tied()
    with pytest.raises(RuleViolation) as caught:
        run.s.settle_playoff({b: 30, c_: 55}, [], PlayOffDecision.BETS)
    assert caught.value.rule == "play-off-decision"
