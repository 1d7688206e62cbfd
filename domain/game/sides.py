"""The hands at a table (`Side`) and a tableau's result against the banker (`Outcome`).

They sit apart from the coup so that the variant rules (`domain.game.variants`), which the coup
asks, can name them without importing the coup.
"""

from __future__ import annotations

from enum import StrEnum


class Side(StrEnum):
    """A hand at the table. Single-tableau variants use PUNTER and BANKER."""

    PUNTER = "punter"
    RIGHT = "right"
    LEFT = "left"
    BANKER = "banker"


class Outcome(StrEnum):
    """A tableau's result against the banker."""

    PUNTER = "punter"
    BANKER = "banker"
    TIE = "tie"
