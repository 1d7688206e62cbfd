"""A table between and during coups: seats, shoe and taille, bank, stakes, the coup, rotation.

The table's own state machine wraps the coup's (`domain.coup`). Its steps, for a taille:
shuffle, contribute (each punter may add entropy), cut, burn; then for every coup: the bank
is given (chemin de fer, à deux tableaux), stakes are placed and banco called, betting
closes (coverage), the coup is played, settled and paid. Paying moves the chips, the
bank and the rotation. When the cut card has come out, one more coup is dealt and the
taille ends; an RNG shoe's seed is then revealed.

Every method validates before it changes anything, so a refused step leaves the table as it
was; the Table aggregate records each step as an event and replays it through these methods.
Actors are player ids, or officials whose ids start with `@` (`@croupier`, `@system`): who
may act for whom is `domain.actors`'.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from functools import partial

import msgspec

from domain import betting_order, coverage, payouts
from domain.actors import is_official, require_actor
from domain.banking import fill_duel
from domain.betting_order import BetTurns
from domain.cards import Card, point, value
from domain.coup import Coup, LegalStep, Outcome, Side, Step
from domain.errors import DomainError, NotFound, OutOfTurn, RuleViolation
from domain.limits import check_chips, check_name
from domain.payouts import Bet, Settlement, Spot
from domain.settings import Burn, TableSettings, Variant
from domain.shoe import Shoe, burn_count, cut_card_index
from domain.variants import VariantRules, rules_for

CROUPIER = "@croupier"
_HEX = frozenset("0123456789abcdef")


class Phase(StrEnum):
    NO_SHOE = "no-shoe"
    SHUFFLED = "shuffled"
    BURNING = "burning"
    NO_BANK = "no-bank"
    BETTING = "betting"
    PLAYING = "playing"
    SETTLED = "settled"
    TAILLE_OVER = "taille-over"


class Seat(msgspec.Struct, kw_only=True):
    """A player at the table. `side`: à deux tableaux, the tableau the seat is on."""

    player: str
    chips: int
    side: Side | None = None
    standing: bool = False


class Action(msgspec.Struct, frozen=True):
    """A step the table may take now, and who may take it (`None`: any seated player)."""

    step: str
    actor: str | None
    side: Side | None = None
    forced: bool = False


class ShoeState(msgspec.Struct, kw_only=True):
    """The shoe of the current taille as the public record knows it (never the seed)."""

    decks: int
    algorithm: str = ""
    commitment: str = ""
    contributions: list[str] = msgspec.field(default_factory=list)
    cut: int = 0
    physical: bool = False
    burned: list[Card] = msgspec.field(default_factory=list)
    burns_due: int | None = None
    dealt: list[Card] = msgspec.field(default_factory=list)
    cut_card_at: int | None = None
    cut_card_out: bool = False
    last_coup: bool = False

    @property
    def position(self) -> int:
        """Cards out of the shoe so far, burned ones included."""
        return len(self.burned) + len(self.dealt)

    @property
    def remaining(self) -> int:
        return self.decks * 52 - self.position

    def public(self) -> Shoe:
        return Shoe(algorithm=self.algorithm, decks=self.decks, commitment=self.commitment,
                    contributions=tuple(self.contributions), cut=self.cut)


class TableState(msgspec.Struct, kw_only=True):
    settings: TableSettings
    seats: list[Seat] = msgspec.field(default_factory=list)
    phase: Phase = Phase.NO_SHOE
    shoe: ShoeState | None = None
    taille: int = 0
    coup_number: int = 0
    coup: Coup | None = None
    banker: str | None = None
    bank: int = 0
    bank_offered_to: str | None = None
    bank_required: int = 0
    bank_declined_by: list[str] = msgspec.field(default_factory=list)
    passed_hand_returns_to: str | None = None
    banco_suivi: str | None = None
    bancos_in_a_row: int = 0  # à deux tableaux: bancos against this bank, two at most (000)
    hand_holders: dict[Side, str] = msgspec.field(default_factory=dict)
    duel: list[str] = msgspec.field(default_factory=list)
    bets: list[Bet] = msgspec.field(default_factory=list)
    stakes: list[coverage.Stake] = msgspec.field(default_factory=list)
    banco_calls: list[str] = msgspec.field(default_factory=list)
    tie_replay: bool = False  # chemin de fer: the stakes of a tied coup play it again
    covered: coverage.Coverage | None = None
    settlement: Settlement | None = None
    payouts_made: int = 0
    house_result: int = 0
    commission_total: int = 0
    commission_box: dict[str, int] = msgspec.field(default_factory=dict)  # payouts.BOX_UNITS
    chips_in: int = 0  # brought to the table: seats and adjustments
    chips_out: int = 0  # carried away by players who left
    bet_turns: BetTurns = msgspec.field(default_factory=BetTurns)  # who had their turn to bet

    # --- reading --------------------------------------------------------------------

    @property
    def chips_at_table(self) -> int:
        """The chips on the seats and in the bank."""
        return sum(s.chips for s in self.seats) + self.bank

    def holding(self, player: str) -> int:
        """A player's chips at this table, their bank included while they hold it."""
        return self.seat_of(player).chips + (self.bank if player == self.banker else 0)

    def chips_accounted(self) -> bool:
        """Every chip brought to the table is at a seat, in the bank, the house's, or gone
        with a player who left."""
        return self.chips_in == self.chips_at_table + self.house_result + self.chips_out

    @property
    def variant(self) -> Variant:
        return self.settings.variant

    @property
    def rules(self) -> VariantRules:
        return rules_for(self.settings)

    @property
    def banks_with_player(self) -> bool:
        return self.rules.has_bank

    @property
    def house_banks(self) -> bool:
        """Bets go on the house's spots (punto banco, the family game's side bets)."""
        return self.rules.banking.house_bets

    def seat_of(self, player: str) -> Seat:
        for seat in self.seats:
            if seat.player == player:
                return seat
        raise NotFound(f"{player} is not at this table", rule="unknown-player")

    def players(self) -> list[str]:
        return [s.player for s in self.seats]

    def seated(self) -> list[str]:
        return [s.player for s in self.seats if not s.standing]

    def rotation_after(self, player: str) -> list[str]:
        """Seated players in the direction of play from the one after `player`."""
        seated = self.seated()
        if player not in seated:
            return seated
        i = seated.index(player)
        return seated[i + 1:] + seated[:i]

    def punter_order(self) -> list[str]:
        """Priority among punters: seat order from the banker's right, standing punters last."""
        first = self.rotation_after(self.banker) if self.banker else self.seated()
        return [p for p in first if p != self.banker] + [
            s.player for s in self.seats if s.standing
        ]

    def committed(self, player: str) -> int:
        """Chips a player has at risk in the coup being staked or played (a duellist's stake
        is at risk once betting has closed)."""
        dueling = player in self.duel and self.phase in (Phase.PLAYING, Phase.SETTLED)
        return sum(b.amount for b in self.bets if b.player == player) + sum(
            s.amount for s in self.stakes if s.player == player
        ) + (self.settings.duel_stake if dueling else 0)

    def hand_holder(self, side: Side) -> str | None:
        """Who decides for a tableau in the coup being played."""
        return self.rules.banking.hand_holder(self, side)

    def cards_per_coup(self) -> int:
        return 3 * (len(self.rules.tableaux) + 1)

    # --- what may happen now --------------------------------------------------------

    def legal_actions(self) -> list[Action]:
        """The steps the table accepts now. Each is offered because its own guard, tried on a
        copy of the table, accepts it: the offer cannot drift from the rules. A player's step
        (`actor` None) is offered when it is open to at least one player at the table; the
        coup's steps are the coup's own (`Coup.legal_steps`, which its guards check)."""
        if self.phase is Phase.PLAYING:
            assert self.coup is not None
            return [self._coup_action(s) for s in self.coup.legal_steps()]
        return [action for action, tries in self._steps() if any(map(self._accepts, tries))]

    def _steps(self) -> list[tuple[Action, list[Callable[[TableState], object]]]]:
        """Every step between coups, who takes it, and the guarded calls that would take it."""
        players, stake, offered = self.players(), self.settings.min_stake, self.bank_offered_to
        to_offered = [offered] if offered is not None else []
        turn = betting_order.bettor(self)
        bank = max(self.settings.min_stake, self.bank_required)
        T = TableState
        return [
            (Action("shuffle", CROUPIER), [partial(T.shuffle, decks=self.settings.decks,
                                                   algorithm="", commitment="0" * 64,
                                                   physical=False)]),
            (Action("contribute", None), [partial(T.contribute, player=p, entropy="00")
                                          for p in players]),
            (Action("cut", None), [partial(T.cut, player=p, position=1) for p in players]),
            (Action("burn", CROUPIER, forced=True), [partial(T.burn, card=Card("As"))]),
            (Action("award-bank", CROUPIER), [partial(T.award_bank, player=p, amount=bank)
                                              for p in players]),
            (Action("take-bank", offered), [partial(T.award_bank, player=p, amount=bank)
                                            for p in to_offered]),
            (Action("decline-bank", offered), [partial(T.decline_bank, player=p)
                                               for p in to_offered]),
            (Action("bet", turn), [partial(T.place_bet, player=p, spot=spot, amount=stake)
                                   for p in players for spot in Spot]),
            (Action("pass-bet", turn), [partial(T.pass_bet_turn, player=p) for p in players]),
            (Action("stake", None), [partial(T.place_stake, player=p, tableau=t, amount=stake)
                                     for p in players for t in self.rules.tableaux]),
            (Action("banco", None), [partial(T.call_banco, player=p) for p in players]),
            (Action("close-betting", CROUPIER), [T.close_betting]),
            (Action("retire-bank", self.banker), [partial(T.retire_bank, player=p)
                                                  for p in [self.banker] if p is not None]),
            (Action("end-taille", CROUPIER), [T.end_taille]),
            (Action("pay", CROUPIER, forced=True), [T._pay_next]),
            (Action("reveal-seed", CROUPIER, forced=True), [T.reveal]),
        ]

    def _pay_next(self) -> None:
        """The croupier's `pay`: the next payout owed, or closing the coup once all are made."""
        self.require(Phase.SETTLED, doing="pay")
        assert self.settlement is not None
        owed = self.settlement.payouts
        if self.payouts_made < len(owed):
            self.pay(owed[self.payouts_made])
        else:
            self.close_coup()

    def _accepts(self, attempt: Callable[[TableState], object]) -> bool:
        try:
            attempt(_COPY_DECODER.decode(_COPY_ENCODER.encode(self)))
        except DomainError:
            return False
        return True

    def _coup_action(self, step: LegalStep) -> Action:
        actor = CROUPIER
        if step.step in (Step.DRAW, Step.STAND, Step.OFFER, Step.SHOW_DOWN) and step.side:
            actor = self.hand_holder(step.side) or CROUPIER
        return Action(step.step.value, actor, step.side, step.forced)

    def require(self, *phases: Phase, doing: str) -> None:
        if self.phase not in phases:
            wanted = " or ".join(p.value for p in phases)
            raise OutOfTurn(f"cannot {doing} now: the table is at {self.phase.value}, "
                            f"not {wanted}", rule="out-of-turn")

    # --- seats ----------------------------------------------------------------------

    def seat(self, player: str, chips: int, side: Side | None, standing: bool) -> None:
        if any(s.player == player for s in self.seats):
            raise RuleViolation(f"{player} is already at this table", rule="already-seated")
        check_name(player, "player's name")
        if chips < 0:
            raise RuleViolation("chips cannot be negative", rule="chips-negative")
        check_chips(chips)
        rules = self.rules
        if rules.seats_on_sides and not standing and side not in rules.tableaux:
            raise RuleViolation("an à deux tableaux seat is on the right or the left",
                                rule="seat-side")
        self.seats.append(Seat(player=player, chips=chips, side=side, standing=standing))
        self.chips_in += chips
        rules.banking.seated(self)

    def leave(self, player: str) -> int:
        """A player leaves between coups, taking their chips."""
        seat = self.seat_of(player)
        if self.phase in (Phase.PLAYING, Phase.SETTLED) or (
            self.committed(player) and not self.tie_replay
        ):
            raise OutOfTurn(f"{player} has chips in play", rule="chips-in-play")
        if player == self.banker:
            raise OutOfTurn("the banker retires the bank before leaving", rule="banker-leaving")
        self._withdraw_from_tie_replay(player)
        if player == self.bank_offered_to:
            nxt = [p for p in self.rotation_after(player) if p != player]
            self.bank_offered_to = nxt[0] if nxt else None
        self.seats.remove(seat)
        self.chips_out += seat.chips
        self.commission_box.pop(player, None)  # a credit left in the box lapses
        if self.passed_hand_returns_to == player:
            self.passed_hand_returns_to = None
        if self.banco_suivi == player:
            self.banco_suivi = None
        if player in self.duel:
            self.duel.remove(player)
            fill_duel(self)
        return seat.chips

    def adjust_chips(self, player: str, delta: int) -> None:
        """Chips moved in or out by the tournament (a re-entry, a move between tables)."""
        seat = self.seat_of(player)
        check_chips(seat.chips + delta)
        if seat.chips + delta < 0:
            raise RuleViolation(f"{player} has only {seat.chips} chips", rule="chips-short")
        seat.chips += delta
        self.chips_in += delta

    # --- the shoe -------------------------------------------------------------------

    def shuffle(self, *, decks: int, algorithm: str, commitment: str, physical: bool) -> None:
        self.require(Phase.NO_SHOE, doing="shuffle")
        if decks != self.settings.decks:
            raise RuleViolation(f"this table plays {self.settings.decks} decks, not {decks}",
                                rule="shoe-decks")
        if not physical and len(commitment) != 64:
            raise RuleViolation("an RNG shoe needs a SHA-256 commitment", rule="shoe-commitment")
        self.shoe = ShoeState(decks=decks, algorithm=algorithm, commitment=commitment,
                              physical=physical)
        self.taille += 1
        self.phase = Phase.SHUFFLED

    def contribute(self, player: str, entropy: str) -> None:
        self.require(Phase.SHUFFLED, doing="shuffle in entropy")
        self.seat_of(player)
        assert self.shoe is not None
        if self.shoe.physical:
            raise RuleViolation("a physical shoe takes no entropy", rule="physical-shoe")
        if not 2 <= len(entropy) <= 128 or len(entropy) % 2 or not set(entropy) <= _HEX:
            # recorded as given: only lowercase hex lets anyone recompute the shoe's order
            raise RuleViolation("a contribution is 1 to 64 bytes, in lowercase hex",
                                rule="shoe-contribution")
        self.shoe.contributions.append(entropy)

    def cut(self, player: str, position: int) -> None:
        self.require(Phase.SHUFFLED, doing="cut")
        if not is_official(player):
            self.seat_of(player)
        assert self.shoe is not None
        if not 1 <= position < self.shoe.decks * 52:
            raise RuleViolation(f"the cut must fall between 1 and {self.shoe.decks * 52 - 1}",
                                rule="shoe-cut")
        self.shoe.cut = position
        self.shoe.cut_card_at = cut_card_index(self.settings)
        if self.settings.burn is not Burn.BY_FIRST_CARD:
            self.shoe.burns_due = burn_count(self.settings, Card("As"))
        self.phase = Phase.BURNING
        self._burns_done()

    def burn(self, card: Card) -> None:
        self.require(Phase.BURNING, doing="burn")
        shoe = self._shoe_with_card(card)
        if shoe.burns_due is None:  # the first card is turned, then as many more burned
            shoe.burns_due = 1 + burn_count(self.settings, card)
        shoe.burned.append(card)
        self._burns_done()

    def _burns_done(self) -> None:
        assert self.shoe is not None
        due = self.shoe.burns_due
        if due is not None and len(self.shoe.burned) >= due:
            self._open_betting()

    def _shoe_with_card(self, card: Card) -> ShoeState:
        shoe = self.shoe
        assert shoe is not None
        if shoe.remaining <= 0:
            raise RuleViolation("the shoe is empty", rule="shoe-empty")
        if shoe.physical and (shoe.burned + shoe.dealt).count(card) >= shoe.decks:
            raise RuleViolation(f"a {shoe.decks}-deck shoe holds no further {card}",
                                rule="card-count")
        return shoe

    def reveal(self) -> None:
        """The taille is over and the seed has been shown (checked by the caller)."""
        self.require(Phase.TAILLE_OVER, doing="reveal the seed")
        self.phase = Phase.NO_SHOE

    # --- the bank -------------------------------------------------------------------

    def award_bank(self, player: str, amount: int) -> None:
        """The bank goes to a player (auction, lot, or taking the shoe) who puts it up."""
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
        if self.passed_hand_returns_to == player:
            self.passed_hand_returns_to = None
        seat.chips -= amount
        self.banker, self.bank = player, amount
        self.bancos_in_a_row = 0
        self.bank_offered_to, self.bank_required, self.bank_declined_by = None, 0, []
        self.rules.passing.bank_awarded(self)
        self.phase = Phase.BETTING

    def decline_bank(self, player: str) -> None:
        """The player offered the shoe lets it pass to the next in rotation. Once everyone
        seated has let it pass, the sum a passed hand required lapses and the bank is given
        afresh (auction or lot)."""
        self.require(Phase.NO_BANK, doing="decline the bank")
        require_actor(player, self.bank_offered_to, "decline the bank")
        offered = self.bank_offered_to
        if offered is None:
            raise OutOfTurn("the shoe is offered to nobody: the bank is given by auction or lot",
                            rule="no-offer")
        self.bank_declined_by.append(offered)
        candidates = [p for p in self.rotation_after(offered)
                      if p != offered and p not in self.bank_declined_by]
        self.bank_offered_to = candidates[0] if candidates else None
        if not candidates:
            self.bank_required, self.bank_declined_by = 0, []

    def retire_bank(self, player: str) -> None:
        """The banker retires between coups, taking the bank; the shoe passes (000)."""
        between_coups = (Phase.BETTING, Phase.NO_SHOE, Phase.SHUFFLED, Phase.BURNING)
        self.require(*between_coups, doing="retire the bank")
        require_actor(player, self.banker, "retire the bank")
        if (self.stakes or self.banco_calls) and not self.tie_replay:
            raise OutOfTurn("stakes are already placed against this bank", rule="stakes-placed")
        self._withdraw_from_tie_replay(None)
        retiring, amount = self.banker, self.bank
        assert retiring is not None
        self.bank_back_to_banker()
        self.rules.passing.bank_retired(self, retiring, amount)
        if self.phase is Phase.BETTING:
            self.phase = Phase.NO_BANK

    def bank_back_to_banker(self) -> None:
        if self.banker is not None:
            self.seat_of(self.banker).chips += self.bank
        self.banker, self.bank = None, 0

    # --- stakes ---------------------------------------------------------------------

    def _withdraw_from_tie_replay(self, player: str | None) -> None:
        """Whoever leaves a tied coup before it is played again takes their stake and banco
        back (the tie moved nothing); with nothing left staked, or when the banker retires
        or the taille ends (`player` None), the replay is void and the table bets afresh."""
        if not self.tie_replay:
            return
        self.stakes = [s for s in self.stakes if player is not None and s.player != player]
        self.banco_calls = [p for p in self.banco_calls if player is not None and p != player]
        self.tie_replay = bool(self.stakes or self.banco_calls)

    def _refuse_during_tie_replay(self) -> None:
        if self.tie_replay:
            raise RuleViolation("after a tie the coup is played again with the same stakes: "
                                "close betting", rule="tie-replay")

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

    def place_bet(self, player: str, spot: Spot, amount: int) -> None:
        """A bet on a spot banked by the house (punto banco, the family game)."""
        self.require(Phase.BETTING, doing="bet")
        betting_order.check_turn(self, player)
        if not self.house_banks:
            raise RuleViolation("at this table punters stake on a tableau against the bank",
                                rule="bet-kind")
        if player in self.duel:
            raise RuleViolation("Banque and Ponte stake the duel, not the side bets",
                                rule="duellist-bet")
        if spot is Spot.TIE and not self.settings.tie_pays:
            raise RuleViolation("this table takes no tie bets", rule="no-tie-bet")
        self._check_amount(player, amount)
        betting_order.take_turn(self, player)
        self.bets.append(Bet(player, spot, amount))

    def pass_bet_turn(self, player: str,
                      reason: betting_order.PassReason = betting_order.PassReason.PASS) -> None:
        """In a rotating betting order, `player`'s turn passes with no bet."""
        betting_order.pass_turn(self, player, reason)

    def place_stake(self, player: str, tableau: Side, amount: int) -> None:
        """A punter's stake against the bank on a tableau."""
        self.require(Phase.BETTING, doing="stake")
        if not self.banks_with_player:
            raise RuleViolation("at this table bets go on Player, Banker or Tie",
                                rule="stake-kind")
        if player == self.banker:
            raise RuleViolation("the banker does not stake against the bank",
                                rule="banker-stake")
        if tableau not in self.rules.tableaux:
            raise RuleViolation(f"this table has no {tableau} tableau", rule="no-such-tableau")
        self._check_amount(player, amount)
        self.stakes.append(coverage.Stake(player, tableau, amount))

    def call_banco(self, player: str) -> None:
        """A punter offers to cover the whole bank alone."""
        self.require(Phase.BETTING, doing="call banco")
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
        self.banco_calls.append(player)

    def close_betting(self) -> None:
        """No more stakes: work out coverage and start the coup."""
        self.require(Phase.BETTING, doing="close betting")
        betting_order.check_turns_over(self)
        rules = self.rules
        rules.banking.check_close(self)
        if rules.coverage is not None:
            self.covered = rules.coverage.cover(self)
            if not self.covered.engaged:
                raise RuleViolation("no stake is engaged against the bank", rule="no-stakes")
        self.coup_number += 1
        self.coup = Coup.start(self.settings)
        self.settlement = None
        self.tie_replay = False
        self.phase = Phase.PLAYING

    # --- the coup -------------------------------------------------------------------

    def _playing(self) -> Coup:
        self.require(Phase.PLAYING, doing="play")
        assert self.coup is not None
        return self.coup

    def deal(self, card: Card) -> Side:
        coup = self._playing()
        coup._expect(Step.DEAL)
        shoe = self._shoe_with_card(card)
        side = coup.deal(card)
        shoe.dealt.append(card)
        if shoe.cut_card_at is not None and shoe.position > shoe.cut_card_at:
            shoe.cut_card_out = True
        return side

    def show_naturals(self) -> list[Side]:
        return self._playing().show_naturals()

    def decide(self, actor: str, side: Side, draw: bool) -> None:
        coup = self._playing()
        coup._expect(Step.DRAW if draw else Step.STAND, side)
        require_actor(actor, self.hand_holder(side), f"decide for the {side} hand")
        if draw:
            coup.draw(side)
        else:
            coup.stand(side)

    def offer_card(self, actor: str) -> None:
        """À deux tableaux, the banker says "Je donne": the punters may draw (002)."""
        coup = self._playing()
        coup._expect(Step.OFFER)
        require_actor(actor, self.banker, "offer a card")
        coup.offer()

    def show_down(self, actor: str) -> None:
        """À deux tableaux, the banker shows his first two cards, whatever their point: the
        coup is settled as the cards lie (002)."""
        coup = self._playing()
        coup._expect(Step.SHOW_DOWN)
        require_actor(actor, self.banker, "show down")
        coup.show_down()

    def settle(self) -> dict[Side, Outcome]:
        outcomes = self._playing().settle()
        self.settlement = self.rules.payout.settle(self, outcomes)
        self.payouts_made = 0
        self.phase = Phase.SETTLED
        return outcomes

    # --- paying and what follows ----------------------------------------------------

    def pay(self, payout: payouts.Payout) -> None:
        """One payout of the settlement, recorded in pay order."""
        self.require(Phase.SETTLED, doing="pay")
        assert self.settlement is not None
        owed = self.settlement.payouts
        if self.payouts_made >= len(owed) or owed[self.payouts_made] != payout:
            raise RuleViolation("a payout must be the next one the settlement owes",
                                rule="payout-not-owed")
        self.seat_of(payout.player).chips += payout.net
        self.payouts_made += 1

    def close_coup(self) -> None:
        """After the payouts: the bank, the commission, the rotation, the end of the taille."""
        self.require(Phase.SETTLED, doing="close the coup")
        assert self.coup is not None and self.coup.outcomes is not None
        settlement = self.settlement
        assert settlement is not None
        if self.payouts_made < len(settlement.payouts):
            raise OutOfTurn("every payout is made before the coup closes", rule="payouts-due")
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
        self.phase = Phase.NO_BANK if needs_bank else Phase.BETTING

    def end_taille(self) -> None:
        """The croupier ends the taille between coups (the table closes, or a tournament ends
        with cards left in the shoe); an RNG shoe's seed is then revealed as usual."""
        self.require(Phase.BETTING, Phase.NO_BANK, doing="end the taille")
        if (self.bets or self.stakes or self.banco_calls) and not self.tie_replay:
            raise OutOfTurn("stakes are placed: play the coup first", rule="stakes-placed")
        self._withdraw_from_tie_replay(None)
        self._end_taille()

    def _end_taille(self) -> None:
        assert self.shoe is not None
        self.rules.passing.taille_ended(self)
        self.phase = Phase.NO_SHOE if self.shoe.physical else Phase.TAILLE_OVER

    def _open_betting(self) -> None:
        needs_bank = self.banks_with_player and self.banker is None
        self.phase = Phase.NO_BANK if needs_bank else Phase.BETTING
        self.rules.banking.betting_opens(self)

    # --- views ----------------------------------------------------------------------

    def seen_values(self) -> list[int]:
        """Values of every card seen face up this taille (the banker's knowledge)."""
        assert self.shoe is not None
        return [value(c) for c in self.shoe.dealt]

    def points(self) -> dict[Side, int]:
        assert self.coup is not None
        return {side: point(cards) for side, cards in self.coup.hands.items()}


_COPY_ENCODER = msgspec.msgpack.Encoder()
_COPY_DECODER = msgspec.msgpack.Decoder(TableState)
