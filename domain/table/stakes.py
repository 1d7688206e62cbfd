"""Stakes: bets on the house's spots, stakes against a player's bank, banco, closing betting.

`Staking` is the part of `TableState` (`domain.table.state`) that takes the punters' bets and
stakes and their banco calls, and closes betting: the variant's coverage rule
(`domain.game.coverage`) then says which stakes the bank takes on, and the coup starts.
"""

from __future__ import annotations

from domain.errors import RuleViolation
from domain.game import coverage
from domain.game.coup import Coup
from domain.game.payouts import Bet, Spot
from domain.game.sides import Side
from domain.table import betting_order
from domain.table.base import BETTING, PLAYING, Seat, TableBase


class Staking(TableBase, kw_only=True):
    """A table's betting steps."""

    def _check_amount(self, player: str, amount: int) -> Seat:
        self._refuse_during_tie_replay()
        seat = self.seat_of(player)
        if amount < self.settings.min_stake:
            raise RuleViolation(f"the minimum stake is {self.settings.min_stake}",
                                rule="stake-below-minimum")
        if self.settings.max_stake and amount > self.settings.max_stake:
            raise RuleViolation(f"the maximum stake is {self.settings.max_stake}",
                                rule="stake-above-maximum")
        if self.committed(player) + amount > seat.chips:
            raise RuleViolation(
                f"{player} has {seat.chips - self.committed(player)} chips free, not {amount}",
                rule="chips-short")
        return seat

    def verify_place_bet(self, player: str, spot: Spot, amount: int) -> None:
        self.require(BETTING, doing="bet")
        betting_order.check_turn(self, player)
        if not self.house_banks:
            raise RuleViolation("at this table punters stake on a tableau against the bank",
                                rule="bet-kind")
        if player in self.duel:
            raise RuleViolation("Banque and Ponte stake the duel, not the side bets",
                                rule="duellist-bet")
        if not self.settings.tie_pays and spot is Spot.TIE:
            raise RuleViolation("this table takes no tie bets", rule="no-tie-bet")
        self._check_amount(player, amount)

    def place_bet(self, player: str, spot: Spot, amount: int) -> None:
        """A bet on a spot banked by the house (punto banco, the family game)."""
        self.verify_place_bet(player, spot, amount)
        betting_order.take_turn(self, player)
        self.bets.append(Bet(player, spot, amount))

    def verify_pass_bet_turn(self, player: str, reason: betting_order.PassReason
                             = betting_order.PassReason.PASS) -> None:
        betting_order.check_pass(self, player, reason)

    def pass_bet_turn(self, player: str,
                      reason: betting_order.PassReason = betting_order.PassReason.PASS) -> None:
        """In a rotating betting order, `player`'s turn passes with no bet."""
        betting_order.pass_turn(self, player, reason)

    def sitting_out_charge(self, player: str) -> int:
        """What sitting out a turn the bet clock passed costs `player` now: the format's cost
        (`TableSettings.sitting_out`), capped by the chips they have free."""
        seat = self.seat_of(player)
        return max(0, min(self.settings.sitting_out_cost, seat.chips - self.committed(player)))

    def charge_sitting_out(self, player: str, amount: int) -> None:
        """The house takes `amount` from `player` for a turn the bet clock passed."""
        if amount != self.sitting_out_charge(player) or amount < 1:
            raise RuleViolation(f"sitting out costs {player} {self.sitting_out_charge(player)}, "
                                f"not {amount}", rule="sitting-out-charge")
        self.seat_of(player).chips -= amount
        self.house_result += amount

    def verify_place_stake(self, player: str, tableau: Side, amount: int) -> None:
        self.require(BETTING, doing="stake")
        if not self.banks_with_player:
            raise RuleViolation("at this table bets go on Player, Banker or Tie",
                                rule="stake-kind")
        if player == self.banker:
            raise RuleViolation("the banker does not stake against the bank",
                                rule="banker-stake")
        if tableau not in self.rules.tableaux:
            raise RuleViolation(f"this table has no {tableau} tableau", rule="no-such-tableau")
        self._check_amount(player, amount)

    def place_stake(self, player: str, tableau: Side, amount: int) -> None:
        """A punter's stake against the bank on a tableau."""
        self.verify_place_stake(player, tableau, amount)
        self.stakes.append(coverage.Stake(player, tableau, amount))

    def verify_call_banco(self, player: str) -> None:
        self.require(BETTING, doing="call banco")
        if not self.banks_with_player or not self.settings.banco_allowed:
            raise RuleViolation("this table plays no banco", rule="no-banco")
        if player == self.banker:
            raise RuleViolation("the banker cannot call banco", rule="banker-banco")
        self._refuse_during_tie_replay()
        seat = self.seat_of(player)
        if player in self.banco_calls:
            raise RuleViolation(f"{player} has already called banco", rule="banco-twice")
        limit = self.rules.bancos_per_bank
        if limit is not None and self.bancos_in_a_row >= limit:
            raise RuleViolation("after a second banco the tableaux resume their rights",
                                rule="banco-third")
        own_stakes = sum(s.amount for s in self.stakes if s.player == player)
        if self.bank > seat.chips - self.committed(player) + own_stakes:
            raise RuleViolation(f"a banco of {self.bank} is beyond {player}'s chips",
                                rule="chips-short")

    def call_banco(self, player: str) -> None:
        """A punter offers to cover the whole bank alone."""
        self.verify_call_banco(player)
        self.banco_calls.append(player)

    def verify_close_betting(self) -> coverage.Coverage | None:
        """The coverage of the stakes against a player's bank (None: the house banks)."""
        self.require(BETTING, doing="close betting")
        betting_order.check_turns_over(self)
        rules = self.rules
        rules.banking.check_close(self)
        if rules.coverage is None:
            return None
        covered = rules.coverage.cover(self)
        if not covered.engaged:
            raise RuleViolation("no stake is engaged against the bank", rule="no-stakes")
        return covered

    def close_betting(self) -> None:
        """No more stakes: work out coverage and start the coup."""
        covered = self.verify_close_betting()
        if covered is not None:
            self.covered = covered
        self.coup_number += 1
        self.coup = Coup.start(self.settings)
        self.settlement = None
        self.tie_replay = False
        self.phase = PLAYING
