"""Breaks between rounds, a format field (after round N, M minutes): the director records the
break when the round ends (`BreakStarted`, with its clock), holds the next round until it is
over, a pause stops the break's clock as it stops a round's, and a format's breaks are
checked at creation."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.tournament import commands as tc
from domain.tournament import stages
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import RoundBreak, Stage
from domain.tournament.records import Phase
from infra.services.direction import Tick, direct
from infra.services.preview import MemoryDesk, play_once
from tests.unit.test_formats import LEVELS, SEED, Run, fmt, refused

BREAK = RoundBreak(after_round=1, minutes=0.5)


def test_the_next_round_waits_for_the_break_and_a_pause_stops_its_clock() -> None:
    run = Run(fmt(Stage(name="only", rounds=3, coups=1, limits=LEVELS), breaks=(BREAK,)), 4)
    run.start()
    run.round(at=100.0)
    assert run.s.break_due() == BREAK and run.s.break_left(200.0) is None
    refused(run, "break-due", tc.StartRound, at=200.0)
    run.do(tc.StartBreak, at=200.0)
    assert run.s.break_due() is None and run.s.break_left(210.0) == 20.0
    refused(run, "break-mismatch", tc.StartBreak, at=201.0)
    refused(run, "on-break", tc.StartRound, at=229.0)
    run.do(tc.PauseTournament, at=210.0)
    assert run.s.break_left(5000.0) == 20.0  # paused: the break's clock stops too
    run.do(tc.ResumeTournament, at=300.0)
    assert run.s.break_left(310.0) == 10.0
    refused(run, "on-break", tc.StartRound, at=319.0)
    run.do(tc.StartRound, at=320.0)
    assert run.s.phase is Phase.RUNNING and run.s.break_left(320.0) is None
    chips = {p: 1000 for p in run.s.in_play()}
    run.do(tc.StartStep, coups={t: 0 for t in run.s.tables}, chips=chips)
    run.do(tc.EndStep)
    run.do(tc.EndRound, chips=chips)
    assert run.s.break_due() is None  # none after round 2: the third may start at once
    run.do(tc.StartRound, at=400.0)


def test_the_director_records_the_break_and_holds_the_next_round_until_it_ends() -> None:
    settings = fmt(Stage(name="only", rounds=2, coups=1, limits=LEVELS),
                   breaks=(RoundBreak(after_round=1, minutes=2),))
    desk = MemoryDesk(settings.check(), SEED, pace=10)
    for n in range(4):
        desk.do(tc.RegisterPlayer(player=f"bot-{n}", bot=True, actor="@organiser",
                                  command_id=f"register-{n}"))
    desk.do(tc.DrawSeating(actor="@organiser", command_id="start"))
    while desk.state().break_clock is None:
        assert direct(desk, desk.now()) is Tick.ACTED
    started = [e for e in desk.store.events_of(desk.tournament_id)
               if isinstance(e, Tournament.BreakStarted)]
    assert [(e.round, e.seconds, e.actor) for e in started] == [(1, 120.0, "@director")]
    assert direct(desk, started[0].at + 119) is Tick.WAITING
    assert desk.state().round == 1
    assert direct(desk, started[0].at + 120) is Tick.ACTED
    assert desk.state().round == 2 and desk.state().phase is Phase.RUNNING


def test_a_preview_plays_through_the_breaks_and_counts_them_in_its_minutes() -> None:
    plain = fmt(Stage(name="only", rounds=3, coups=2, limits=LEVELS)).check()
    rested = fmt(Stage(name="only", rounds=3, coups=2, limits=LEVELS),
                 breaks=(RoundBreak(after_round=1, minutes=5),
                         RoundBreak(after_round=2, minutes=10))).check()
    without, with_breaks = play_once(plain, 6, SEED, 20), play_once(rested, 6, SEED, 20)
    assert without.rounds == with_breaks.rounds == 3
    assert with_breaks.minutes == pytest.approx(without.minutes + 15, abs=0.11)


@pytest.mark.parametrize("breaks", [
    (RoundBreak(after_round=0, minutes=5),),
    (RoundBreak(after_round=1, minutes=0),),
    (RoundBreak(after_round=1, minutes=241),),
    (RoundBreak(after_round=1, minutes=5), RoundBreak(after_round=1, minutes=10)),
])
def test_a_break_after_no_round_of_no_time_or_twice_is_refused(
        breaks: tuple[RoundBreak, ...]) -> None:
    with pytest.raises(RuleViolation) as caught:
        fmt(Stage(name="only", rounds=3, limits=LEVELS), breaks=breaks).check()
    assert caught.value.rule == "format-breaks"


def test_the_last_coup_and_the_next_rounds_limits_are_known_ahead() -> None:
    run = Run(fmt(Stage(name="only", rounds=3, coups=2, limits=LEVELS)), 4).start()
    assert stages.next_limits(run.s) == LEVELS[0]
    run.do(tc.StartRound, at=0.0)
    assert stages.next_limits(run.s) == LEVELS[1] and not stages.last_coup(run.s, 0.0)
    chips = {p: 1000 for p in run.s.in_play()}
    run.do(tc.StartStep, coups={t: 0 for t in run.s.tables}, chips=chips)
    run.do(tc.EndStep)
    assert stages.last_coup(run.s, 0.0)  # one coup left: the next is the last
    run.do(tc.StartStep, coups={t: 1 for t in run.s.tables}, chips=chips)
    assert stages.last_coup(run.s, 0.0)
    run.do(tc.EndStep)
    run.do(tc.EndRound, chips=chips)
    assert not stages.last_coup(run.s, 0.0) and stages.next_limits(run.s) == LEVELS[1]


def test_a_timed_round_s_last_coup_is_the_one_under_way_when_its_minutes_run_out() -> None:
    run = Run(fmt(Stage(name="only", rounds=2, coups=100, minutes=2, limits=LEVELS)), 4).start()
    run.do(tc.StartRound, at=1000.0)
    run.do(tc.StartStep, coups={t: 0 for t in run.s.tables},
           chips={p: 1000 for p in run.s.in_play()})
    assert not stages.last_coup(run.s, 1119.0)
    assert stages.last_coup(run.s, 1120.0)  # the clock ran out: this coup ends the round
    run.do(tc.EndStep)
    assert not stages.last_coup(run.s, 1120.0) and run.s.round_over(1120.0)
