"""The Table aggregate: one table is one consistency boundary, every step an event.

`Table.execute(command, cards)` decides: it checks the actor's right and the rule, computes
what each event records (the coup's number, the shoe's position, the hand a card goes to,
the naturals, the outcomes, each payout and the bank after the coup) and records it. Each
event is applied by a private `@event` method that checks the values it carries against the
state, then takes the matching step of the pure `TableState`; a refused step raises before
the event is kept. Replaying the events through the same methods rebuilds the same table.
Every event carries the actor and the command id; events of a coup carry its number. What
only the outside world has (an RNG shoe's seed and cards) comes through a `CardSource`.
"""

from __future__ import annotations

import uuid
from typing import assert_never

import msgspec
from eventsourcing.domain import Aggregate, event

from domain.commands import require_known
from domain.errors import OutOfTurn, RuleViolation
from domain.game.card_source import CardSource
from domain.game.cards import Card
from domain.game.coup import Outcome, Side
from domain.game.coverage import Stake
from domain.game.payouts import Payout, Spot
from domain.game.settings import TableSettings
from domain.game.shoe import ALGORITHM
from domain.limits import check_name
from domain.table import betting_order, clocks, reading
from domain.table import commands as c
from domain.table.betting_order import PassReason
from domain.table.defaults import default_draw
from domain.table.recording import recorded
from domain.table.rights import require_right
from domain.table.room import FREE_ROOM, Room, require_room
from domain.table.state import Phase, TableState
from domain.topics import keep_topics

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

    @event(Opened)  # eventsourcing's own: the created event
    def __init__(self, name: str, settings: TableSettings, tournament: str | None,
                 actor: str, command_id: str) -> None:
        self.name = check_name(name, "table's name")
        self.tournament = tournament
        self.state = TableState(settings=settings.check())

    # --- deciding -------------------------------------------------------------------

    def execute(self, command: c.TableCommand, cards: CardSource, room: Room = FREE_ROOM) -> None:
        """Check `command` (the room it is sent in, its actor's right, the rules) and record
        what it does."""
        require_known(command, c.TABLE_COMMANDS, "a table")
        s = self.state
        actor = command.actor
        who = {"actor": actor, "command_id": command.command_id}
        before = clocks.awaited(s, room)
        require_room(actor, command, s, room)
        require_right(actor, command, s)
        match command:  # a coup's steps by how often they come (most commands), then the rest
            case c.DealCard(card=given):
                self._deal(given, cards, who)
            case c.PlaceBet(player=p, spot=spot, amount=amount):
                self._bet_placed(coup=s.coup_number + 1, player=p, spot=spot, amount=amount, **who)
            case c.PlaceStake(player=p, tableau=tableau, amount=amount):
                self._stake_placed(coup=s.coup_number + 1, player=p, tableau=tableau,
                                   amount=amount, **who)
            case c.Decide(side=side, draw=draw):
                self._decide_hand(side, draw, who)
            case c.CloseBetting():
                self._betting_closed(coup=s.coup_number + 1, **who)
                self._record_coverage(who)
            case c.ShowNaturals():
                coup = reading.coup_of(self.state)
                self._naturals_shown(coup=s.coup_number, sides=coup.naturals_preview(), **who)
            case c.SettleCoup():
                coup = reading.coup_of(self.state)
                self._coup_settled(coup=s.coup_number, outcomes=coup.outcomes_now(),
                                   points=coup.points(), **who)
            case c.PayCoup():
                self._record_payment(who)
            case c.CallBanco(player=p):
                self._banco_called(coup=s.coup_number + 1, player=p, **who)
            case c.PassBetTurn(player=p, coup=number, reason=reason):
                if betting_order.pass_due(s, actor, p, number, reason):
                    self._bet_turn_passed(coup=s.coup_number + 1, player=p, reason=reason, **who)
                    if reason is PassReason.CLOCK and (charge := s.sitting_out_charge(p)):
                        self._sitting_out_charged(coup=s.coup_number + 1, player=p,
                                                  amount=charge, **who)
            case c.PlayDefault(coup=number, side=side):
                if reading.awaits(s, number, side):
                    if reading.coup_of(s).awaits_offer():  # the banker's default: "Je donne"
                        self._card_offered(coup=number, **who)
                    else:
                        self._decide_hand(side, default_draw(s, side), who)
            case c.OfferCard():
                self._card_offered(coup=s.coup_number, **who)
            case c.ShowDown():
                self._banker_showed_down(coup=s.coup_number, **who)
            case c.AwardBank(player=p, amount=amount, how=how):
                self._bank_awarded(player=p, amount=amount, how=how, **who)
            case c.DeclineBank(player=p, coup=number):
                if s.decline_due(p, number):
                    self._bank_declined(player=p, **who)
            case c.RetireBank(player=p):
                self._bank_passed(player=p, amount=s.bank, **who)
            case c.ShuffleShoe(physical=physical):
                s.require(Phase.NO_SHOE, doing="shuffle")
                sealed = "" if physical else cards.seal_seed(self.id, s.taille + 1)
                self._shuffled(taille=s.taille + 1, decks=s.settings.decks,
                               algorithm=ALGORITHM, commitment=sealed, physical=physical, **who)
            case c.ContributeEntropy(player=p, entropy=entropy):
                self._entropy_contributed(player=p, entropy=entropy.lower(), **who)
            case c.CutShoe(player=p, position=position):
                self._cut(player=p, position=position, **who)
            case c.BurnCard(card=given):
                burned = reading.next_card(self.state, given, cards)
                self._burned(card=burned, position=reading.shoe_of(self.state).position, **who)
            case c.RevealSeed():
                s.require(Phase.TAILLE_OVER, doing="reveal the seed")
                seed = cards.seed_of(reading.shoe_of(self.state).commitment)
                self._seed_revealed(taille=s.taille, seed=seed.hex(), **who)
            case c.EndTaille():
                remaining = s.shoe.remaining if s.shoe else 0
                self._taille_ended(taille=s.taille, remaining=remaining, **who)
            case c.SeatPlayer(player=p, chips=chips, side=side, standing=standing):
                self._seated(player=p, chips=chips, side=side, standing=standing, **who)
            case c.LeaveTable(player=p):
                self._left(player=p, **who)
            case c.AdjustChips(player=p, delta=delta, reason=reason):
                self._chips_adjusted(player=p, delta=delta, reason=reason, **who)
            case c.ChangeLimits(min_stake=low, max_stake=high, bet_seconds=seconds):
                if s.phase in (Phase.PLAYING, Phase.SETTLED):  # stakes placed already stand
                    raise OutOfTurn("the stake limits change between coups, not during one",
                                    rule="limits-mid-coup")
                self._limits_changed(min_stake=low, max_stake=high, bet_seconds=seconds, **who)
            case _:
                assert_never(command)
        if before is not None:
            self._record_clocks(before, room, who)

    def _record_clocks(self, before: clocks.Awaited, room: Room, who: dict[str, str]) -> None:
        """The clocks the command started (`domain.table.clocks`): a rotating order's turn
        to bet, a person's decision on a hand or on the bank offered to them."""
        s = self.state
        player = betting_order.bettor(s)
        if player is not None and (s.coup_number, player) != before[0]:
            self._bet_turn_began(coup=s.coup_number + 1, player=player,
                                 seconds=clocks.bet_clock(s, player, room), **who)
        decision = clocks.decision_awaited(s, room)
        if decision is not None and decision != before[1]:
            coup, person, side = decision
            self._decision_clock_started(coup=coup, player=person, side=side,
                                         seconds=s.settings.decision_seconds, **who)

    def _deal(self, given: Card | None, cards: CardSource, who: dict[str, str]) -> None:
        s = self.state
        coup = reading.coup_of(s)
        dealt = reading.next_card(s, given, cards)
        record = self._card_dealt if coup.awaiting_card is None else self._third_card_drawn
        record(coup=s.coup_number, card=dealt, side=coup.verify_deal(),
               position=reading.shoe_of(s).position, **who)

    def _decide_hand(self, side: Side, draw: bool, who: dict[str, str]) -> None:
        record = self._third_card_asked if draw else self._hand_stood
        record(coup=self.state.coup_number, side=side, **who)

    def _record_coverage(self, who: dict[str, str]) -> None:
        covered = self.state.covered
        if covered is None:
            return
        coup = self.state.coup_number
        for stake in covered.engaged:
            self._stake_covered(coup=coup, player=stake.player, tableau=stake.tableau,
                                amount=stake.amount, **who)
        for stake in covered.returned:
            self._stake_returned(coup=coup, player=stake.player, tableau=stake.tableau,
                                 amount=stake.amount, **who)

    def _record_payment(self, who: dict[str, str]) -> None:
        """Pay the settled coup in pay order, take the commission, close the coup."""
        self.state.require(Phase.SETTLED, doing="pay")
        settlement = self.state.settlement
        assert settlement is not None
        coup = self.state.coup_number
        for payout in settlement.payouts:
            self._payout_made(coup=coup, payout=payout, **who)
        if settlement.commission:
            self._commission_taken(coup=coup, amount=settlement.commission, **who)
        self._coup_closed(coup=coup, banker=self.state.banker,
                          bank=self.state.bank + settlement.banker_net, **who)

    # --- seats ----------------------------------------------------------------------

    class PlayerSeated(Event):
        player: str
        chips: int
        side: Side | None
        standing: bool

    @recorded(PlayerSeated)
    def _seated(self, player: str, chips: int, side: Side | None, standing: bool,
                actor: str, command_id: str) -> None:
        self.state.seat(player, chips, side, standing)

    class PlayerLeft(Event):
        player: str

    @recorded(PlayerLeft)
    def _left(self, player: str, actor: str, command_id: str) -> None:
        self.state.leave(player)

    class ChipsAdjusted(Event):
        player: str
        delta: int
        reason: str

    @recorded(ChipsAdjusted)
    def _chips_adjusted(self, player: str, delta: int, reason: str, actor: str,
                        command_id: str) -> None:
        self.state.adjust_chips(player, delta)

    class LimitsChanged(Event):
        """The table's stake limits from the next coup on (a tournament's rising limits)."""

        min_stake: int = 1
        max_stake: int = 0
        bet_seconds: int | None = None  # the bet clock too (None: unchanged)

    @recorded(LimitsChanged)
    def _limits_changed(self, min_stake: int, max_stake: int, bet_seconds: int | None,
                        actor: str, command_id: str) -> None:
        settings = self.state.settings
        self.state.settings = msgspec.structs.replace(
            settings, min_stake=min_stake, max_stake=max_stake,
            bet_seconds=settings.bet_seconds if bet_seconds is None else bet_seconds).check()

    # --- the shoe -----------------------------------------------------------------

    class ShoeShuffled(Event):
        taille: int
        decks: int
        algorithm: str
        commitment: str
        physical: bool

    @recorded(ShoeShuffled)
    def _shuffled(self, taille: int, decks: int, algorithm: str, commitment: str,
                  physical: bool, actor: str, command_id: str) -> None:
        if taille != self.state.taille + 1:
            raise reading.mismatch("taille", taille, self.state.taille + 1)
        self.state.shuffle(decks=decks, algorithm=algorithm, commitment=commitment,
                           physical=physical)

    class EntropyContributed(Event):
        player: str
        entropy: str

    @recorded(EntropyContributed)
    def _entropy_contributed(self, player: str, entropy: str, actor: str, command_id: str) -> None:
        self.state.contribute(player, entropy)

    class ShoeCut(Event):
        player: str
        position: int

    @recorded(ShoeCut)
    def _cut(self, player: str, position: int, actor: str, command_id: str) -> None:
        self.state.cut(player, position)

    class CardBurned(Event):
        card: Card
        position: int

    @recorded(CardBurned)
    def _burned(self, card: Card, position: int, actor: str, command_id: str) -> None:
        reading.check_position(self.state, position)
        self.state.burn(card)

    class TailleEnded(Event):
        """The croupier ended the taille between coups, with `remaining` cards in the shoe."""

        taille: int
        remaining: int

    @recorded(TailleEnded)
    def _taille_ended(self, taille: int, remaining: int, actor: str, command_id: str) -> None:
        reading.check_taille_end(self.state, taille, remaining)
        self.state.end_taille()

    class ShoeSeedRevealed(Event):
        taille: int
        seed: str

    @recorded(ShoeSeedRevealed)
    def _seed_revealed(self, taille: int, seed: str, actor: str, command_id: str) -> None:
        reading.check_seed_revealed(self.state, taille, seed)
        self.state.reveal()

    # --- the bank -----------------------------------------------------------------

    class BankAwarded(Event):
        player: str
        amount: int
        how: str

    @recorded(BankAwarded)
    def _bank_awarded(self, player: str, amount: int, how: str, actor: str,
                      command_id: str) -> None:
        self.state.award_bank(player, amount)

    class BankDeclined(Event):
        player: str

    @recorded(BankDeclined)
    def _bank_declined(self, player: str, actor: str, command_id: str) -> None:
        self.state.decline_bank(player)

    class BankPassed(Event):
        player: str
        amount: int

    @recorded(BankPassed)
    def _bank_passed(self, player: str, amount: int, actor: str, command_id: str) -> None:
        if amount != self.state.bank:
            raise reading.mismatch("a bank of", amount, self.state.bank)
        self.state.retire_bank(player)

    # --- stakes -------------------------------------------------------------------

    class BetPlaced(Event):
        coup: int
        player: str
        spot: Spot
        amount: int

    @recorded(BetPlaced)
    def _bet_placed(self, coup: int, player: str, spot: Spot, amount: int, actor: str,
                    command_id: str) -> None:
        reading.check_coup(self.state, coup, next_one=True)
        self.state.place_bet(player, spot, amount)

    class BetTurnBegan(Event):
        """Informational: in a rotating order, `player`'s turn to bet on `coup` began, with
        `seconds` on the bet clock (0: none)."""

        coup: int
        player: str
        seconds: int

    @recorded(BetTurnBegan)
    def _bet_turn_began(self, coup: int, player: str, seconds: int, actor: str,
                        command_id: str) -> None:
        clocks.check_turn(self.state, coup, player)
        self.state.turn_seconds = seconds

    class DecisionClockStarted(Event):
        """Informational: `player`'s decision on the hand of `side` in `coup` (side None: on
        the shoe offered to them after `coup`) began, with `seconds` on their clock (a
        person's: a bot's starts no clock event)."""

        coup: int
        player: str
        side: Side | None
        seconds: int

    @recorded(DecisionClockStarted)
    def _decision_clock_started(self, coup: int, player: str, side: Side | None, seconds: int,
                                actor: str, command_id: str) -> None:
        clocks.start_decision(self.state, coup, player, side, seconds)

    class BetTurnPassed(Event):
        """In a rotating order, `player`'s turn to bet on `coup` passed with no bet."""

        coup: int
        player: str
        reason: PassReason

    @recorded(BetTurnPassed)
    def _bet_turn_passed(self, coup: int, player: str, reason: PassReason, actor: str,
                         command_id: str) -> None:
        reading.check_coup(self.state, coup, next_one=True)
        self.state.pass_bet_turn(player, reason)

    class SittingOutCharged(Event):
        """The house took `amount` from `player` for the turn to bet the clock passed."""

        coup: int
        player: str
        amount: int

    @recorded(SittingOutCharged)
    def _sitting_out_charged(self, coup: int, player: str, amount: int, actor: str,
                             command_id: str) -> None:
        reading.check_coup(self.state, coup, next_one=True)
        self.state.charge_sitting_out(player, amount)

    class StakePlaced(Event):
        coup: int
        player: str
        tableau: Side
        amount: int

    @recorded(StakePlaced)
    def _stake_placed(self, coup: int, player: str, tableau: Side, amount: int, actor: str,
                      command_id: str) -> None:
        reading.check_coup(self.state, coup, next_one=True)
        self.state.place_stake(player, tableau, amount)

    class BancoCalled(Event):
        coup: int
        player: str

    @recorded(BancoCalled)
    def _banco_called(self, coup: int, player: str, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup, next_one=True)
        self.state.call_banco(player)

    class BettingClosed(Event):
        coup: int

    @recorded(BettingClosed)
    def _betting_closed(self, coup: int, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup, next_one=True)
        self.state.close_betting()

    class StakeCovered(Event):
        """Informational: coverage follows from the stakes; recorded for the audit trail."""

        coup: int
        player: str
        tableau: Side
        amount: int

    @recorded(StakeCovered)
    def _stake_covered(self, coup: int, player: str, tableau: Side, amount: int, actor: str,
                       command_id: str) -> None:
        reading.check_stake(self.state, coup, Stake(player, tableau, amount), engaged=True)

    class StakeReturned(Event):
        """Informational: the part of a stake the bank did not take on."""

        coup: int
        player: str
        tableau: Side
        amount: int

    @recorded(StakeReturned)
    def _stake_returned(self, coup: int, player: str, tableau: Side, amount: int,
                        actor: str, command_id: str) -> None:
        reading.check_stake(self.state, coup, Stake(player, tableau, amount), engaged=False)

    # --- the coup -----------------------------------------------------------------

    class CardDealt(Event):
        coup: int
        card: Card
        side: Side
        position: int

    @recorded(CardDealt)
    def _card_dealt(self, coup: int, card: Card, side: Side, position: int, actor: str,
                    command_id: str) -> None:
        reading.check_dealt(self.state, coup, side, position, third=False)
        self.state.deal(card)

    class NaturalShown(Event):
        coup: int
        sides: list[Side]

    @recorded(NaturalShown)
    def _naturals_shown(self, coup: int, sides: list[Side], actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        shown = reading.coup_of(self.state).naturals_preview()
        if sorted(sides) != sorted(shown):
            raise reading.mismatch("naturals on", sides, shown)
        self.state.show_naturals()

    class ThirdCardAsked(Event):
        coup: int
        side: Side

    @recorded(ThirdCardAsked)
    def _third_card_asked(self, coup: int, side: Side, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        self.state.decide(actor, side, draw=True)

    class ThirdCardDrawn(Event):
        coup: int
        card: Card
        side: Side
        position: int

    @recorded(ThirdCardDrawn)
    def _third_card_drawn(self, coup: int, card: Card, side: Side, position: int,
                          actor: str, command_id: str) -> None:
        reading.check_dealt(self.state, coup, side, position, third=True)
        self.state.deal(card)

    class HandStood(Event):
        coup: int
        side: Side

    @recorded(HandStood)
    def _hand_stood(self, coup: int, side: Side, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        self.state.decide(actor, side, draw=False)

    class CardOffered(Event):
        """À deux tableaux, the banker said "Je donne" (002)."""

        coup: int

    @recorded(CardOffered)
    def _card_offered(self, coup: int, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        self.state.offer_card(actor)

    class BankerShowedDown(Event):
        """À deux tableaux, the banker showed his first two cards, ending the coup (002)."""

        coup: int

    @recorded(BankerShowedDown)
    def _banker_showed_down(self, coup: int, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        self.state.show_down(actor)

    class CoupSettled(Event):
        coup: int
        outcomes: dict[Side, Outcome]
        points: dict[Side, int]

    @recorded(CoupSettled)
    def _coup_settled(self, coup: int, outcomes: dict[Side, Outcome],
                      points: dict[Side, int], actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        if reading.coup_of(self.state).points() != points:
            raise reading.mismatch("points", points, reading.coup_of(self.state).points())
        if self.state.settle() != outcomes:
            raise RuleViolation("recorded outcomes differ from the cards", rule="settle-mismatch")

    class PayoutMade(Event):
        coup: int
        payout: Payout

    @recorded(PayoutMade)
    def _payout_made(self, coup: int, payout: Payout, actor: str, command_id: str) -> None:
        reading.check_coup(self.state, coup)
        self.state.pay(payout)

    class CommissionTaken(Event):
        """Informational: the cagnotte of the coup, its own amount (applied at CoupClosed)."""

        coup: int
        amount: int

    @recorded(CommissionTaken)
    def _commission_taken(self, coup: int, amount: int, actor: str, command_id: str) -> None:
        reading.check_commission(self.state, coup, amount)

    class CoupClosed(Event):
        coup: int
        banker: str | None
        bank: int

    @recorded(CoupClosed)
    def _coup_closed(self, coup: int, banker: str | None, bank: int, actor: str,
                     command_id: str) -> None:
        reading.check_bank_after(self.state, coup, banker, bank)
        self.state.close_coup()


keep_topics(Table, "domain.table_aggregate")
