"""A tournament's format, fixed at creation: its stages, prizes, chips and tables.

`TournamentSettings` is what the organiser chooses (a preset, `domain.tournament.presets`, or
a format of their own, `domain.tournament.formats`), checked once when the tournament is
created; each table's settings follow from it (`table_settings`).
"""

from __future__ import annotations

import msgspec

from domain.errors import RuleViolation
from domain.game.settings import BettingOrder, Preset, SittingOut, TableSettings, Variant
from domain.table.commands import (
    CloseBetting,
    PassBetTurn,
    PlaceBet,
    PlaceStake,
    TableCommand,
)
from domain.tournament.formats import (
    Advance,
    Dealing,
    Limits,
    RoundBreak,
    Stage,
    TieBreak,
    check_breaks,
    check_min_bets,
    check_stages,
)

MAX_SEATS = 14
MAX_CLOCK = 600  # seconds: a person's longest bet or decision clock
MAX_THINK = 30  # seconds: a house bot's longest think time
BASIS_POINTS = 10_000  # a prize is a share of the pool in basis points: 10 000 is all of it


class TournamentSettings(msgspec.Struct, frozen=True, kw_only=True):
    """A tournament's format, fixed at creation.

    `stages`: the format's stages (`domain.tournament.formats`); none: one stage that plays until
    one player is left, its rounds of `coups_per_round` coups (and `minutes_per_round` minutes,
    whichever ends first) at `min_stake`..`max_stake`, cutting to the `advance` best stacks
    after every round (0: no cut). `prizes`: each finishing position's share of the pool
    (entries times `buy_in`) in basis points, first place first, summing to 10 000; or
    `fixed_prizes`: amounts, the pool being their sum. `late_rounds`: players may register,
    and busted players re-enter, until that round ends (0: until the draw). `reentries`: how
    many times a busted player may buy in again. `tolerance`: the largest difference in
    players between two tables that needs no balancing. `tables`: the tables the draw seats
    the entrants at (at least as many as the seats need). `tie_break`: how a tie on the line
    of a cut is settled. `dealing`: the workers deal every table, or croupiers do (with
    `automatic`, croupiers deal the first `croupier_tables` tables by number); either
    way a person's decisions are theirs, on the clocks `people_bet_seconds` (the bet clock
    where `bet_seconds` sets none) and `decision_seconds`, and a house bot acts after
    `bot_think_seconds` at a croupier's table (`domain.table.room`), where the croupier acts
    for it only if `croupier_plays_bots`. `breaks`: the breaks
    between rounds (`domain.tournament.formats.RoundBreak`). `sitting_out`: what each turn to
    bet that the bet clock passes costs its player (`min-stake`: the round's minimum, to the
    house; unset or `free`: nothing), so that a player who never bets cannot win. `min_bets`:
    the bets (coups with chips at stake) a player makes each round at least; a player short of
    it since the last cut ranks after everyone who met it at the cut (unset or 0: none).
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
    stages: tuple[Stage, ...] = ()
    fixed_prizes: tuple[int, ...] = ()
    tables: int | None = None
    tie_break: TieBreak = TieBreak.SHARE
    dealing: Dealing = Dealing.AUTOMATIC
    croupier_tables: int = 0  # dealing automatic: the first N tables are a croupier's
    betting_order: BettingOrder = BettingOrder.FREE  # rotating: bets in turn, each coup
    bet_seconds: int = 0  # each turn's time to bet (a stage may set its own); 0: none
    people_bet_seconds: int = 60  # a person's time to bet where `bet_seconds` sets none
    decision_seconds: int = 30  # a person's time for a decision (draw or stand, bank, banco)
    bot_think_seconds: int = 2  # a house bot's time before it acts at a croupier's table
    croupier_plays_bots: bool = False  # a croupier may act for a house bot's seat
    breaks: tuple[RoundBreak, ...] = ()  # after round N, M minutes
    house_rules: Preset | msgspec.UnsetType = msgspec.UNSET
    sitting_out: SittingOut | msgspec.UnsetType = msgspec.UNSET  # unset: free
    min_bets: int | msgspec.UnsetType = msgspec.UNSET  # unset: none

    def break_after(self, round_: int) -> RoundBreak | None:
        """The break that follows round `round_`, if any."""
        return next((b for b in self.breaks if b.after_round == round_), None)

    def croupier_deals(self, number: int) -> bool:
        """Whether the tournament's table `number` (from 1) is dealt by a croupier rather than
        by the house: every table with `dealing: croupier`, else the first `croupier_tables`."""
        return self.dealing is Dealing.CROUPIER or number <= self.croupier_tables

    def plan(self) -> tuple[Stage, ...]:
        """The stages, the format's common fields filled in where a stage leaves them out."""
        advance = Advance(overall=self.advance) if self.advance else None
        stages = self.stages or (Stage(name="main", rounds=0, advance=advance),)
        common = (Limits(min_stake=self.min_stake, max_stake=self.max_stake),)
        return tuple(msgspec.structs.replace(
            stage, coups=self.coups_per_round if stage.coups is None else stage.coups,
            minutes=self.minutes_per_round if stage.minutes is None else stage.minutes,
            limits=stage.limits or common,
            bet_seconds=self.bet_seconds if stage.bet_seconds is None else stage.bet_seconds)
            for stage in stages)

    def person_clock(self, move: TableCommand, table: TableSettings) -> int:
        """A person's time for the move the table awaits of them: a turn to bet or a stake
        (the table's bet clock, else `people_bet_seconds`), or a decision."""
        if isinstance(move, (PassBetTurn, PlaceBet, PlaceStake, CloseBetting)):
            return table.bet_seconds or self.people_bet_seconds
        return self.decision_seconds

    def table_settings(self) -> TableSettings:
        """The settings every table of the tournament is opened with: the first round's
        minimum and the largest maximum of the format, its betting order and first clock,
        what sitting out costs and whether the tables count the bets (`counts_bets`)."""
        plan = self.plan()
        return TableSettings.default(
            self.variant, min_stake=plan[0].limits[0].min_stake,
            max_stake=max(limits.max_stake for stage in plan for limits in stage.limits),
            betting_order=self.betting_order, bet_seconds=plan[0].bet_seconds or 0,
            decision_seconds=self.decision_seconds,
            **({} if self.house_rules is msgspec.UNSET else {"preset": self.house_rules}),
            **({} if self.sitting_out is msgspec.UNSET else {"sitting_out": self.sitting_out}),
            **({"counts_bets": True} if self.counts_bets else {}))

    @property
    def counts_bets(self) -> bool:
        """Whether the tables count each player's bets: for the minimum of bets a round, and
        for a play-off (who bets in it goes first)."""
        return bool(self.min_bets) or self.tie_break is TieBreak.PLAY_OFF

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
        if self.fixed_prizes and (any(a < 1 for a in self.fixed_prizes) or any(
                a < b for a, b in zip(self.fixed_prizes, self.fixed_prizes[1:], strict=False))):
            raise RuleViolation("fixed prizes are positive amounts, never more for a lower "
                                "place", rule="tournament-prizes")
        if self.tables is not None and self.tables < 1:
            raise RuleViolation("a tournament draws onto one table at least",
                                rule="tournament-tables")
        if self.croupier_tables < 0 or (self.tables is not None
                                        and self.croupier_tables > self.tables):
            raise RuleViolation("croupiers deal 0 up to the tournament's tables",
                                rule="tournament-croupier-tables")
        plan = self.plan()
        check_stages(plan, self.starting_chips, self.seats_per_table, self.tables,
                     betting_order=self.betting_order,
                     house_banks=Variant(self.variant).house_banks)
        if plan[0].rounds and self.late_rounds > plan[0].rounds:
            raise RuleViolation("late registration closes within the first stage",
                                rule="tournament-late")
        if self.buy_in < 0:
            raise RuleViolation("the buy-in cannot be negative", rule="tournament-buy-in")
        if self.late_rounds < 0 or self.reentries < 0 or (self.reentries
                                                          and not self.late_rounds):
            raise RuleViolation("re-entry needs a late registration window of one round or more",
                                rule="tournament-late")
        if not (1 <= self.people_bet_seconds <= MAX_CLOCK and 1 <= self.decision_seconds
                <= MAX_CLOCK and 0 <= self.bot_think_seconds <= MAX_THINK):
            raise RuleViolation(f"a person's clocks are 1 to {MAX_CLOCK} s, a bot's think time "
                                f"0 to {MAX_THINK} s", rule="tournament-clocks")
        if self.tolerance < 1:
            raise RuleViolation("tables may differ by one player at least",
                                rule="tournament-tolerance")
        check_breaks(self.breaks)
        check_min_bets(plan, self.min_bets or 0)
        self.table_settings()
        return self
