"""`CardSource`: the port through which a table gets what only the outside world has.

The domain has no randomness and no secrets: an RNG shoe's seed is drawn and sealed outside
it, and its cards are read off the shoe's order by whoever holds the seed. The service passes
the vault's source (`infra.services.tables`); a dispute's replay passes the order it recomputed from
the revealed seed (`workers.replay`).
"""

from __future__ import annotations

import uuid
from typing import Protocol

from domain.game.cards import Card
from domain.game.shoe import Shoe


class CardSource(Protocol):
    def seal_seed(self, table_id: uuid.UUID, taille: int) -> str:
        """Draw the seed of a new RNG shoe, keep it sealed, and return its commitment."""
        ...

    def card_at(self, shoe: Shoe, position: int) -> Card:
        """The card at `position` of an RNG shoe's order (burned cards included)."""
        ...

    def seed_of(self, commitment: str) -> bytes:
        """The sealed seed of the shoe committed to by `commitment`, to reveal it."""
        ...
