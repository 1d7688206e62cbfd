"""The Table aggregate: one table is one consistency boundary, every step an event.

Each method records one past-tense event (`CardDealt`, `HandStood`, `PayoutMade`...) whose
application is the matching step of the pure `TableState`; a refused step raises before
the event is kept. Replaying the events through the same steps rebuilds the same table.
Every event carries the actor and the command id; events of a coup carry its number.
"""

from __future__ import annotations

import uuid

from eventsourcing.domain import Aggregate, event

from domain.cards import Card
from domain.coup import Outcome, Side
from domain.errors import RuleViolation
from domain.limits import check_name
from domain.payouts import Payout, Spot
from domain.settings import TableSettings
from domain.table import Phase, TableState

NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-7ab1e0000000")


class Table(Aggregate):
    name: str
    tournament: str | None
    state: TableState

    @staticmethod
    def create_id(name: str, **_: object) -> uuid.UUID:
        """A table's id follows from its name, so opening it twice is one table."""
        return uuid.uuid5(NAMESPACE, f"table/{name}")

    class Event(Aggregate.Event):
        actor: str
        command_id: str

    class Opened(Aggregate.Created):
        name: str
        settings: TableSettings
        tournament: str | None
        actor: str
        command_id: str

    @event(Opened)
    def __init__(self, name: str, settings: TableSettings, tournament: str | None,
                 actor: str, command_id: str) -> None:
        self.name = check_name(name, "table's name")
        self.tournament = tournament
        self.state = TableState(settings=settings.check())

    # --- seats --------------------------------------------------------------------

    class PlayerSeated(Event):
        player: str
        chips: int
        side: Side | None
        standing: bool

    @event(PlayerSeated)
    def seat_player(self, player: str, chips: int, side: Side | None, standing: bool,
                    actor: str, command_id: str) -> None:
        self.state.seat(player, chips, side, standing)

    class PlayerLeft(Event):
        player: str

    @event(PlayerLeft)
    def leave(self, player: str, actor: str, command_id: str) -> None:
        self.state.leave(player)

    class ChipsAdjusted(Event):
        player: str
        delta: int
        reason: str

    @event(ChipsAdjusted)
    def adjust_chips(self, player: str, delta: int, reason: str, actor: str,
                     command_id: str) -> None:
        self.state.adjust_chips(player, delta)

    # --- the shoe -----------------------------------------------------------------

    class ShoeShuffled(Event):
        taille: int
        decks: int
        algorithm: str
        commitment: str
        physical: bool

    @event(ShoeShuffled)
    def shuffle(self, taille: int, decks: int, algorithm: str, commitment: str,
                physical: bool, actor: str, command_id: str) -> None:
        self.state.shuffle(decks=decks, algorithm=algorithm, commitment=commitment,
                           physical=physical)

    class EntropyContributed(Event):
        player: str
        entropy: str

    @event(EntropyContributed)
    def contribute(self, player: str, entropy: str, actor: str, command_id: str) -> None:
        self.state.contribute(player, entropy)

    class ShoeCut(Event):
        player: str
        position: int

    @event(ShoeCut)
    def cut(self, player: str, position: int, actor: str, command_id: str) -> None:
        self.state.cut(player, position)

    class CardBurned(Event):
        card: Card
        position: int

    @event(CardBurned)
    def burn(self, card: Card, position: int, actor: str, command_id: str) -> None:
        self.state.burn(card)

    class TailleEnded(Event):
        """The croupier ended the taille between coups, with `remaining` cards in the shoe."""

        taille: int
        remaining: int

    @event(TailleEnded)
    def end_taille(self, taille: int, remaining: int, actor: str, command_id: str) -> None:
        self.state.end_taille()

    class ShoeSeedRevealed(Event):
        taille: int
        seed: str

    @event(ShoeSeedRevealed)
    def reveal(self, taille: int, seed: str, actor: str, command_id: str) -> None:
        self.state.reveal()

    # --- the bank -----------------------------------------------------------------

    class BankAwarded(Event):
        player: str
        amount: int
        how: str

    @event(BankAwarded)
    def award_bank(self, player: str, amount: int, how: str, actor: str,
                   command_id: str) -> None:
        self.state.award_bank(player, amount)

    class BankDeclined(Event):
        player: str

    @event(BankDeclined)
    def decline_bank(self, player: str, actor: str, command_id: str) -> None:
        self.state.decline_bank(player)

    class BankPassed(Event):
        player: str
        amount: int

    @event(BankPassed)
    def retire_bank(self, player: str, amount: int, actor: str, command_id: str) -> None:
        self.state.retire_bank(player)

    # --- stakes -------------------------------------------------------------------

    class BetPlaced(Event):
        coup: int
        player: str
        spot: Spot
        amount: int

    @event(BetPlaced)
    def place_bet(self, coup: int, player: str, spot: Spot, amount: int, actor: str,
                  command_id: str) -> None:
        self.state.place_bet(player, spot, amount)

    class StakePlaced(Event):
        coup: int
        player: str
        tableau: Side
        amount: int

    @event(StakePlaced)
    def place_stake(self, coup: int, player: str, tableau: Side, amount: int, actor: str,
                    command_id: str) -> None:
        self.state.place_stake(player, tableau, amount)

    class BancoCalled(Event):
        coup: int
        player: str

    @event(BancoCalled)
    def call_banco(self, coup: int, player: str, actor: str, command_id: str) -> None:
        self.state.call_banco(player)

    class BettingClosed(Event):
        coup: int

    @event(BettingClosed)
    def close_betting(self, coup: int, actor: str, command_id: str) -> None:
        self.state.close_betting()

    class StakeCovered(Event):
        """Informational: coverage follows from the stakes; recorded for the audit trail."""

        coup: int
        player: str
        tableau: Side
        amount: int

    @event(StakeCovered)
    def _stake_covered(self, coup: int, player: str, tableau: Side, amount: int, actor: str,
                       command_id: str) -> None:
        pass

    class StakeReturned(Event):
        """Informational: the part of a stake the bank did not take on."""

        coup: int
        player: str
        tableau: Side
        amount: int

    @event(StakeReturned)
    def _stake_returned(self, coup: int, player: str, tableau: Side, amount: int,
                        actor: str, command_id: str) -> None:
        pass

    # --- the coup -----------------------------------------------------------------

    class CardDealt(Event):
        coup: int
        card: Card
        side: Side
        position: int

    @event(CardDealt)
    def deal(self, coup: int, card: Card, side: Side, position: int, actor: str,
             command_id: str) -> None:
        self.state.deal(card)

    class NaturalShown(Event):
        coup: int
        sides: list[Side]

    @event(NaturalShown)
    def show_naturals(self, coup: int, sides: list[Side], actor: str,
                      command_id: str) -> None:
        self.state.show_naturals()

    class ThirdCardAsked(Event):
        coup: int
        side: Side

    @event(ThirdCardAsked)
    def ask_third_card(self, coup: int, side: Side, actor: str, command_id: str) -> None:
        self.state.decide(actor, side, draw=True)

    class ThirdCardDrawn(Event):
        coup: int
        card: Card
        side: Side
        position: int

    @event(ThirdCardDrawn)
    def draw_third_card(self, coup: int, card: Card, side: Side, position: int, actor: str,
                        command_id: str) -> None:
        self.state.deal(card)

    class HandStood(Event):
        coup: int
        side: Side

    @event(HandStood)
    def stand(self, coup: int, side: Side, actor: str, command_id: str) -> None:
        self.state.decide(actor, side, draw=False)

    class CoupSettled(Event):
        coup: int
        outcomes: dict[Side, Outcome]
        points: dict[Side, int]

    @event(CoupSettled)
    def settle(self, coup: int, outcomes: dict[Side, Outcome], points: dict[Side, int],
               actor: str, command_id: str) -> None:
        if self.state.settle() != outcomes:
            raise RuleViolation("recorded outcomes differ from the cards", rule="settle-mismatch")

    class PayoutMade(Event):
        coup: int
        payout: Payout

    @event(PayoutMade)
    def pay(self, coup: int, payout: Payout, actor: str, command_id: str) -> None:
        self.state.pay(payout)

    class CommissionTaken(Event):
        """Informational: the cagnotte of the coup, its own amount (applied at CoupClosed)."""

        coup: int
        amount: int

    @event(CommissionTaken)
    def _commission_taken(self, coup: int, amount: int, actor: str, command_id: str) -> None:
        pass

    class CoupClosed(Event):
        coup: int
        banker: str | None
        bank: int

    @event(CoupClosed)
    def close_coup(self, coup: int, banker: str | None, bank: int, actor: str,
                   command_id: str) -> None:
        self.state.close_coup()

    # --- helpers for the service: record what follows from the state --------------

    def record_coverage(self, actor: str, command_id: str) -> None:
        covered = self.state.covered
        if covered is None:
            return
        coup = self.state.coup_number
        for stake in covered.engaged:
            self._stake_covered(coup=coup, player=stake.player, tableau=stake.tableau,
                                amount=stake.amount, actor=actor, command_id=command_id)
        for stake in covered.returned:
            self._stake_returned(coup=coup, player=stake.player, tableau=stake.tableau,
                                 amount=stake.amount, actor=actor, command_id=command_id)

    def record_payment(self, actor: str, command_id: str) -> None:
        """Pay the settled coup in pay order, take the commission, close the coup."""
        self.state.require(Phase.SETTLED, doing="pay")
        settlement = self.state.settlement
        assert settlement is not None
        coup = self.state.coup_number
        for payout in settlement.payouts:
            self.pay(coup=coup, payout=payout, actor=actor, command_id=command_id)
        if settlement.commission:
            self._commission_taken(coup=coup, amount=settlement.commission, actor=actor,
                                   command_id=command_id)
        bank_after = self.state.bank + settlement.banker_net
        self.close_coup(coup=coup, banker=self.state.banker, bank=bank_after, actor=actor,
                        command_id=command_id)
