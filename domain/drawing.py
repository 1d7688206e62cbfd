"""The drawing tables (tableaux de tirage): when a hand must draw, must stand, or may choose.

Read these against RULES.md: punto banco from 004, chemin de fer from 001's two tables, the
family game from 003's annex, à deux tableaux from 000 and 002 (the banker is free).
"""

from __future__ import annotations

from enum import StrEnum

from domain.settings import TableSettings, Variant


class Rule(StrEnum):
    DRAW = "draw"
    STAND = "stand"
    CHOICE = "choice"


def punter_rule(settings: TableSettings, point: int) -> Rule:
    """What the punters' hand (the player's, in punto banco) may do on a two-card point of 0-7."""
    if settings.variant is Variant.PUNTO_BANCO:
        return Rule.DRAW if point <= 5 else Rule.STAND
    if point <= 4:
        return Rule.DRAW
    return Rule(settings.punter_five.value) if point == 5 else Rule.STAND


def banker_rule(settings: TableSettings, point: int, given: int | None) -> Rule:
    """What the banker may do on a two-card point of 0-7.

    `given` is the value of the third card given to the punter, or None when the punter stood.
    """
    match settings.variant:
        case Variant.PUNTO_BANCO:
            return Rule.DRAW if _punto_banco_banker_draws(point, given) else Rule.STAND
        case Variant.CHEMIN_DE_FER:
            if settings.banker_options and (point, given) in ((3, 9), (5, 4)):
                return Rule.CHOICE
            return Rule.DRAW if point <= _chemin_de_fer_draws_up_to(given) else Rule.STAND
        case Variant.SIMPLIFIED:
            if point <= 4:
                return Rule.DRAW
            return Rule.CHOICE if point == 5 else Rule.STAND
        case Variant.DEUX_TABLEAUX:
            return Rule.CHOICE


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
