"""Tournament formats as data: stages of rounds, betting limits, who advances, ties at the cut.

A format is a sequence of `Stage`s played in order (heats, a semi-final, a final; or one
freeze-out). A stage plays `rounds` rounds; a round ends after `coups` coups or `minutes`
minutes of play, whichever comes first. Each round has its betting limits (`limits[i]` for
the stage's round i + 1, the last one holding for any later round), so limits may rise like
blind levels. At the end of a stage's last round its `advance` rule decides who goes on: the
top `per_table` of each table, the top `overall` of the whole field, then `wildcards`: the
best stacks of those left. The last stage, at its end, ranks everyone left by chips: the
leader wins. A stage of `rounds = 0` plays until one player is left, cutting to `advance` at
the end of every round (and to one at the final table). The next stage may `reset` every
player's chips to the starting stack, or carry them over.

Ties on the line of a cut follow the format's `TieBreak`: everyone tied goes on (`share`),
the earlier in the seating draw goes on (`draw-order`), or the tied players play an extra
coup and its result decides (`play-off`): a player who makes no bet in it goes after those who
do, then the chips it leaves decide; tied again, another, and after the third the draw's order
(`domain.tournament.stages.playoff_decision`, recorded with the play-off). `select` is that
rule, shared by every cut.

A format may set a minimum of bets a round (`min_bets`): a player short of it ranks after
everyone who met it at the next cut (`check_min_bets` refuses a minimum no round can hold).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum

import msgspec

from domain.errors import RuleViolation
from domain.game.settings import BettingOrder, check_betting


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """A round's betting limits: the smallest and largest stake or bet."""

    min_stake: int
    max_stake: int


class RoundBreak(msgspec.Struct, frozen=True, kw_only=True):
    """A break after round `after_round` (counted over the whole tournament) of `minutes`
    (fractions allowed): the director holds the next round until it ends."""

    after_round: int
    minutes: float


class Advance(msgspec.Struct, frozen=True, kw_only=True):
    """Who goes on at a stage's end: the top `per_table` of each table, the top `overall` of
    the field, then the `wildcards` best stacks of the rest."""

    per_table: int = 0
    overall: int = 0
    wildcards: int = 0

    def most(self, tables: int) -> int:
        """The most players this rule lets through from `tables` tables (ties aside)."""
        return self.per_table * tables + self.overall + self.wildcards


class ChipRule(StrEnum):
    CARRY = "carry"  # players keep their stacks into the stage
    RESET = "reset"  # every player starts the stage with the starting stack


class Dealing(StrEnum):
    """Who deals the tournament's tables."""

    AUTOMATIC = "automatic"  # RNG shoes; the workers act as croupier and play the bots
    CROUPIER = "croupier"  # croupiers deal (physical or RNG shoes, their own commands)


class TieBreak(StrEnum):
    SHARE = "share"  # tied on the line all go on; tied finishing positions share their prizes
    DRAW_ORDER = "draw-order"  # the player drawn earlier in the seating draw goes on
    PLAY_OFF = "play-off"  # tied players play an extra coup: who bets goes first, then its chips


class Stage(msgspec.Struct, frozen=True, kw_only=True):
    """One stage of a format. `coups`/`minutes` None: the format's `coups_per_round` and
    `minutes_per_round`; `limits` empty: the format's `min_stake` and `max_stake`."""

    name: str
    rounds: int = 0  # 0: until one player is left
    coups: int | None = None
    minutes: int | None = None
    limits: tuple[Limits, ...] = ()
    advance: Advance | None = None
    chips: ChipRule = ChipRule.CARRY
    secret_bet: bool = False  # one hidden bet a player per round
    bet_seconds: int | None = None  # a turn's bet clock; None: the format's

    def limits_for(self, round_in_stage: int) -> Limits:
        """The limits of the stage's round `round_in_stage` (1 the first)."""
        return self.limits[min(round_in_stage, len(self.limits)) - 1]


MAX_BREAK_MINUTES = 240


def check_breaks(breaks: Sequence[RoundBreak]) -> None:
    """Refuse a break after no round, of no time or of more than four hours, or two after
    the same round."""
    after = [b.after_round for b in breaks]
    if any(a < 1 for a in after) or len(set(after)) != len(after):
        raise RuleViolation("a break follows a round (1 or more), one break a round",
                            rule="format-breaks")
    if any(not 0 < b.minutes <= MAX_BREAK_MINUTES for b in breaks):
        raise RuleViolation(f"a break lasts more than 0 and at most {MAX_BREAK_MINUTES} minutes",
                            rule="format-breaks")


def check_stages(stages: Sequence[Stage], starting_chips: int, seats: int,
                 tables: int | None, *, betting_order: BettingOrder = BettingOrder.FREE,
                 house_banks: bool = True) -> None:
    """Refuse stages no tournament can play, each with a named rule."""
    if not stages:
        raise RuleViolation("a format has one stage at least", rule="format-stages")
    previous: int | None = None
    for number, stage in enumerate(stages, 1):
        last = number == len(stages)
        where = f"stage {number} ({stage.name})"
        try:
            check_betting(betting_order, stage.bet_seconds or 0, house_banks)
        except RuleViolation as refused:
            raise RuleViolation(f"{where}: {refused.message}", rule=refused.rule) from None
        if stage.rounds < 0 or (stage.rounds == 0 and not last):
            raise RuleViolation(f"{where}: only the last stage may play until one is left "
                                "(rounds 0); the others play one round or more",
                                rule="format-rounds")
        if (stage.coups is not None and stage.coups < 1) or (stage.minutes is not None
                                                             and stage.minutes < 1):
            raise RuleViolation(f"{where}: a round lasts one coup or one minute at least",
                                rule="tournament-round")
        if not stage.limits:
            raise RuleViolation(f"{where}: betting limits for its rounds",
                                rule="tournament-stakes")
        for limits in stage.limits:
            if not 1 <= limits.min_stake <= limits.max_stake:
                raise RuleViolation(f"{where}: stakes need 1 <= minimum <= maximum",
                                    rule="tournament-stakes")
        if number == 1 and stage.limits[0].min_stake > starting_chips:
            raise RuleViolation("the first minimum stake is no more than the starting chips",
                                rule="tournament-stakes")
        advance = stage.advance
        if advance is None:
            if not last and stage.rounds:
                raise RuleViolation(f"{where}: a stage before the last says who advances",
                                    rule="format-advance")
            continue
        if min(advance.per_table, advance.overall, advance.wildcards) < 0 or not advance.most(1):
            raise RuleViolation(f"{where}: advancing counts are positive",
                                rule="tournament-advance")
        if advance.per_table >= seats:
            raise RuleViolation(f"{where}: {advance.per_table} advancing a table of {seats} "
                                "seats is more advancers than players", rule="too-many-advancers")
        most = advance.most(tables) if tables and number == 1 else None
        if most is not None and tables is not None and most >= tables * seats:
            raise RuleViolation(f"{where}: {most} advancing from {tables} tables of {seats} is "
                                "more advancers than players", rule="too-many-advancers")
        if (previous is not None and advance.per_table == 0
                and advance.overall + advance.wildcards >= previous):
            raise RuleViolation(f"{where}: {advance.overall + advance.wildcards} advancing of "
                                f"the {previous} who reached it is more advancers than players",
                                rule="too-many-advancers")
        if not advance.per_table:
            previous = advance.overall + advance.wildcards


def check_min_bets(stages: Sequence[Stage], min_bets: int) -> None:
    """Refuse a minimum of bets a round that no round can hold, or that no cut ever ranks by
    (a single stage played until one is left with no cut at its rounds' ends)."""
    if min_bets < 0:
        raise RuleViolation("a minimum of bets a round is 0 (none) or more",
                            rule="tournament-min-bets")
    if not min_bets:
        return
    for number, stage in enumerate(stages, 1):
        if stage.coups is not None and stage.coups < min_bets:
            raise RuleViolation(f"stage {number} ({stage.name}): a round of {stage.coups} coups "
                                f"cannot hold {min_bets} bets", rule="tournament-min-bets")
    if all(stage.rounds == 0 and stage.advance is None for stage in stages):
        raise RuleViolation("a minimum of bets a round ranks players at a cut, and this format "
                            "has none: players are out only when they bust",
                            rule="tournament-min-bets")


class Selection(msgspec.Struct, frozen=True):
    """A cut's outcome: who goes on, and the players tied on the line who still need a
    play-off for `places` of the places."""

    chosen: list[str]
    tied: list[str]
    places: int


def select(candidates: Sequence[str], keep: int, key: Callable[[str], tuple[int, ...]],
           tie_break: TieBreak) -> Selection:
    """The `keep` best of `candidates` by `key` (smaller first). Players whose keys equal the
    line's straddling it all go on under `share`; otherwise they are left for a play-off
    (under `draw-order` the key includes the draw and never ties)."""
    ordered = sorted(candidates, key=key)
    if len(ordered) <= keep:
        return Selection(ordered, [], 0)
    if keep == 0 or key(ordered[keep]) != key(ordered[keep - 1]):
        return Selection(ordered[:keep], [], 0)
    line = key(ordered[keep - 1])
    above = [p for p in ordered if key(p) < line]
    tied = [p for p in ordered if key(p) == line]
    if tie_break is TieBreak.SHARE:
        return Selection(above + tied, [], 0)
    return Selection(above, tied, keep - len(above))
