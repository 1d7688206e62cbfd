"""The coup at the table: dealing from the shoe, the hands' decisions, settling and paying.

`CoupFlow` is the part of `TableState` (`domain.table.state`) that plays the coup
(`domain.game.coup`) with the table's shoe and hand holders, settles it by the variant's payout rule
(`domain.game.payouts`), makes the payouts in order and closes the coup: the bank, the commission,
the variant's rotation (`domain.game.bank_passing`), the tie replay and the end of the taille.
"""

from __future__ import annotations

from domain.actors import require_actor
from domain.errors import OutOfTurn, RuleViolation
from domain.game import payouts
from domain.game.cards import Card, point
from domain.game.coup import Coup, Outcome, Side
from domain.game.payouts import Settlement
from domain.table.base import BETTING, PLAYING, SETTLED, Phase, TableBase


class CoupFlow(TableBase, kw_only=True):
    """A table's coup steps."""

    def _playing(self) -> Coup:
        self.require(PLAYING, doing="play")
        assert self.coup is not None
        return self.coup

    def deal(self, card: Card) -> Side:
        coup = self._playing()
        shoe = self._shoe_with_card(card)
        side = coup.deal(card)  # refused before the coup changes: the shoe is untouched
        shoe.dealt.append(card)
        if shoe.cut_card_at is not None and shoe.position > shoe.cut_card_at:
            shoe.cut_card_out = True
        return side

    def show_naturals(self) -> list[Side]:
        return self._playing().show_naturals()

    def decide(self, actor: str, side: Side, draw: bool) -> None:
        coup = self._playing()
        require_actor(actor, self.hand_holder(side), f"decide for the {side} hand")
        if draw:  # the coup refuses a decision out of turn
            coup.draw(side)
        else:
            coup.stand(side)

    def offer_card(self, actor: str) -> None:
        """À deux tableaux, the banker says "Je donne": the punters may draw (002)."""
        coup = self._playing()
        require_actor(actor, self.banker, "offer a card")
        coup.offer()

    def show_down(self, actor: str) -> None:
        """À deux tableaux, the banker shows his first two cards, whatever their point: the
        coup is settled as the cards lie (002)."""
        coup = self._playing()
        require_actor(actor, self.banker, "show down")
        coup.show_down()

    def settle(self) -> dict[Side, Outcome]:
        coup = self._playing()
        outcomes = coup.settle()
        self.settlement = self.rules.payout.settle(self, outcomes, coup.points())
        self.payouts_made = 0
        self.phase = SETTLED
        return outcomes

    def verify_pay(self, payout: payouts.Payout) -> None:
        self.require(SETTLED, doing="pay")
        assert self.settlement is not None
        owed = self.settlement.payouts
        if self.payouts_made >= len(owed) or owed[self.payouts_made] != payout:
            raise RuleViolation("a payout must be the next one the settlement owes",
                                rule="payout-not-owed")

    def verify_pay_next(self) -> None:
        """The croupier's `pay`: the next payout owed, or closing the coup once all are made."""
        self.require(SETTLED, doing="pay")
        assert self.settlement is not None
        owed = self.settlement.payouts
        if self.payouts_made < len(owed):
            self.verify_pay(owed[self.payouts_made])
        else:
            self.verify_close_coup()

    def pay(self, payout: payouts.Payout) -> None:
        """One payout of the settlement, recorded in pay order."""
        self.verify_pay(payout)
        self.seat_of(payout.player).chips += payout.net
        self.payouts_made += 1

    def verify_close_coup(self) -> Settlement:
        """The settlement of the coup to close."""
        self.require(SETTLED, doing="close the coup")
        assert self.coup is not None and self.coup.outcomes is not None
        settlement = self.settlement
        assert settlement is not None
        if self.payouts_made < len(settlement.payouts):
            raise OutOfTurn("every payout is made before the coup closes", rule="payouts-due")
        return settlement

    def close_coup(self) -> None:
        """After the payouts: the bank, the commission, the rotation, the end of the taille."""
        settlement = self.verify_close_coup()
        assert self.coup is not None and self.coup.outcomes is not None
        self.count_bets()
        self.house_result += settlement.house_net
        self.commission_total += settlement.commission
        self.commission_box.update(settlement.boxes)
        self.bank += settlement.banker_net
        outcomes = self.coup.outcomes
        rules = self.rules
        rules.passing.coup_closed(self, outcomes)
        self.coup, self.covered = None, None
        assert self.shoe is not None
        taille_over = self.shoe.last_coup or self.shoe.remaining < self.cards_per_coup()
        # 001: "si les deux points sont identiques il y a égalité, on refait le coup en donnant
        # de nouvelles cartes": the stakes and the banco stay for the coup played again.
        self.tie_replay = not taille_over and rules.replays_ties and (
            outcomes[Side.PUNTER] is Outcome.TIE)
        if not self.tie_replay:
            self.bets, self.stakes, self.banco_calls = [], [], []
        if taille_over:
            self._end_taille()
            return
        self.shoe.last_coup = self.shoe.cut_card_out
        needs_bank = self.banks_with_player and self.banker is None
        self.phase = Phase.NO_BANK if needs_bank else BETTING

    def count_bets(self) -> None:
        """Where the settings ask (`counts_bets`: a tournament's minimum of bets a round, its
        play-offs), the coup closing counts as a bet of each player who had chips at stake in
        it (a bet, a stake, a banco, a duel, the bank held) in `coups_bet`: theirs at this
        table, kept after they leave. Elsewhere nothing is counted, so that tables opened
        before replay to the state their snapshots hold."""
        if not self.settings.counts_bets:
            return
        for player in self.players():
            if self.committed(player) or player == self.banker:
                self.coups_bet[player] = self.coups_bet.get(player, 0) + 1

    def points(self) -> dict[Side, int]:
        assert self.coup is not None
        return {side: point(cards) for side, cards in self.coup.hands.items()}
