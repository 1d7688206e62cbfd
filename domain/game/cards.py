"""Cards, decks and the point of a hand (RULES.md, "Common to every variant").

A card is a two-character code: rank then suit (`9h`, `Ts`, `Kd`, `Ac`). Aces count 1, two to
nine their face value, and a bûche (ten or face card) counts 0. A hand's point is the sum of its
cards modulo 10; a two-card point of 8 or 9 is a natural (abattage).
"""

from __future__ import annotations

from typing import NewType

from domain.errors import RuleViolation

Card = NewType("Card", str)

RANKS = "A23456789TJQK"
SUITS = "shdc"
CARDS_PER_DECK = len(RANKS) * len(SUITS)

_VALUES = {rank: min(index + 1, 10) % 10 for index, rank in enumerate(RANKS)}
_WORTH = {rank + suit: worth for rank, worth in _VALUES.items() for suit in SUITS}.__getitem__
"""A card's worth, by its code (a point is summed without a generator)."""


def card(code: str) -> Card:
    """Validate a card code such as `9h` or `Ts`."""
    if len(code) != 2 or code[0] not in RANKS or code[1] not in SUITS:
        raise RuleViolation(
            f"{code!r} is not a card: a card is a rank of {RANKS} then a suit of {SUITS}",
            rule="card-code",
        )
    return Card(code)


def value(c: Card) -> int:
    """A card's worth: ace 1, two to nine at face value, a bûche 0."""
    return _VALUES[c[0]]


def point(cards: tuple[Card, ...] | list[Card]) -> int:
    """A hand's point: the sum of its cards' values, modulo 10."""
    return sum(map(_WORTH, cards)) % 10


def is_natural(cards: tuple[Card, ...] | list[Card]) -> bool:
    """A natural (abattage): 8 or 9 on the first two cards."""
    return len(cards) == 2 and point(cards) >= 8


_PACK = [Card(rank + suit) for suit in SUITS for rank in RANKS]
"""One pack in new-pack order, whose 52 codes every shoe shares: a process keeps the shoes
in play (and recent ones) a card a pointer, not a string each."""


def fresh_decks(decks: int) -> list[Card]:
    """`decks` packs of 52 in new-pack order (suit by suit, ace to king)."""
    return _PACK * decks


def value_counts(decks: int) -> list[int]:
    """How many cards of each value (index 0 to 9) a shoe of `decks` packs holds."""
    return [16 * decks if v == 0 else 4 * decks for v in range(10)]
