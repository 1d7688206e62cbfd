"""The fair, verifiable shoe (DESIGN.md, "Fair and verifiable shoes").

The house draws a secret 32-byte seed and publishes only its commitment, the SHA-256 of the
seed, before play. At the table each punter may shuffle in turn by contributing a few bytes of
entropy, and a chosen person cuts. The order of the cards is a pure function of the seed, the
contributions in the order given, the number of decks and the cut position, under a named,
versioned algorithm. Once the seed is revealed, anyone can recompute the order and check every
burned and dealt card.

This module also says, from the table's settings, how many cards are burned after the cut and
where the cut card (carte rouge) lies.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Iterator, Sequence
from itertools import count
from typing import TypeVar

import msgspec

from domain.errors import RuleViolation
from domain.game.cards import CARDS_PER_DECK, Card, fresh_decks, value
from domain.game.settings import Burn, TableSettings

T = TypeVar("T")

V1 = "sabot-shoe-v1"
ALGORITHM = V1  # the algorithm new shoes are shuffled with
SEED_BYTES = 32
MIN_CONTRIBUTION_BYTES = 1
MAX_CONTRIBUTION_BYTES = 64
MAX_DECKS = 8
BUCHE_BURNS = 10


class Shoe(msgspec.Struct, frozen=True, kw_only=True):
    """A taille's shoe as recorded publicly: everything needed to recompute it but the seed."""

    algorithm: str
    decks: int
    commitment: str  # SHA-256 of the seed, lowercase hex
    contributions: tuple[str, ...] = ()  # the punters' entropy, lowercase hex, in the order given
    cut: int


def commitment(seed: bytes) -> str:
    """The public commitment to a seed, published before play: its SHA-256, lowercase hex."""
    _check_seed(seed)
    return hashlib.sha256(seed).hexdigest()


def check_seed(seed: bytes, committed: str) -> None:
    """Refuse a revealed seed that is not the one the shoe committed to."""
    if commitment(seed) != committed:
        raise RuleViolation(
            "the revealed seed does not match the shoe's commitment", rule="shoe-commitment"
        )


def order(
    seed: bytes,
    contributions: Sequence[bytes],
    *,
    decks: int,
    cut: int,
    algorithm: str = ALGORITHM,
) -> list[Card]:
    """The shoe's cards after the shuffle and the cut, the first card to come out first."""
    shuffle = _ALGORITHMS.get(algorithm)
    if shuffle is None:
        raise RuleViolation(
            f"unknown shoe algorithm {algorithm!r}; known: {', '.join(_ALGORITHMS)}",
            rule="shoe-algorithm",
        )
    _check_seed(seed)
    for contribution in contributions:
        _check_contribution(contribution)
    if not 1 <= decks <= MAX_DECKS:
        raise RuleViolation(f"a shoe holds 1 to {MAX_DECKS} decks", rule="shoe-decks")
    size = decks * CARDS_PER_DECK
    if not 1 <= cut < size:
        raise RuleViolation(
            f"the cut falls between two cards: a position from 1 to {size - 1}", rule="shoe-cut"
        )
    return shuffle(seed, contributions, fresh_decks(decks), cut)


def shoe_order(shoe: Shoe, seed: bytes) -> list[Card]:
    """Check the revealed seed against the shoe's commitment, then recompute the shoe's order."""
    check_seed(seed, shoe.commitment)
    contributions = [_from_hex(text) for text in shoe.contributions]
    return order(seed, contributions, decks=shoe.decks, cut=shoe.cut, algorithm=shoe.algorithm)


def burn_count(settings: TableSettings, first: Card) -> int:
    """How many cards are burned after the cut.

    Burn.BY_FIRST_CARD: `first`, the shoe's first card, is turned over and burned, then as many
    further cards as its value, 10 for a bûche; the count is of those further cards.
    Burn.FIXED: `burn_cards`. Burn.NONE: none.
    """
    if settings.burn is Burn.BY_FIRST_CARD:
        return value(first) or BUCHE_BURNS
    if settings.burn is Burn.FIXED:
        return settings.burn_cards
    return 0


def cut_card_index(settings: TableSettings) -> int | None:
    """Where the cut card lies: just before the card at this index (0 is the shoe's first card),
    `cut_card_from_end` cards from the end. None when the table plays without a cut card."""
    if settings.cut_card_from_end == 0:
        return None
    size = settings.decks * CARDS_PER_DECK
    if settings.cut_card_from_end >= size:
        raise RuleViolation(
            f"the cut card must lie inside the shoe of {size} cards", rule="shoe-cut-card"
        )
    return size - settings.cut_card_from_end


def _v1(seed: bytes, contributions: Sequence[bytes], cards: list[Card], cut: int) -> list[Card]:
    """sabot-shoe-v1: an HMAC-SHA256 keyed stream drives an unbiased Fisher-Yates, then the cut."""
    message = V1.encode() + b"".join(len(c).to_bytes(4, "big") + c for c in contributions)
    cards = keyed_shuffle(hmac.digest(seed, message, "sha256"), cards)
    return cards[cut:] + cards[:cut]


def keyed_shuffle(key: bytes, items: list[T]) -> list[T]:
    """Unbiased Fisher-Yates over `items` (in place, and returned), driven by the keyed
    stream: for i from the last index down to 1, swap item i with item j, j uniform in 0..i."""
    words = _words(key)
    for i in range(len(items) - 1, 0, -1):
        j = _uniform_below(i + 1, words)
        items[i], items[j] = items[j], items[i]
    return items


def _words(key: bytes) -> Iterator[int]:
    """The 32-bit big-endian words of HMAC-SHA256(key, counter), counter 0, 1, 2, ... (8 bytes)."""
    for counter in count():
        block = hmac.digest(key, counter.to_bytes(8, "big"), "sha256")
        for start in range(0, 32, 4):
            yield int.from_bytes(block[start : start + 4], "big")


def _uniform_below(bound: int, words: Iterator[int]) -> int:
    """A number drawn uniformly from 0 to bound - 1: words past the last whole run of `bound`
    values below 2**32 are rejected, so that every remainder is equally likely."""
    limit = 2**32 - 2**32 % bound
    while True:
        word = next(words)
        if word < limit:
            return word % bound


_ALGORITHMS: dict[str, Callable[[bytes, Sequence[bytes], list[Card], int], list[Card]]] = {
    V1: _v1,
}


def _check_seed(seed: bytes) -> None:
    if len(seed) != SEED_BYTES:
        raise RuleViolation(f"a shoe's seed is exactly {SEED_BYTES} bytes", rule="shoe-seed")


def _check_contribution(contribution: bytes) -> None:
    if not MIN_CONTRIBUTION_BYTES <= len(contribution) <= MAX_CONTRIBUTION_BYTES:
        raise RuleViolation(
            f"a shuffle contributes {MIN_CONTRIBUTION_BYTES} to {MAX_CONTRIBUTION_BYTES} bytes",
            rule="shoe-contribution",
        )


def _from_hex(text: str) -> bytes:
    """A recorded contribution, which must be canonical lowercase hex."""
    try:
        contribution = bytes.fromhex(text)
    except ValueError:
        contribution = None
    if contribution is None or contribution.hex() != text:
        raise RuleViolation(
            f"a recorded contribution is lowercase hex, not {text[:20]!r}", rule="shoe-contribution"
        )
    return contribution
