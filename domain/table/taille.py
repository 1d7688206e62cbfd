"""The taille: the shoe from its shuffle to its end.

`Taille` is the part of `TableState` (`domain.table.state`) that shuffles (a commitment to an RNG
shoe, or a physical shoe), takes the punters' entropy, cuts and burns, then opens betting;
and ends the taille, whose RNG seed is then revealed. The shoe's public record is
`ShoeState` (`domain.table.base`).
"""

from __future__ import annotations

from domain.actors import is_official
from domain.errors import OutOfTurn, RuleViolation
from domain.game.cards import Card
from domain.game.settings import Burn
from domain.game.shoe import burn_count, cut_card_index
from domain.table.base import Phase, ShoeState, TableBase

_HEX = frozenset("0123456789abcdef")


class Taille(TableBase, kw_only=True):
    """A table's shoe steps."""

    def verify_shuffle(self, *, decks: int, commitment: str, physical: bool) -> None:
        self.require(Phase.NO_SHOE, doing="shuffle")
        if decks != self.settings.decks:
            raise RuleViolation(f"this table plays {self.settings.decks} decks, not {decks}",
                                rule="shoe-decks")
        if not physical and len(commitment) != 64:
            raise RuleViolation("an RNG shoe needs a SHA-256 commitment", rule="shoe-commitment")

    def shuffle(self, *, decks: int, algorithm: str, commitment: str, physical: bool) -> None:
        self.verify_shuffle(decks=decks, commitment=commitment, physical=physical)
        self.shoe = ShoeState(decks=decks, algorithm=algorithm, commitment=commitment,
                              physical=physical)
        self.taille += 1
        self.phase = Phase.SHUFFLED

    def verify_contribute(self, player: str, entropy: str) -> None:
        self.require(Phase.SHUFFLED, doing="shuffle in entropy")
        self.seat_of(player)
        assert self.shoe is not None
        if self.shoe.physical:
            raise RuleViolation("a physical shoe takes no entropy", rule="physical-shoe")
        if not 2 <= len(entropy) <= 128 or len(entropy) % 2 or not set(entropy) <= _HEX:
            # recorded as given: only lowercase hex lets anyone recompute the shoe's order
            raise RuleViolation("a contribution is 1 to 64 bytes, in lowercase hex",
                                rule="shoe-contribution")

    def contribute(self, player: str, entropy: str) -> None:
        self.verify_contribute(player, entropy)
        assert self.shoe is not None
        self.shoe.contributions.append(entropy)

    def verify_cut(self, player: str, position: int) -> None:
        self.require(Phase.SHUFFLED, doing="cut")
        if not is_official(player):
            self.seat_of(player)
        assert self.shoe is not None
        if not 1 <= position < self.shoe.decks * 52:
            raise RuleViolation(f"the cut must fall between 1 and {self.shoe.decks * 52 - 1}",
                                rule="shoe-cut")

    def cut(self, player: str, position: int) -> None:
        self.verify_cut(player, position)
        assert self.shoe is not None
        self.shoe.cut = position
        self.shoe.cut_card_at = cut_card_index(self.settings)
        if self.settings.burn is not Burn.BY_FIRST_CARD:
            self.shoe.burns_due = burn_count(self.settings, Card("As"))
        self.phase = Phase.BURNING
        self._burns_done()

    def verify_burn(self, card: Card) -> ShoeState:
        """The shoe the card is burned from."""
        self.require(Phase.BURNING, doing="burn")
        return self._shoe_with_card(card)

    def burn(self, card: Card) -> None:
        shoe = self.verify_burn(card)
        if shoe.burns_due is None:  # the first card is turned, then as many more burned
            shoe.burns_due = 1 + burn_count(self.settings, card)
        shoe.burned.append(card)
        self._burns_done()

    def _burns_done(self) -> None:
        assert self.shoe is not None
        due = self.shoe.burns_due
        if due is not None and len(self.shoe.burned) >= due:
            self._open_betting()

    def verify_reveal(self) -> None:
        self.require(Phase.TAILLE_OVER, doing="reveal the seed")

    def reveal(self) -> None:
        """The taille is over and the seed has been shown (checked by the caller)."""
        self.verify_reveal()
        self.phase = Phase.NO_SHOE

    def verify_end_taille(self) -> None:
        self.require(Phase.BETTING, Phase.NO_BANK, doing="end the taille")
        if (self.bets or self.stakes or self.banco_calls) and not self.tie_replay:
            raise OutOfTurn("stakes are placed: play the coup first", rule="stakes-placed")

    def end_taille(self) -> None:
        """The croupier ends the taille between coups (the table closes, or a tournament ends
        with cards left in the shoe); an RNG shoe's seed is then revealed as usual."""
        self.verify_end_taille()
        self._withdraw_from_tie_replay(None)
        self._end_taille()

    def _open_betting(self) -> None:
        needs_bank = self.banks_with_player and self.banker is None
        self.phase = Phase.NO_BANK if needs_bank else Phase.BETTING
        self.rules.banking.betting_opens(self)
