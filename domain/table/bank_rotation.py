"""The bank between coups: given to a player, declined, retired (chemin de fer, à deux tableaux).

`BankRotation` is the part of `TableState` (`domain.table.state`) that gives the bank (auction,
lot, or the shoe taken in rotation), lets the player offered the shoe let it pass, and lets
the banker retire. How the bank passes after a coup, or on retiring, is the variant's rule
(`domain.game.bank_passing`).
"""

from __future__ import annotations

from domain.actors import require_actor
from domain.errors import OutOfTurn, RuleViolation
from domain.table.base import Phase, Seat, TableBase


class BankRotation(TableBase, kw_only=True):
    """A table's bank steps."""

    def verify_award_bank(self, player: str, amount: int) -> Seat:
        """The seat of the player who may take the bank."""
        self.require(Phase.NO_BANK, doing="award the bank")
        seat = self.seat_of(player)
        if seat.standing:
            raise RuleViolation("a standing punter cannot hold the bank", rule="bank-standing")
        if amount < max(self.settings.min_stake, self.bank_required):
            raise RuleViolation(
                f"the bank must be at least {max(self.settings.min_stake, self.bank_required)}",
                rule="bank-too-small")
        if self.bank_required and amount != self.bank_required:
            # 000: "celui qui prend la main doit mettre au jeu une somme égale à celle que
            # retire le banquier qui s'en va, la mise première comprise"
            raise RuleViolation(f"a passed hand is taken with exactly {self.bank_required}, "
                                "the sum the banker withdrew", rule="bank-not-equal")
        if amount > seat.chips:
            raise RuleViolation(f"{player} has only {seat.chips} chips", rule="chips-short")
        return seat

    def award_bank(self, player: str, amount: int) -> None:
        """The bank goes to a player (auction, lot, or taking the shoe) who puts it up."""
        seat = self.verify_award_bank(player, amount)
        if self.passed_hand_returns_to == player:
            self.passed_hand_returns_to = None
        seat.chips -= amount
        self.banker, self.bank = player, amount
        self.bancos_in_a_row = 0
        self.bank_offered_to, self.bank_required, self.bank_declined_by = None, 0, []
        self.rules.passing.bank_awarded(self)
        self.phase = Phase.BETTING

    def verify_decline_bank(self, player: str) -> str:
        """The player the shoe is offered to."""
        self.require(Phase.NO_BANK, doing="decline the bank")
        require_actor(player, self.bank_offered_to, "decline the bank")
        offered = self.bank_offered_to
        if offered is None:
            raise OutOfTurn("the shoe is offered to nobody: the bank is given by auction or lot",
                            rule="no-offer")
        return offered

    def decline_due(self, player: str, coup: int | None) -> bool:
        """Whether a decline of the offer made to `player` after coup `coup` (None: the offer
        now, refused if there is none to them) is to be recorded: not once that offer is
        taken or passed, as a decision's expired deadline."""
        return coup is None or (self.phase is Phase.NO_BANK and self.coup_number == coup
                                and self.bank_offered_to == player)

    def decline_bank(self, player: str) -> None:
        """The player offered the shoe lets it pass to the next in rotation. Once everyone
        seated has let it pass, the sum a passed hand required lapses and the bank is given
        afresh (auction or lot)."""
        offered = self.verify_decline_bank(player)
        self.bank_declined_by.append(offered)
        candidates = [p for p in self.rotation_after(offered)
                      if p != offered and p not in self.bank_declined_by]
        self.bank_offered_to = candidates[0] if candidates else None
        if not candidates:
            self.bank_required, self.bank_declined_by = 0, []

    def verify_retire_bank(self, player: str) -> None:
        between_coups = (Phase.BETTING, Phase.NO_SHOE, Phase.SHUFFLED, Phase.BURNING)
        self.require(*between_coups, doing="retire the bank")
        require_actor(player, self.banker, "retire the bank")
        if (self.stakes or self.banco_calls) and not self.tie_replay:
            raise OutOfTurn("stakes are already placed against this bank", rule="stakes-placed")

    def retire_bank(self, player: str) -> None:
        """The banker retires between coups, taking the bank; the shoe passes (000)."""
        self.verify_retire_bank(player)
        self._withdraw_from_tie_replay(None)
        retiring, amount = self.banker, self.bank
        assert retiring is not None
        self.bank_back_to_banker()
        self.rules.passing.bank_retired(self, retiring, amount)
        if self.phase is Phase.BETTING:
            self.phase = Phase.NO_BANK
