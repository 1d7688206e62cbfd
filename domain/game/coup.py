"""The coup: one round of play as an explicit state machine, for every variant.

Steps, in order (RULES.md):
1. `deal`: the first two cards to every hand, one at a time in deal order
   (punter, banker, punter, banker; à deux tableaux: right, left, banker, twice).
2. `show_naturals`: every two-card 8 or 9 is turned over. A banker's natural ends the coup;
   with one tableau, so does a punter's. À deux tableaux, a tableau with a natural is decided
   at once against the banker's two cards, and the other tableau plays on.
3. À deux tableaux (`banker_offers`), the banker speaks first (002): `offer` ("Je donne"),
   and only then may a punter draw, "Les pontes ne peuvent tirer une carte que sur l'offre du
   banquier"; or `show_down`, "Quel que soit son jeu, et à perte ou à gain, le banquier a le
   droit d'abattre son jeu du premier coup": every hand is compared on its first two cards.
   Then `draw` or `stand` for each tableau still in play, in deal order; a `draw` is followed
   by `deal` of the third card, face up.
4. `draw` or `stand` for the banker, when a tableau is still in play; then `deal` if drawn.
5. `settle`: each tableau's outcome against the banker.

At any point `legal_steps()` says what may happen next and for which hand; a step the rules
forbid raises a `RuleViolation` (or `OutOfTurn`) and leaves the coup unchanged.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from domain.errors import OutOfTurn, RuleViolation
from domain.game.cards import Card, is_natural, point, value
from domain.game.drawing import Rule
from domain.game.settings import TableSettings, Variant
from domain.game.sides import Outcome as Outcome
from domain.game.sides import Side as Side
from domain.game.variants import banker_rule, punter_rule, rules_for


class Step(StrEnum):
    DEAL = "deal"
    SHOW_NATURALS = "show-naturals"
    DRAW = "draw"
    STAND = "stand"
    OFFER = "offer"
    SHOW_DOWN = "show-down"
    SETTLE = "settle"


class LegalStep(msgspec.Struct, frozen=True):
    """A step that may be taken now. `forced`: the rules leave no other step for this hand."""

    step: Step
    side: Side | None = None
    forced: bool = False


BANKER = Side.BANKER
"""The banker's hand, read once: reading a member off an enum class runs its metaclass's
attribute hook every time (docs/architecture.md), and the coup's hot paths ask it often."""


def _decision(side: Side, rule: Rule) -> tuple[LegalStep, ...]:
    """What the drawing table's `rule` lets the hand of `side` do."""
    if rule is Rule.CHOICE:
        return LegalStep(Step.DRAW, side), LegalStep(Step.STAND, side)
    return (LegalStep(Step.DRAW if rule is Rule.DRAW else Step.STAND, side, forced=True),)


DEAL_TO = {side: LegalStep(Step.DEAL, side, forced=True) for side in Side}
SHOW_NATURALS = LegalStep(Step.SHOW_NATURALS, forced=True)
BANKER_SPEAKS = (LegalStep(Step.OFFER, BANKER), LegalStep(Step.SHOW_DOWN, BANKER))
SETTLE = LegalStep(Step.SETTLE, forced=True)
DECISIONS = {(side, rule): _decision(side, rule) for side in Side for rule in Rule}
"""The legal steps a coup offers, made once (frozen: `legal_steps` hands out the same ones)."""


def tableaux_of(variant: Variant) -> tuple[Side, ...]:
    """The punters' hands of a variant, in deal order."""
    return rules_for(variant).tableaux


def compare(punter: list[Card], banker: list[Card], *, natural_beats_three: bool) -> Outcome:
    """Higher point wins; equal points tie (the family game: a natural beats three cards)."""
    p, b = point(punter), point(banker)
    if p == b and natural_beats_three and is_natural(punter) != is_natural(banker):
        return Outcome.PUNTER if is_natural(punter) else Outcome.BANKER
    if p == b:
        return Outcome.TIE
    return Outcome.PUNTER if p > b else Outcome.BANKER


class Coup(msgspec.Struct, kw_only=True):
    """The cards and decisions of one coup. Create with `Coup.start(settings)`."""

    settings: TableSettings
    tableaux: tuple[Side, ...]
    hands: dict[Side, list[Card]]
    naturals_shown: bool = False
    naturals: list[Side] = msgspec.field(default_factory=list)
    decided: dict[Side, Step] = msgspec.field(default_factory=dict)
    awaiting_card: Side | None = None
    offered: bool = False
    shown_down: bool = False
    early: dict[Side, Outcome] = msgspec.field(default_factory=dict)
    outcomes: dict[Side, Outcome] | None = None

    @classmethod
    def start(cls, settings: TableSettings) -> Coup:
        tableaux = tableaux_of(settings.variant)
        return cls(
            settings=settings,
            tableaux=tableaux,
            hands={side: [] for side in (*tableaux, Side.BANKER)},
        )

    # --- reading the state -------------------------------------------------------------

    @property
    def deal_order(self) -> tuple[Side, ...]:
        return (*self.tableaux, Side.BANKER)

    @property
    def cards_dealt(self) -> int:
        return sum(map(len, self.hands.values()))

    @property
    def is_settled(self) -> bool:
        return self.outcomes is not None

    def in_play(self) -> list[Side]:
        """Tableaux still to be decided by drawing (none before naturals are shown)."""
        if not self.naturals_shown or BANKER in self.naturals or self.shown_down:
            return []
        if len(self.tableaux) == 1 and self.naturals:
            return []
        return [side for side in self.tableaux if side not in self.early]

    def awaits_offer(self) -> bool:
        """Whether the banker must first offer a card or show down (`banker_offers`)."""
        return (self.settings.banker_offers and not self.offered and not self.is_settled
                and bool(self.in_play()))

    def given(self, side: Side) -> int | None:
        """The value of the third card given to a tableau, or None if it stood."""
        cards = self.hands[side]
        return value(cards[2]) if len(cards) == 3 else None

    def rule_for(self, side: Side) -> Rule:
        """What the drawing table lets this hand do now."""
        own = point(self.hands[side])
        if side is BANKER:
            given = self.given(self.tableaux[0]) if len(self.tableaux) == 1 else None
            return banker_rule(self.settings, own, given)
        return punter_rule(self.settings, own)

    def to_act(self) -> Side | None:
        """The hand whose decision is awaited, if the coup is at a decision."""
        if self.awaiting_card is not None or not self.naturals_shown or self.is_settled:
            return None
        if self.awaits_offer():
            return BANKER
        playing = self.in_play()
        for side in playing:
            if side not in self.decided:
                return side
        if playing and BANKER not in self.decided:
            return BANKER
        return None

    def card_due(self) -> Side | None:
        """The hand the next card goes to: a third card asked for, or the next of the first
        two in deal order (None: the coup awaits no card)."""
        if self.outcomes is not None:
            return None
        if self.awaiting_card is not None or self.naturals_shown:  # the first two are out
            return self.awaiting_card
        tableaux = self.tableaux
        dealt, hands = self.cards_dealt, len(tableaux) + 1
        if dealt >= 2 * hands:
            return None
        turn = dealt % hands  # the deal order: the tableaux, then the banker
        return tableaux[turn] if turn < len(tableaux) else BANKER

    def legal_steps(self) -> list[LegalStep]:
        if self.outcomes is not None:
            return []
        due = self.card_due()
        if due is not None:
            return [DEAL_TO[due]]
        if not self.naturals_shown:
            return [SHOW_NATURALS]
        if self.awaits_offer():
            return list(BANKER_SPEAKS)
        side = self.to_act()
        if side is None:
            return [SETTLE]
        return list(DECISIONS[side, self.rule_for(side)])

    def _expect(self, step: Step, side: Side | None = None) -> None:
        legal = self.legal_steps()
        for s in legal:
            if s.step is step and (side is None or s.side is side):
                return
        raise self._refusal(step, side, legal)

    def _refusal(self, step: Step, side: Side | None, legal: list[LegalStep]) -> Exception:
        if not legal:
            return OutOfTurn("the coup is settled", rule="coup-settled")
        waiting = self.awaits_offer()
        if step in (Step.DRAW, Step.STAND) and waiting and side is not Side.BANKER:
            return RuleViolation("les pontes ne peuvent tirer une carte que sur l'offre du "
                                 "banquier: the banker offers a card (or shows down) first",
                                 rule="no-offer")
        if step in (Step.DRAW, Step.STAND) and not waiting and side is not None and (
            side is self.to_act()
        ):
            own = point(self.hands[side])
            who = "the banker" if side is Side.BANKER else "a punter"
            verb = "draw" if step is Step.DRAW else "stand"
            return RuleViolation(
                f"{who} may not {verb} on {own} here (the drawing table says "
                f"{self.rule_for(side).value})",
                rule=f"{'banker' if side is Side.BANKER else 'punter'}-{verb}-forbidden",
            )
        expected = ", ".join(f"{s.step.value} {s.side.value if s.side else ''}".strip()
                             for s in legal)
        asked = f"{step.value} {side.value if side else ''}".strip()
        return OutOfTurn(f"not the time to {asked}: the coup awaits {expected}",
                         rule="out-of-turn")

    # --- the steps ---------------------------------------------------------------------

    def verify_deal(self) -> Side:
        """The hand the next card goes to (`card_due`); refuses a card while the coup awaits
        none."""
        side = self.card_due()
        if side is None:
            raise self._refusal(Step.DEAL, None, self.legal_steps())
        return side

    def deal(self, card: Card) -> Side:
        """Give the next card (first two cards in deal order, or a third card asked for)."""
        side = self.verify_deal()
        self.awaiting_card = None
        self.hands[side].append(card)
        return side

    def show_naturals(self) -> list[Side]:
        """Turn over every natural; decide at once the tableaux that a natural decides."""
        self._expect(Step.SHOW_NATURALS)
        self.naturals = self.naturals_preview()
        self.naturals_shown = True
        if Side.BANKER not in self.naturals:
            for side in self.tableaux:
                if side in self.naturals:
                    self.early[side] = self._outcome(side)
        return list(self.naturals)

    def draw(self, side: Side) -> None:
        """The hand asks for a third card; `deal` gives it next."""
        self._expect(Step.DRAW, side)
        self.decided[side] = Step.DRAW
        self.awaiting_card = side

    def offer(self) -> None:
        """The banker says "Je donne": the punters may now draw."""
        self._expect(Step.OFFER)
        self.offered = True

    def show_down(self) -> None:
        """The banker shows his first two cards: the coup is settled as the cards lie."""
        self._expect(Step.SHOW_DOWN)
        self.shown_down = True

    def stand(self, side: Side) -> None:
        self._expect(Step.STAND, side)
        self.decided[side] = Step.STAND

    def settle(self) -> dict[Side, Outcome]:
        """Each tableau's outcome against the banker's final hand."""
        self._expect(Step.SETTLE)
        outcomes = self.outcomes_now()
        self.outcomes = outcomes
        return dict(outcomes)

    def naturals_preview(self) -> list[Side]:
        """The hands holding a natural (shown by `show_naturals`)."""
        return [side for side in self.deal_order if is_natural(self.hands[side])]

    def outcomes_now(self) -> dict[Side, Outcome]:
        """Each tableau's outcome if the coup were settled as the cards lie."""
        return {side: self.early.get(side) or self._outcome(side) for side in self.tableaux}

    def points(self) -> dict[Side, int]:
        return {side: point(cards) for side, cards in self.hands.items()}

    def _outcome(self, side: Side) -> Outcome:
        return compare(
            self.hands[side],
            self.hands[Side.BANKER],
            natural_beats_three=rules_for(self.settings).natural_beats_three,
        )

    # --- one side's view ---------------------------------------------------------------

    def face_up(self, side: Side) -> bool:
        """Whether a hand's first two cards are turned over (naturals, or at settlement)."""
        return self.is_settled or side in self.naturals
