"""The variants as sets of rule objects: the one place where a variant's rules are assembled.

A table asks its `VariantRules` (`rules_for(settings)`) rather than its variant's name: who banks
and holds the hands (`domain.game.banking`), how stakes are covered (`domain.game.coverage`), who
draws and on what (`domain.game.drawing`), how the bank passes (`domain.game.bank_passing`), what is
paid (`domain.game.payouts`), and a few rules of the coup. The settings that tune a rule (the tie
odds, the commission, the hand holder...) stay in `TableSettings`; the rule objects read them.
"""

from __future__ import annotations

from dataclasses import dataclass

from domain.game.bank_passing import DuelRotates, HandsPass, HouseKeepsBank, ShoePasses
from domain.game.banking import Duel, HouseBanks, PlayerBanks
from domain.game.coverage import CheminDeFerCoverage, TwoTableauxCoverage
from domain.game.drawing import (
    CheminDeFerDrawing,
    FamilyDrawing,
    FreeBanker,
    PlayersDraw,
    PuntoBancoDrawing,
    Rule,
)
from domain.game.payouts import BankPays, DuelPays, HousePays
from domain.game.settings import TableSettings, Variant
from domain.game.sides import Side


@dataclass(frozen=True, slots=True)
class VariantRules:
    """The rule objects of one variant."""

    tableaux: tuple[Side, ...]  # the punters' hands, in deal order
    banking: HouseBanks
    coverage: CheminDeFerCoverage | TwoTableauxCoverage | None  # None: nothing is staked
    # against a player's bank
    drawing: PlayersDraw
    passing: HouseKeepsBank
    payout: HousePays
    tie_bet: bool = True  # a bet on the tie is offered (elsewhere a tie is void)
    replays_ties: bool = False  # a tied coup is played again with its stakes (001)
    bancos_per_bank: int | None = None  # bancos in a row a bank takes (000: two); None: any
    natural_beats_three: bool = False  # equal points: a natural beats three cards (003)

    @property
    def has_bank(self) -> bool:
        """A player holds the bank, given before betting."""
        return self.banking.has_bank

    @property
    def seats_on_sides(self) -> bool:
        """Each seat is on a tableau's side (right or left)."""
        return len(self.tableaux) > 1


RULES: dict[Variant, VariantRules] = {
    Variant.PUNTO_BANCO: VariantRules(
        tableaux=(Side.PUNTER,), banking=HouseBanks(), coverage=None,
        drawing=PuntoBancoDrawing(), passing=HouseKeepsBank(), payout=HousePays()),
    Variant.CHEMIN_DE_FER: VariantRules(
        tableaux=(Side.PUNTER,), banking=PlayerBanks(), coverage=CheminDeFerCoverage(),
        drawing=CheminDeFerDrawing(), passing=ShoePasses(), payout=BankPays(),
        tie_bet=False, replays_ties=True),
    Variant.DEUX_TABLEAUX: VariantRules(
        tableaux=(Side.RIGHT, Side.LEFT), banking=PlayerBanks(), coverage=TwoTableauxCoverage(),
        drawing=FreeBanker(), passing=HandsPass(), payout=BankPays(),
        tie_bet=False, bancos_per_bank=2),
    Variant.SIMPLIFIED: VariantRules(
        tableaux=(Side.PUNTER,), banking=Duel(), coverage=None,
        drawing=FamilyDrawing(), passing=DuelRotates(), payout=DuelPays(),
        natural_beats_three=True),
}


def rules_for(settings: TableSettings | Variant) -> VariantRules:
    """The rules of a table's variant (or of a variant)."""
    # settings first, the usual argument: isinstance answers an object's own class at once
    return RULES[settings.variant if isinstance(settings, TableSettings) else settings]


def punter_rule(settings: TableSettings, point: int) -> Rule:
    """What the punters' hand (the player's, in punto banco) may do on a two-card point of 0-7."""
    return rules_for(settings).drawing.punter(settings, point)


def banker_rule(settings: TableSettings, point: int, given: int | None) -> Rule:
    """What the banker may do on a two-card point of 0-7.

    `given` is the value of the third card given to the punter, or None when the punter stood.
    """
    return rules_for(settings).drawing.banker(settings, point, given)
