"""What the variants' rule objects read of a seat at a table: a small protocol.

The rule objects (`domain.game.banking`, `coverage`, `payouts`, `bank_passing`) work on any
table that offers the few fields and readings they use, named in a protocol beside each rule
(`DuelTable`, `CoveredTable`, `PayingTable`, `PassingTable`); the card game never imports
the table (`domain.table`), whose state satisfies them.
"""

from __future__ import annotations

from typing import Protocol

from domain.game.sides import Side


class SeatView(Protocol):
    """A player at the table: their chips, and where they are (a tableau's side, standing)."""

    @property
    def player(self) -> str: ...

    @property
    def chips(self) -> int: ...

    @property
    def side(self) -> Side | None: ...

    @property
    def standing(self) -> bool: ...
