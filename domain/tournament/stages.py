"""A tournament's stages and rounds: the phases it goes through, the round's clock and its
steps, the stack reset a stage may call for, and the cut at a round's or a stage's end with
its play-offs on a tie.

These are the steps of `TournamentBase` (domain/tournament/state.py), which keeps the state and
asks them; each validates before it changes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from domain.errors import OutOfTurn, RuleViolation
from domain.table.room import TournamentPaused
from domain.tournament.base import TournamentBase
from domain.tournament.entrants import Bust, Exit, Status
from domain.tournament.formats import (
    Advance,
    ChipRule,
    Limits,
    RoundBreak,
    Selection,
    TieBreak,
    select,
)
from domain.tournament.records import (
    Clock,
    Pause,
    Phase,
    PlayOff,
    PlayOffDecision,
    PlayOffResult,
    Step,
)

MAX_PLAYOFFS = 3  # play-offs that tie again before the draw's order settles the tie


def coups_left(state: TournamentBase) -> int | None:
    """Coups (steps) left in the round being played, the one under way among them (it is not
    played yet); None between rounds or untimed."""
    coups = state.current.coups
    if state.phase is not Phase.RUNNING or coups is None:
        return None
    played = state.steps - (state.step is not None)
    return max(0, coups - played)


def seconds_left(state: TournamentBase, now: float) -> float | None:
    minutes = state.current.minutes
    if state.phase is not Phase.RUNNING or minutes is None or state.clock is None:
        return None
    return max(0.0, minutes * 60 - state.clock.elapsed(now))


def last_coup(state: TournamentBase, now: float) -> bool:
    """The coup under way (or about to be) is the round's last: one coup left, or its
    minutes run out while a step finishes."""
    if state.phase is not Phase.RUNNING:
        return False
    return coups_left(state) == 1 or (state.step is not None and seconds_left(state, now) == 0)


def next_limits(state: TournamentBase) -> Limits | None:
    """The betting limits of the next round to start (after the one being played); None when
    the round being played is the tournament's last one known."""
    stage = state.current
    if state.phase not in (Phase.SEATED, Phase.RUNNING, Phase.BETWEEN_ROUNDS):
        return None
    if state.phase is Phase.RUNNING and stage.rounds and state.stage_round >= stage.rounds:
        plan = state.settings.plan()
        return plan[state.stage + 1].limits_for(1) if state.stage + 1 < len(plan) else None
    return stage.limits_for(state.stage_round + 1)


def round_over(state: TournamentBase, now: float) -> bool:
    """The round being played has played its coups, or its minutes (a step under way
    finishes first)."""
    if state.phase is not Phase.RUNNING or state.step is not None:
        return False
    coups, seconds = coups_left(state), seconds_left(state, now)
    return coups == 0 or seconds == 0.0


def next_cut(state: TournamentBase) -> int | None:
    """How many players the next cut keeps (None: no cut ahead but the last stage's)."""
    stage = state.current
    if stage.advance is None:
        return 1 if stage.rounds else None
    if stage.rounds == 0:
        return 1 if state.final_table else stage.advance.overall
    return stage.advance.most(len(state.tables))


def ready_for_round(state: TournamentBase) -> None:
    """Refuse to start a round now."""
    state.require(Phase.SEATED, Phase.BETWEEN_ROUNDS, doing="start a round")
    require_running(state, "start a round")
    if state.decided:
        raise OutOfTurn("the tournament is decided", rule="tournament-decided")
    if state.playoff is not None:
        raise OutOfTurn("a tie at the cut waits for its play-off", rule="play-off-pending")


def break_due(state: TournamentBase) -> RoundBreak | None:
    """The break the format calls for after the round just ended, not yet started."""
    if state.phase is not Phase.BETWEEN_ROUNDS or state.break_round == state.round:
        return None
    return state.settings.break_after(state.round)


def start_break(state: TournamentBase, round_: int, at: float, seconds: float) -> None:
    """The break after round `round_` starts at `at` (the director's clock, recorded)."""
    state.require(Phase.BETWEEN_ROUNDS, doing="start a break")
    require_running(state, "start a break")
    due = break_due(state)
    if due is None or round_ != state.round or seconds != due.minutes * 60:
        raise RuleViolation(f"no break of {seconds} s is due after round {round_}",
                            rule="break-mismatch")
    state.break_round = round_
    state.break_clock = Clock(started_at=at)
    state.break_seconds = seconds


def break_left(state: TournamentBase, now: float) -> float | None:
    """Seconds left of the break under way (a pause stops its clock too); None: no break."""
    if state.break_clock is None:
        return None
    return max(0.0, state.break_seconds - state.break_clock.elapsed(now))


def start_round(state: TournamentBase, at: float) -> None:
    """Start the next round at `at` (the director's clock, recorded), once the break the
    format calls for before it is over."""
    ready_for_round(state)
    if break_due(state) is not None:
        raise OutOfTurn(f"the break after round {state.round} comes first", rule="break-due")
    if break_left(state, at):
        raise OutOfTurn(f"the break after round {state.round} is not over", rule="on-break")
    state.break_clock = None
    state.round += 1
    state.stage_round += 1
    state.steps, state.step, state.round_coups = 0, None, {}
    state.clock = Clock(started_at=at)
    state.phase = Phase.RUNNING


def stage_reset(state: TournamentBase) -> dict[str, int]:
    """The chips each player in play gains (or loses) if the stage about to start resets
    the stacks; empty when it carries them over or has started."""
    if state.stage_round or state.current.chips is not ChipRule.RESET:
        return {}
    start = state.settings.starting_chips
    return {p: start - state.entrants[p].chips for p in state.in_play()
            if state.entrants[p].chips != start}


def reset_chips(state: TournamentBase, deltas: Mapping[str, int]) -> None:
    """The stage starts with the starting stack for everyone (the deltas `stage_reset`)."""
    if dict(deltas) != stage_reset(state):
        raise RuleViolation("a reset brings every player in play to the starting chips",
                            rule="reset-mismatch")
    for player, delta in deltas.items():
        state.entrants[player].chips += delta
        state.chips_added += delta


def start_step(state: TournamentBase, number: int, coups: Mapping[str, int],
               chips: Mapping[str, int]) -> None:
    """A step of the round starts: every table with players will play one coup."""
    state.require(Phase.RUNNING, doing="start a step")
    require_running(state, "start a step")
    if state.step is not None or number != state.steps + 1:
        raise RuleViolation(f"the next step of round {state.round} is not {number}",
                            rule="step-mismatch")
    if set(chips) != set(state.in_play()) or not set(coups) <= set(state.tables):
        raise RuleViolation("a step starts with the chips of every player in play and "
                            "the coups of open tables", rule="step-chips")
    state.steps = number
    state.step = Step(number=number, coups=dict(coups), chips=dict(chips))
    if number == 1:
        state.round_coups = dict(coups)


def end_step(state: TournamentBase, number: int) -> None:
    if state.step is None or state.step.number != number:
        raise RuleViolation(f"step {number} is not under way", rule="step-mismatch")
    state.step = None


def pause(state: TournamentBase, at: float) -> None:
    state.require(Phase.SEATED, Phase.RUNNING, Phase.BETWEEN_ROUNDS, doing="pause")
    require_running(state, "pause")
    state.paused = True
    state.pauses.append(Pause(at=at))
    if state.clock is not None and state.phase is Phase.RUNNING:
        state.clock.paused_at = at
    if state.break_clock is not None:
        state.break_clock.paused_at = at


def resume(state: TournamentBase, at: float) -> None:
    if not state.paused:
        raise OutOfTurn("the tournament is not paused", rule="not-paused")
    state.paused = False
    state.pauses[-1].until = max(at, state.pauses[-1].at)
    for clock in (state.clock, state.break_clock):
        if clock is not None and clock.paused_at is not None:
            clock.paused_for += max(0.0, at - clock.paused_at)
            clock.paused_at = None


def require_running(state: TournamentBase, doing: str) -> None:
    """Refuse `doing` while the tournament is paused (its steps wait for the resume)."""
    if state.paused:
        raise TournamentPaused(f"cannot {doing}: the tournament is paused", rule="paused")


def end_round(state: TournamentBase, round_: int, chips: Mapping[str, int],
              coups_bet: Mapping[str, int] | None = None) -> None:
    """End the round with every player's chips and, where the format sets `min_bets`, the
    bets each has made since the tournament began (`coups_bet`, whose growth over the round
    is the round's bets). Registration closes at the end of round `late_rounds`; then the
    cut the format calls for is made (`_cut`)."""
    state.require(Phase.RUNNING, doing="end a round")
    if round_ != state.round:
        raise RuleViolation(f"round {state.round} is being played, not {round_}",
                            rule="round-mismatch")
    if state.step is not None:
        raise OutOfTurn("a step is under way", rule="step-open")
    players = state.in_play()
    if set(chips) != set(players):
        raise RuleViolation("a round ends with the chips of every player in play",
                            rule="round-chips")
    if any(chips[p] < 1 for p in players):
        raise RuleViolation("a player without chips is reported as busted first",
                            rule="bust-unreported")
    short = _short(state, players, coups_bet)
    for player in players:
        state.entrants[player].chips = chips[player]
    state.coups_bet.update(coups_bet or {})
    state.short += [p for p in short if p not in state.short]
    state.phase = Phase.BETWEEN_ROUNDS
    state.clock = None
    if state.registration_open and round_ >= state.settings.late_rounds:
        state.close_registration()
    _cut(state)


def _short(state: TournamentBase, players: list[str],
           coups_bet: Mapping[str, int] | None) -> list[str]:
    """The players whose bets this round fall short of the format's `min_bets`: none in a
    stage that cuts nobody at its rounds' ends (played until one is left, with no `advance`),
    where players go out only by busting."""
    minimum = state.settings.min_bets or 0
    if not minimum or next_cut(state) is None:
        return []
    if coups_bet is None or set(coups_bet) != set(players) or any(
            coups_bet[p] < state.coups_bet.get(p, 0) for p in players):
        raise RuleViolation("a round ends with the bets every player in play has made, never "
                            "fewer than before, where the format sets a minimum",
                            rule="round-bets")
    return [p for p in players if coups_bet[p] - state.coups_bet.get(p, 0) < minimum]


def _cut(state: TournamentBase) -> None:
    """The cut due at this round's end: every round of a stage played until one is left
    (to `advance`, to one at the final table); the end of any other stage (to who
    advances, or to the winner at the last stage's end). A tie on the line that the
    format settles by play-off leaves the cut waiting for it (`playoff`)."""
    stage = state.current
    if state.registration_open or state.phase is not Phase.BETWEEN_ROUNDS:
        return
    players = state.in_play()
    if stage.rounds == 0:
        if stage.advance is None:
            return
        chosen = _select(state, players, 1 if state.final_table else stage.advance.overall)
    elif state.stage_round >= stage.rounds:
        chosen = (_select(state, players, 1) if stage.advance is None
                  else _advancers(state, players, stage.advance))
    else:
        return
    if state.playoff is not None:
        return
    state.playoff_chips, state.playoff_idle, state.playoffs = {}, [], 0
    cut = sorted((p for p in players if p not in chosen),
                 key=lambda p: -state.entrants[p].chips)
    if cut:
        state.exits.append(Exit(round=state.round, table=None, coup=None,
                                players=[Bust(player=p, chips=state.entrants[p].chips)
                                         for p in cut],
                                short=[p for p in cut if p in state.short]))
    state.short = []
    for player in cut:
        state.entrants[player].status = Status.OUT
        state.entrants[player].seat = None
    if stage.rounds and state.stage_round >= stage.rounds and not state.last_stage:
        state.stage += 1
        state.stage_round = 0


def _key(state: TournamentBase, player: str) -> tuple[int, ...]:
    """Better first: the format's `min_bets` met since the last cut, more chips, then a bet
    in the last play-off, more chips after it, then (by `draw-order`, or after
    `MAX_PLAYOFFS` play-offs that tied again) the earlier in the draw."""
    entrant = state.entrants[player]
    key = (player in state.short, -entrant.chips, player in state.playoff_idle,
           -state.playoff_chips.get(player, 0))
    if state.settings.tie_break is TieBreak.DRAW_ORDER or state.playoffs >= MAX_PLAYOFFS:
        return (*key, entrant.draw_rank or 0)
    return key


def _select(state: TournamentBase, candidates: Sequence[str], keep: int) -> list[str]:
    """The `keep` best; an unsettled tie on the line calls a play-off and keeps nobody."""
    selection: Selection = select(candidates, keep, lambda player: _key(state, player),
                                  state.settings.tie_break)
    if selection.tied and state.playoff is None:
        state.playoff = PlayOff(round=state.round, players=selection.tied,
                                places=selection.places)
    return selection.chosen


def _advancers(state: TournamentBase, players: list[str], advance: Advance) -> list[str]:
    """The top `per_table` of each table, the top `overall`, then the `wildcards`."""
    chosen: list[str] = []
    if advance.per_table:
        for table in state.tables:
            at = [p for p in players if state.entrants[p].table == table]
            chosen += _select(state, at, advance.per_table)
    for keep in (advance.overall, advance.wildcards):
        if keep:
            chosen += _select(state, [p for p in players if p not in chosen], keep)
    return chosen


def playoff_decision(state: TournamentBase, chips: Mapping[str, int],
                     idle: Sequence[str]) -> PlayOffDecision:
    """What the play-off coup's result settles, as `TieBreak.PLAY_OFF` says: who bet in it
    goes before who did not (`idle`), then more chips after it; tied again, another
    play-off, or after the last of `MAX_PLAYOFFS` the seating draw's order."""
    playoff = state.playoff
    if playoff is None:
        raise OutOfTurn("no play-off is waiting", rule="no-play-off")
    if set(chips) != set(playoff.players) or not set(idle) <= set(chips):
        raise RuleViolation("a play-off reports the chips of each tied player, and who of "
                            "them made no bet", rule="play-off-players")
    ordered = sorted(playoff.players, key=lambda p: (p in idle, -chips[p]))
    kept, left = ordered[playoff.places - 1], ordered[playoff.places]
    if (kept in idle) != (left in idle):
        return PlayOffDecision.BETS
    if chips[kept] != chips[left]:
        return PlayOffDecision.CHIPS
    if state.playoffs + 1 >= MAX_PLAYOFFS:
        return PlayOffDecision.DRAW_ORDER
    return PlayOffDecision.AGAIN


def settle_playoff(state: TournamentBase, chips: Mapping[str, int], idle: Sequence[str],
                   decision: PlayOffDecision | None) -> None:
    """The play-off coup's result: each tied player's chips after it, who of them made no
    bet, and what that settles (`playoff_decision`; None: recorded before it was). The cut
    is made again with them; a tie that remains calls another play-off."""
    settled = playoff_decision(state, chips, idle)
    if decision is not None and decision != settled:
        raise RuleViolation(f"the play-off is settled by {settled}, not {decision}",
                            rule="play-off-decision")
    assert state.playoff is not None
    state.playoff_results.append(PlayOffResult(round=state.round, players=state.playoff.players,
                                               idle=list(idle), decision=settled))
    state.playoff = None
    state.playoff_chips.update(chips)
    state.playoff_idle = [p for p in state.playoff_idle if p not in chips] + list(idle)
    state.playoffs += 1
    _cut(state)
