"""sabot-shoe-v1, a copy of `domain/game/shoe.py` (a test holds them equal): the shoe's cards
re-dealt from the revealed seed, the contributions and the cut; and a hand's `point`."""

from __future__ import annotations

import hmac
from collections.abc import Iterator, Sequence

SHOE_V1 = "sabot-shoe-v1"
RANKS = "A23456789TJQK"
SUITS = "shdc"


def shoe_v1(seed: bytes, contributions: Sequence[bytes], decks: int, cut: int) -> list[str]:
    """The shoe's cards, first out first: an HMAC-SHA256 keyed stream drives an unbiased
    Fisher-Yates over `decks` new packs, then the cut."""
    message = SHOE_V1.encode() + b"".join(len(c).to_bytes(4, "big") + c for c in contributions)
    key = hmac.digest(seed, message, "sha256")
    cards = [rank + suit for _ in range(decks) for suit in SUITS for rank in RANKS]
    words = _words(key)
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = 2**32 - 2**32 % bound
        while (word := next(words)) >= limit:
            pass
        j = word % bound
        cards[i], cards[j] = cards[j], cards[i]
    return cards[cut:] + cards[:cut]


def _words(key: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hmac.digest(key, counter.to_bytes(8, "big"), "sha256")
        for start in range(0, 32, 4):
            yield int.from_bytes(block[start : start + 4], "big")
        counter += 1


def point(cards: Sequence[str]) -> int:
    return sum(min(RANKS.index(c[0]) + 1, 10) % 10 for c in cards) % 10
