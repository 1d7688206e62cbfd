"""A pure driver for the tests: plays a `TableState` through whole coups and tailles.

Every choice the table leaves to people (the shoe's seed, the entropy contributed, the cut,
who takes the bank and for how much, the stakes and bets, a banco, retiring the bank) comes
from one `random.Random(seed)`, so a seed replays the same game. The hands decide by the
default policies (`domain.defaults.default_draw`, the move bots and deadlines make), or,
with `random_choices`, by a coin wherever the drawing table leaves a choice (and an à deux
tableaux banker sometimes shows down instead of offering a card).

Two ways in:
- `Driver(variant, seed)` plays RNG shoes one table step at a time (`step`), a coup at a
  time (`coup`) or a taille at a time (`taille`), and keeps a `CoupRecord` of every coup.
- `physical_table(...)` and `play_coup(state, cards)` script coups card by card on a
  physical shoe, for the worked examples of the seeds.

No I/O, no clock, no global randomness.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from domain.cards import CARDS_PER_DECK, Card, card
from domain.coup import Outcome, Side, Step, tableaux_of
from domain.coverage import Coverage
from domain.defaults import default_draw
from domain.drawing import Rule
from domain.errors import RuleViolation
from domain.payouts import Payout, Settlement, Spot
from domain.settings import TableSettings, Variant
from domain.shoe import ALGORITHM, commitment, order
from domain.table import CROUPIER, Phase, TableState


class Stalled(Exception):
    """The game cannot go on: nobody can take the bank, or nobody can stake against it."""


@dataclass(frozen=True)
class CoupRecord:
    """What a coup was and what it did, read off the table around it."""

    taille: int
    number: int
    banker: str | None  # who held the bank while the coup was played
    bank: int  # the bank when betting closed
    start: int  # shoe position (cards out, burned ones included) before its first card
    end: int  # shoe position after its last card
    outcomes: dict[Side, Outcome]
    settlement: Settlement
    covered: Coverage | None
    duel: tuple[str, ...]
    taille_over: bool  # the taille ended when the coup closed


@dataclass
class Driver:
    """Plays one table from a seed. Players are `p0`, `p1`, ... in seat order, then standing
    punters `s0`, `s1`, ...; à deux tableaux, seated players alternate right and left."""

    variant: Variant | str
    seed: int
    players: int = 6
    standing: int = 0
    chips: int = 1000
    bank: int = 100  # what a player puts up for a bank, when no larger sum is required
    unit: int = 10  # stakes are 1 to 5 units
    random_choices: bool = False
    retire_rate: float = 0.0  # chemin de fer: how often a banker retires between coups
    banco_rate: float = 0.05
    overrides: Mapping[str, object] = field(default_factory=dict)

    state: TableState = field(init=False)
    rng: random.Random = field(init=False)
    records: list[CoupRecord] = field(init=False, default_factory=list)
    seeds: list[bytes] = field(init=False, default_factory=list)
    cards: list[Card] = field(init=False, default_factory=list)
    _plan: list[Callable[[], str]] = field(init=False, default_factory=list)
    _coup_start: tuple[int, str | None, int] = field(init=False, default=(0, None, 0))
    _declines: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        settings = TableSettings.default(self.variant, **self.overrides)
        self.rng = random.Random(self.seed)
        self.state = TableState(settings=settings)
        two_sides = settings.variant is Variant.DEUX_TABLEAUX
        for i in range(self.players):
            side = (Side.RIGHT, Side.LEFT)[i % 2] if two_sides else None
            self.state.seat(f"p{i}", self.chips, side, False)
        for i in range(self.standing):
            self.state.seat(f"s{i}", self.chips, None, True)

    @property
    def issued(self) -> int:
        return (self.players + self.standing) * self.chips

    def chips_accounted(self) -> int:
        """Every chip issued is on a seat, in the bank, or in the house's result."""
        return self.state.chips_at_table + self.state.house_result

    # --- playing --------------------------------------------------------------------

    def taille(self) -> list[CoupRecord]:
        """Play a whole taille (revealing the last one's seed first); its coups' records."""
        if self.state.phase is Phase.TAILLE_OVER:
            self.step()
        before = len(self.records)
        while True:
            record = self.coup()
            if record.taille_over:
                return self.records[before:]

    def coup(self) -> CoupRecord:
        """Play on until a coup is closed; its record."""
        before = len(self.records)
        while len(self.records) == before:
            self.step()
        return self.records[-1]

    def step(self) -> str:
        """Take the table's next step; the name of the step taken."""
        if self._plan:
            return self._plan.pop(0)()
        match self.state.phase:
            case Phase.NO_SHOE:
                return self._shuffle()
            case Phase.SHUFFLED:
                return self._contribute_or_cut()
            case Phase.BURNING:
                assert self.state.shoe is not None
                self.state.burn(self.cards[self.state.shoe.position])
                return "burn"
            case Phase.NO_BANK:
                return self._give_bank()
            case Phase.BETTING:
                self._plan = self._betting_plan()
                return self._plan.pop(0)()
            case Phase.PLAYING:
                return self._coup_step()
            case Phase.SETTLED:
                self._plan = self._paying_plan()
                return self._plan.pop(0)()
            case Phase.TAILLE_OVER:
                self.state.reveal()
                return "reveal-seed"

    def _shuffle(self) -> str:
        seed = self.rng.randbytes(32)
        self.seeds.append(seed)
        self.state.shuffle(decks=self.state.settings.decks, algorithm=ALGORITHM,
                           commitment=commitment(seed), physical=False)
        return "shuffle"

    def _contribute_or_cut(self) -> str:
        state = self.state
        assert state.shoe is not None
        if len(state.shoe.contributions) < 3 and self.rng.random() < 0.5:
            entropy = self.rng.randbytes(self.rng.randint(1, 8)).hex()
            state.contribute(self.rng.choice(state.players()), entropy)
            return "contribute"
        size = state.shoe.decks * CARDS_PER_DECK
        state.cut(self.rng.choice([*state.players(), CROUPIER]), self.rng.randrange(1, size))
        contributions = [bytes.fromhex(c) for c in state.shoe.contributions]
        self.cards = order(self.seeds[-1], contributions, decks=state.shoe.decks,
                           cut=state.shoe.cut)
        return "cut"

    def _give_bank(self) -> str:
        state = self.state
        required = max(state.settings.min_stake, state.bank_required)
        offered = state.bank_offered_to
        if offered is not None:
            chips = state.seat_of(offered).chips
            if chips >= required:
                self._declines = 0
                state.award_bank(offered, state.bank_required
                                 or max(required, min(chips, self.bank)))
                return "take-bank"
            self._declines += 1
            if self._declines > len(state.players()):
                raise Stalled("nobody can take the shoe")
            state.decline_bank(offered)
            return "decline-bank"
        able = [p for p in state.seated() if state.seat_of(p).chips >= required]
        if not able:
            raise Stalled("nobody can put up a bank")
        player = self.rng.choice(able)
        state.award_bank(player, max(required, min(state.seat_of(player).chips, self.bank)))
        return "award-bank"

    def _betting_plan(self) -> list[Callable[[], str]]:
        """The stakes, bets and bancos of one coup, checked against free chips as planned."""
        state, rng, settings = self.state, self.rng, self.state.settings
        if state.tie_replay:  # a tied chemin-de-fer coup is played again as it was staked
            return [self._close_betting]
        if (state.variant is Variant.CHEMIN_DE_FER and self.retire_rate
                and rng.random() < self.retire_rate):
            return [self._retire]
        plan: list[Callable[[], str]] = []
        engaged = False
        free = {p: state.seat_of(p).chips - state.committed(p) for p in state.players()}
        for player in state.players():
            if player == state.banker or player in state.duel:
                continue
            if state.banks_with_player and settings.banco_allowed and not (
                state.variant is Variant.DEUX_TABLEAUX and state.bancos_in_a_row >= 2
            ) and free[player] >= state.bank and rng.random() < self.banco_rate:
                plan.append(partial(self._banco, player))
                engaged = True
                continue
            amount = min(self.unit * rng.randint(1, 5), free[player])
            if amount < settings.min_stake or rng.random() < 0.2:
                continue
            free[player] -= amount
            if settings.house_banks:
                spots = [s for s in Spot if s is not Spot.TIE or settings.tie_pays]
                spot = rng.choice(spots)
                plan.append(partial(self._bet, player, spot, amount))
            else:
                tableau = rng.choice(tableaux_of(state.variant))
                plan.append(partial(self._stake, player, tableau, amount))
                engaged = True
        able = [p for p in state.punter_order() if free[p] >= settings.min_stake]
        if state.banks_with_player and not engaged:
            if not able:
                raise Stalled("nobody can stake against the bank")
            player, tableau = rng.choice(able), rng.choice(tableaux_of(state.variant))
            plan.append(partial(self._stake, player, tableau, min(self.unit, free[player])))
        plan.append(self._close_betting)
        return plan

    def _retire(self) -> str:
        assert self.state.banker is not None
        self.state.retire_bank(self.state.banker)
        return "retire-bank"

    def _banco(self, player: str) -> str:
        self.state.call_banco(player)
        return "banco"

    def _bet(self, player: str, spot: Spot, amount: int) -> str:
        self.state.place_bet(player, spot, amount)
        return "bet"

    def _stake(self, player: str, tableau: Side, amount: int) -> str:
        self.state.place_stake(player, tableau, amount)
        return "stake"

    def _close_betting(self) -> str:
        state = self.state
        assert state.shoe is not None
        try:
            state.close_betting()
        except RuleViolation as refusal:
            # À deux tableaux a bank of 1 chip covers only the right tableau (the odd chip).
            if refusal.rule != "no-stakes":
                raise
            able = [p for p in state.punter_order()
                    if state.seat_of(p).chips - state.committed(p) >= state.settings.min_stake]
            if not able:
                raise Stalled("nobody can stake on the tableau the bank covers") from refusal
            state.place_stake(able[0], tableaux_of(state.variant)[0], state.settings.min_stake)
            self._plan.append(self._close_betting)
            return "stake"
        self._coup_start = (state.shoe.position, state.banker, state.bank)
        return "close-betting"

    def _coup_step(self) -> str:
        state = self.state
        coup = state.coup
        assert coup is not None and state.shoe is not None
        action = state.legal_actions()[0]
        match Step(action.step):
            case Step.DEAL:
                state.deal(self.cards[state.shoe.position])
            case Step.SHOW_NATURALS:
                state.show_naturals()
            case Step.SETTLE:
                state.settle()
            case Step.OFFER:  # the banker's default: "Je donne"; by a coin, he shows down
                assert action.actor is not None
                if self.random_choices and self.rng.random() < 0.2:
                    state.show_down(action.actor)
                    return "show-down"
                state.offer_card(action.actor)
            case Step.DRAW | Step.STAND:
                side = action.side
                assert side is not None and action.actor is not None
                draw = (self.rng.random() < 0.5 if self.random_choices
                        and coup.rule_for(side) is Rule.CHOICE else default_draw(state, side))
                state.decide(action.actor, side, draw)
        return action.step

    def _paying_plan(self) -> list[Callable[[], str]]:
        settlement = self.state.settlement
        assert settlement is not None
        plan: list[Callable[[], str]] = [partial(self._pay, p) for p in settlement.payouts]
        plan.append(self._close_coup)
        return plan

    def _pay(self, payout: Payout) -> str:
        self.state.pay(payout)
        return "pay"

    def _close_coup(self) -> str:
        state = self.state
        coup, settlement = state.coup, state.settlement
        assert coup is not None and coup.outcomes is not None and settlement is not None
        assert state.shoe is not None
        start, banker, bank = self._coup_start
        covered, duel, end = state.covered, tuple(state.duel), state.shoe.position
        taille, number = state.taille, state.coup_number
        state.close_coup()
        self.records.append(CoupRecord(
            taille=taille, number=number, banker=banker, bank=bank, start=start, end=end,
            outcomes=dict(coup.outcomes), settlement=settlement, covered=covered, duel=duel,
            taille_over=state.phase in (Phase.TAILLE_OVER, Phase.NO_SHOE),
        ))
        return "close-coup"


# --- scripted coups on a physical shoe --------------------------------------------------


def physical_table(
    variant: Variant | str,
    players: Mapping[str, int],
    *,
    sides: Mapping[str, Side] | None = None,
    standing: Collection[str] = (),
    **overrides: Any,
) -> TableState:
    """A table whose croupier records the cards of a physical shoe, ready for the bank or the
    bets. Seats in the order given; by default no burn and no cut card."""
    settings = TableSettings.default(
        variant, **{"burn": "none", "cut_card_from_end": 0, **overrides}
    )
    state = TableState(settings=settings)
    for player, chips in players.items():
        state.seat(player, chips, (sides or {}).get(player), player in standing)
    state.shuffle(decks=settings.decks, algorithm="", commitment="", physical=True)
    state.cut(CROUPIER, 1)
    return state


def play_coup(
    state: TableState,
    cards: Sequence[str],
    draws: Mapping[Side, bool] | None = None,
    *,
    pay: bool = True,
    show_down: bool = False,
) -> dict[Side, Outcome]:
    """Close betting, then play one coup with exactly `cards`, in the order the coup asks for
    them. A hand draws as `draws` says where given, else by the default policy; an à deux
    tableaux banker offers a card, or with `show_down` shows his first two cards. With `pay`,
    pay every payout and close the coup. The outcomes."""
    state.close_betting()
    shoe: Iterator[str] = iter(cards)
    outcomes: dict[Side, Outcome] | None = None
    while outcomes is None:
        action = state.legal_actions()[0]
        match Step(action.step):
            case Step.DEAL:
                state.deal(card(next(shoe)))
            case Step.SHOW_NATURALS:
                state.show_naturals()
            case Step.SETTLE:
                outcomes = state.settle()
            case Step.OFFER | Step.SHOW_DOWN:
                assert action.actor is not None
                if show_down:
                    state.show_down(action.actor)
                else:
                    state.offer_card(action.actor)
            case Step.DRAW | Step.STAND:
                side = action.side
                assert side is not None and action.actor is not None
                draw = (draws or {}).get(side)
                if draw is None:
                    draw = default_draw(state, side)
                state.decide(action.actor, side, draw)
    leftover = list(shoe)
    assert not leftover, f"cards not dealt: {leftover}"
    if pay:
        assert state.settlement is not None
        for payout in state.settlement.payouts:
            state.pay(payout)
        state.close_coup()
    return outcomes
