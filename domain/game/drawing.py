"""The drawing tables (tableaux de tirage): when a hand must draw, must stand, or may choose.

Read these against RULES.md: punto banco from 004, chemin de fer from 001's two tables, the
family game from 003's annex, à deux tableaux from 000 and 002 (the banker is free). Each
table is a rule object; `domain.game.variants` gives each variant its own, and `punter_rule` /
`banker_rule` there read the table's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum

from domain.game.settings import TableSettings


class Rule(StrEnum):
    DRAW = "draw"
    STAND = "stand"
    CHOICE = "choice"


class PlayersDraw(ABC):
    """A drawing table. The punters' hand of the games played between players (chemin de fer, à deux
    tableaux, the family game): draws on 0-4, stands on 6-7; on 5 the table's `punter_five`."""

    banker_free = False  # whether the banker's every decision is a choice
    punter_five_applies = True  # whether the table's `punter_five` setting is read

    def punter(self, settings: TableSettings, point: int) -> Rule:
        """What the punters' hand may do on a two-card point of 0-7."""
        if point <= 4:
            return Rule.DRAW
        return Rule(settings.punter_five.value) if point == 5 else Rule.STAND

    @abstractmethod
    def banker(self, settings: TableSettings, point: int, given: int | None) -> Rule:
        """What the banker may do on a two-card point of 0-7; `given` is the value of the
        third card given to the punter, or None when the punter stood."""

    @abstractmethod
    def banker_default(self, settings: TableSettings, point: int, given: int | None) -> bool:
        """Whether the banker draws where his table leaves him the choice
        (`domain.game.policies`)."""


class PuntoBancoDrawing(PlayersDraw):
    """004: both hands are fixed; the player draws on 0-5, the banker by the card given."""

    punter_five_applies = False

    def punter(self, settings: TableSettings, point: int) -> Rule:
        return Rule.DRAW if point <= 5 else Rule.STAND

    def banker(self, settings: TableSettings, point: int, given: int | None) -> Rule:
        return Rule.DRAW if _punto_banco_banker_draws(point, given) else Rule.STAND

    def banker_default(self, settings: TableSettings, point: int, given: int | None) -> bool:
        return self.banker(settings, point, given) is Rule.DRAW


class CheminDeFerDrawing(PlayersDraw):
    """001's tables; with `banker_options`, 3 against a 9 and 5 against a 4 are the banker's
    choice, and by default he plays them as the fixed table does."""

    def banker(self, settings: TableSettings, point: int, given: int | None) -> Rule:
        if settings.banker_options and (point, given) in ((3, 9), (5, 4)):
            return Rule.CHOICE
        return Rule.DRAW if point <= _chemin_de_fer_draws_up_to(given) else Rule.STAND

    def banker_default(self, settings: TableSettings, point: int, given: int | None) -> bool:
        return self.banker(settings.model_without_options(), point, given) is Rule.DRAW


class FamilyDrawing(PlayersDraw):
    """003's annex: Banque draws on 0-4, stands on 6-7, chooses on 5 (`banker_draws_on_five`
    by default)."""

    def banker(self, settings: TableSettings, point: int, given: int | None) -> Rule:
        if point <= 4:
            return Rule.DRAW
        return Rule.CHOICE if point == 5 else Rule.STAND

    def banker_default(self, settings: TableSettings, point: int, given: int | None) -> bool:
        return settings.banker_draws_on_five


class FreeBanker(PlayersDraw):
    """À deux tableaux (000, 002): the banker is free, every decision of his is a choice."""

    banker_free = True

    def banker(self, settings: TableSettings, point: int, given: int | None) -> Rule:
        return Rule.CHOICE

    def banker_default(self, settings: TableSettings, point: int, given: int | None) -> bool:
        raise ValueError(
            "the à deux tableaux banker's default needs the stakes and the unseen cards: "
            "domain.game.banker_expectation.banker_should_draw"
        )


def _punto_banco_banker_draws(point: int, given: int | None) -> bool:
    if given is None:
        return point <= 5
    match point:
        case 0 | 1 | 2:
            return True
        case 3:
            return given != 8
        case 4:
            return 2 <= given <= 7
        case 5:
            return 4 <= given <= 7
        case 6:
            return 6 <= given <= 7
        case _:
            return False


def _chemin_de_fer_draws_up_to(given: int | None) -> int:
    """001's banker table: the highest point on which the banker draws, by the card given."""
    match given:
        case None:
            return 5
        case 0 | 1:
            return 3
        case 8 | 9:
            return 2
        case 6 | 7:
            return 6
        case 4 | 5:
            return 5
        case _:  # 2 or 3
            return 4
