"""Variants and per-table settings (RULES.md marks each setting and its default).

A table is configured once; every rule that RULES.md calls a *setting* lives here, so the
four variants are one engine with four sets of defaults, not four engines.
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction
from typing import Any

import msgspec

from domain.errors import RuleViolation
from domain.limits import MAX_CHIPS

MAX_DECISION_SECONDS = 3600
MAX_BET_SECONDS = 3600
MAX_TIE_PAYS = 100
MAX_CARDS = 8 * 52


class BettingOrder(StrEnum):
    FREE = "free"  # everyone bets when they like until betting closes
    ROTATING = "rotating"  # in turn, the first bettor one seat to the left each coup


class Variant(StrEnum):
    PUNTO_BANCO = "punto-banco"
    CHEMIN_DE_FER = "chemin-de-fer"
    DEUX_TABLEAUX = "deux-tableaux"
    SIMPLIFIED = "simplified"

    @property
    def house_banks(self) -> bool:
        """Bets go on the house's spots (Player, Banker, Tie): punto banco, and the family
        game's side bets; elsewhere punters stake against a player's bank."""
        return self in HOUSE_BANKED


HOUSE_BANKED = (Variant.PUNTO_BANCO, Variant.SIMPLIFIED)
"""The variants whose bets go on the house's spots (`Variant.house_banks`)."""


class FirstBank(StrEnum):
    """How the first bank of a taille is given (chemin de fer, à deux tableaux)."""

    AUCTION = "auction"
    LOT = "lot"
    HOUSE = "house"


class HandHolder(StrEnum):
    """Who holds the punters' hand in chemin de fer when nobody called banco."""

    LARGEST_STAKE = "largest-stake"  # 001
    BANKERS_RIGHT = "bankers-right"  # 000


class PunterFive(StrEnum):
    """What the punters' hand does on a two-card 5: 001 leaves it "Facultatif / au choix";
    a house may impose one (chemin de fer, à deux tableaux)."""

    CHOICE = "choice"
    DRAW = "draw"
    STAND = "stand"


class BankerStrategy(StrEnum):
    """How the free à deux tableaux banker plays by default (bots, expired deadlines)."""

    EXACT = "exact"  # the better exact expectation over both tableaux
    BOOK = "book"  # 000's numbered rules (`domain.game.banker_book`)


class Burn(StrEnum):
    """How many cards are burned after the cut."""

    NONE = "none"
    FIXED = "fixed"  # `burn_cards` cards
    BY_FIRST_CARD = "by-first-card"  # the first card is turned; that many burned, 10 for a bûche


class BankerWin(StrEnum):
    """How the house pays a winning bet on the banker's hand (`domain.game.payouts.BANKER_WINS`)."""

    LESS_COMMISSION = "less-commission"  # even money less the commission
    SIX_PAYS_HALF = "six-pays-half"  # No-Commission: even money, half on a banker's six


class SittingOut(StrEnum):
    """What a player pays for each turn to bet the bet clock passes for them (a tournament's
    format says: an idle player must not win by never risking a chip)."""

    FREE = "free"  # nothing
    MIN_STAKE = "min-stake"  # the table's minimum stake, taken by the house


class Preset(StrEnum):
    """A set of house rules applied over a variant's defaults (`_PRESETS`)."""

    SEEDS = "seeds"  # the seeds, and Sabot's defaults where they are silent
    NO_COMMISSION = "no-commission"  # punto banco without commission, a banker's six paid half
    FRANCE_2007 = "france-2007"  # the French casino regulation, arrêté of 14 May 2007
    FRANCE_2007_BANQUE_OUVERTE = "france-2007-banque-ouverte"  # its à banque ouverte form


def check_betting(order: BettingOrder, seconds: int, house_banks: bool) -> None:
    """Refuse a betting order or a bet clock no table can keep, each with a named rule."""
    if not 0 <= seconds <= MAX_BET_SECONDS:
        raise RuleViolation(f"a bet clock is 0 (none) to {MAX_BET_SECONDS} s",
                            rule="settings-bet-clock")
    if seconds and order != BettingOrder.ROTATING:
        raise RuleViolation("a bet clock times the turns of a rotating betting order",
                            rule="bet-clock-without-turns")
    if order == BettingOrder.ROTATING and not house_banks:
        raise RuleViolation("players bet in turn where the house banks the bets (punto "
                            "banco, the family game); against a player's bank the stakes "
                            "keep their own priority", rule="settings-betting-order")


class TableSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Every rule option of a table. Build with `TableSettings.default(variant, **overrides)`."""

    variant: Variant
    decks: int
    commission_percent: int
    tie_pays: int
    commission_basis_points: int | None = None  # a rate in hundredths of a percent (1.25%:
    # 125), for the rates a whole percent cannot say; None: `commission_percent`
    banker_options: bool = False
    first_bank: FirstBank = FirstBank.HOUSE
    hand_holder: HandHolder = HandHolder.LARGEST_STAKE
    banco_allowed: bool = True
    burn: Burn = Burn.NONE
    burn_cards: int = 0
    cut_card_from_end: int = 0
    banker_strategy: BankerStrategy = BankerStrategy.EXACT
    banker_offers: bool = False  # the banker offers a card or shows down first (002)
    punter_five: PunterFive = PunterFive.CHOICE  # a house rule that fixes the choice on 5
    punter_draws_on_five: bool = False  # the default policy where 5 is a choice
    banker_draws_on_five: bool = False
    push_on_tie: bool = True  # the family game loses Banque and Ponte bets on a tie (003)
    duel_stake: int = 10  # the family game: what Banque and Ponte each put up
    decision_seconds: int = 0  # a hand's time to decide before the default is played; 0: none
    betting_order: BettingOrder = BettingOrder.FREE  # rotating: bets in turn (betting_order)
    bet_seconds: int = 0  # a turn's time to bet before it passes with no bet; 0: none
    min_stake: int = 1
    max_stake: int = 0  # 0: no table maximum
    preset: Preset = Preset.SEEDS  # the house rules the defaults came from
    # Left out of the record while unset, so tables opened before it encode as they did.
    banker_win: BankerWin | msgspec.UnsetType = msgspec.UNSET
    sitting_out: SittingOut | msgspec.UnsetType = msgspec.UNSET  # unset: free
    counts_bets: bool | msgspec.UnsetType = msgspec.UNSET  # keeps `coups_bet` (a tournament's)

    @property
    def sitting_out_cost(self) -> int:
        """What a turn the bet clock passes costs its player (before their free chips cap it)."""
        return self.min_stake if self.sitting_out is SittingOut.MIN_STAKE else 0

    @property
    def banker_pays(self) -> BankerWin:
        """How a winning banker bet is paid (unset: less the commission)."""
        return self.banker_win or BankerWin.LESS_COMMISSION

    @property
    def commission_bp(self) -> int:
        """The commission rate in basis points (hundredths of a percent)."""
        if self.commission_basis_points is not None:
            return self.commission_basis_points
        return self.commission_percent * 100

    @property
    def commission_rate(self) -> Fraction:
        return Fraction(self.commission_bp, 10_000)

    def model_without_options(self) -> TableSettings:
        """The same table with the banker's optional cases turned back into fixed ones."""
        return msgspec.structs.replace(self, banker_options=False)

    def check(self) -> TableSettings:
        """Refuse settings that no table can play with."""
        if not 1 <= self.decks <= 8:
            raise RuleViolation("a shoe holds 1 to 8 decks", rule="settings-decks")
        if not 0 <= self.commission_percent <= 25 or not 0 <= self.commission_bp <= 2500:
            raise RuleViolation("commission is 0 to 25 percent", rule="settings-commission")
        if not 0 <= self.tie_pays <= MAX_TIE_PAYS:
            raise RuleViolation(f"tie odds are 0 to {MAX_TIE_PAYS} to 1", rule="settings-tie-odds")
        if not 0 <= self.decision_seconds <= MAX_DECISION_SECONDS:
            raise RuleViolation(f"a decision's time limit is 0 (none) to {MAX_DECISION_SECONDS} s",
                                rule="settings-decision-time")
        if self.banker_pays is BankerWin.SIX_PAYS_HALF and (
                self.commission_bp or not self.variant.house_banks):
            raise RuleViolation("a banker's six is paid half instead of a commission, on the "
                                "house's banker bet", rule="settings-banker-win")
        check_betting(self.betting_order, self.bet_seconds, self.variant.house_banks)
        if self.sitting_out_cost and self.betting_order is not BettingOrder.ROTATING:
            raise RuleViolation("sitting out costs a turn the bet clock passes: players bet in "
                                "turn (a rotating betting order)", rule="sitting-out-without-turns")
        if not (0 <= self.burn_cards <= MAX_CARDS and 0 <= self.cut_card_from_end <= MAX_CARDS):
            raise RuleViolation(f"burn and cut card counts are 0 to {MAX_CARDS}",
                                rule="settings-burn")
        if self.min_stake < 1 or (self.max_stake and self.max_stake < self.min_stake) or max(
            self.min_stake, self.max_stake, self.duel_stake
        ) > MAX_CHIPS or self.duel_stake < 0:
            raise RuleViolation(f"stakes need 1 <= minimum <= maximum <= {MAX_CHIPS:,}",
                                rule="settings-stakes")
        return self

    @classmethod
    def default(cls, variant: Variant | str, **overrides: Any) -> TableSettings:
        """The defaults RULES.md gives for a variant, with any setting overridden."""
        v = Variant(variant)
        base: dict[str, Any] = _DEFAULTS[v]
        preset = Preset(overrides.get("preset", Preset.SEEDS))
        house = _PRESETS.get(preset, {})
        if preset is not Preset.SEEDS and v not in house:
            raise RuleViolation(f"the {preset} rules do not cover {v}", rule="settings-preset")
        return msgspec.convert({**base, **house.get(v, {}), **overrides, "variant": v},
                               cls).check()


_DEFAULTS: dict[Variant, dict[str, Any]] = {
    Variant.PUNTO_BANCO: {
        "decks": 8,
        "commission_percent": 5,
        "tie_pays": 8,
        "burn": Burn.BY_FIRST_CARD,
        "cut_card_from_end": 16,
    },
    Variant.CHEMIN_DE_FER: {
        "decks": 6,
        "commission_percent": 5,
        "tie_pays": 0,
        "first_bank": FirstBank.AUCTION,
        "burn": Burn.FIXED,
        "burn_cards": 5,
        "cut_card_from_end": 16,
    },
    Variant.DEUX_TABLEAUX: {
        "banker_offers": True,
        "decks": 3,
        "commission_percent": 0,
        "tie_pays": 0,
        "first_bank": FirstBank.AUCTION,
    },
    Variant.SIMPLIFIED: {
        "decks": 6,
        "commission_percent": 0,
        "tie_pays": 5,
        "push_on_tie": False,
    },
}


# No-Commission punto banco as SkyCity's EIGHT tournaments deal it; then the arrêté of 14 May
# 2007 (relatif à la réglementation des jeux dans les casinos), title III, chapter III, "jeux
# de cercle"; README.md cites the articles.
_PRESETS: dict[Preset, dict[Variant, dict[str, Any]]] = {
    Preset.NO_COMMISSION: {
        Variant.PUNTO_BANCO: {"commission_percent": 0, "banker_win": BankerWin.SIX_PAYS_HALF},
    },
    Preset.FRANCE_2007: {
        Variant.PUNTO_BANCO: {"commission_percent": 5, "tie_pays": 8},
        Variant.CHEMIN_DE_FER: {"commission_percent": 5, "cut_card_from_end": 7},
        Variant.DEUX_TABLEAUX: {"commission_percent": 2, "cut_card_from_end": 10},
    },
    Preset.FRANCE_2007_BANQUE_OUVERTE: {
        Variant.DEUX_TABLEAUX: {"commission_basis_points": 125, "cut_card_from_end": 10},
    },
}
