"""The fair, verifiable shoe: determinism, fairness, the commitment, the burn and the cut card."""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections import Counter

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import RuleViolation
from domain.game.cards import CARDS_PER_DECK, RANKS, SUITS, Card, fresh_decks
from domain.game.settings import Burn, TableSettings, Variant
from domain.game.shoe import (
    ALGORITHM,
    Shoe,
    burn_count,
    check_seed,
    commitment,
    cut_card_index,
    order,
    shoe_order,
)

SEED = bytes(range(32))
OTHER_SEED = bytes(range(1, 33))

seeds = st.binary(min_size=32, max_size=32)
contributions = st.lists(st.binary(min_size=1, max_size=64), max_size=6)


def reference_v1(seed: bytes, contribs: list[bytes], decks: int, cut: int) -> list[str]:
    """sabot-shoe-v1 written again from the README's words, as an auditor would."""
    message = b"sabot-shoe-v1" + b"".join(struct.pack(">I", len(c)) + c for c in contribs)
    key = hmac.new(seed, message, hashlib.sha256).digest()
    stream = b""
    counter = 0
    position = 0

    def word() -> int:
        nonlocal stream, counter, position
        if position == len(stream):
            stream += hmac.new(key, struct.pack(">Q", counter), hashlib.sha256).digest()
            counter += 1
        (w,) = struct.unpack(">I", stream[position : position + 4])
        position += 4
        return int(w)

    cards = [rank + suit for _ in range(decks) for suit in SUITS for rank in RANKS]
    for i in range(len(cards) - 1, 0, -1):
        limit = (2**32 // (i + 1)) * (i + 1)
        while (w := word()) >= limit:
            pass
        j = w % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards[cut:] + cards[:cut]


def test_golden_vector() -> None:
    cards = order(SEED, [b"alice", b"bob"], decks=6, cut=100)
    assert cards[:12] == ["Jd", "8h", "6d", "Jc", "2d", "Jc", "8c", "Ac", "6d", "2s", "5s", "3d"]
    assert cards == reference_v1(SEED, [b"alice", b"bob"], 6, 100)


@given(seed=seeds, contribs=contributions, decks=st.integers(1, 8), data=st.data())
def test_every_card_appears_once_per_deck(
    seed: bytes, contribs: list[bytes], decks: int, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(1, decks * CARDS_PER_DECK - 1))
    cards = order(seed, contribs, decks=decks, cut=cut)
    assert Counter(cards) == Counter(fresh_decks(decks))
    assert set(Counter(cards).values()) == {decks}


@given(seed=seeds, contribs=contributions, decks=st.integers(1, 3), data=st.data())
def test_matches_the_documented_algorithm(
    seed: bytes, contribs: list[bytes], decks: int, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(1, decks * CARDS_PER_DECK - 1))
    assert order(seed, contribs, decks=decks, cut=cut) == reference_v1(seed, contribs, decks, cut)


def test_every_shoe_shares_one_pack_s_52_codes() -> None:
    """A process keeps the orders of the shoes in play: 8 decks cost 3 KB, a pointer a card,
    not 25 KB of strings (a director's memory grew with every new shoe it cached)."""
    shoe = order(SEED, [], decks=8, cut=200)
    assert len(shoe) == 8 * CARDS_PER_DECK
    assert len({id(c) for c in shoe}) == CARDS_PER_DECK


def test_same_inputs_same_order() -> None:
    first = order(SEED, [b"alice", b"bob"], decks=8, cut=200)
    assert order(SEED, [b"alice", b"bob"], decks=8, cut=200) == first


@pytest.mark.parametrize(
    ("seed", "contribs", "cut"),
    [
        (OTHER_SEED, [b"alice", b"bob"], 100),
        (SEED, [b"alice", b"bobby"], 100),
        (SEED, [b"bob", b"alice"], 100),
        (SEED, [b"alic", b"ebob"], 100),  # the length prefix keeps boundaries apart
        (SEED, [b"alice"], 100),
        (SEED, [], 100),
        (SEED, [b"alice", b"bob"], 101),
    ],
)
def test_any_change_changes_the_order(seed: bytes, contribs: list[bytes], cut: int) -> None:
    assert order(seed, contribs, decks=6, cut=cut) != order(
        SEED, [b"alice", b"bob"], decks=6, cut=100
    )


def test_the_cut_moves_the_top_cards_to_the_back() -> None:
    uncut = order(SEED, [b"x"], decks=1, cut=1)
    uncut = uncut[-1:] + uncut[:-1]
    assert order(SEED, [b"x"], decks=1, cut=30) == uncut[30:] + uncut[:30]


def test_the_ace_of_spades_lands_anywhere_evenly() -> None:
    shuffles = 2000
    positions = Counter(
        order(hashlib.sha256(i.to_bytes(4, "big")).digest(), [], decks=1, cut=1).index(Card("As"))
        for i in range(shuffles)
    )
    assert set(positions) == set(range(CARDS_PER_DECK))
    expected = shuffles / CARDS_PER_DECK
    chi_square = sum((positions[p] - expected) ** 2 / expected for p in range(CARDS_PER_DECK))
    assert chi_square < 110  # 51 degrees of freedom: mean 51, p < 1e-5 beyond 110


def test_commitment_accepts_the_right_seed_and_refuses_another() -> None:
    committed = commitment(SEED)
    assert committed == hashlib.sha256(SEED).hexdigest()
    check_seed(SEED, committed)
    with pytest.raises(RuleViolation, match="does not match the shoe's commitment") as refused:
        check_seed(OTHER_SEED, committed)
    assert refused.value.rule == "shoe-commitment"


def test_shoe_order_checks_the_seed_then_recomputes() -> None:
    shoe = Shoe(
        algorithm=ALGORITHM,
        decks=6,
        commitment=commitment(SEED),
        contributions=(b"alice".hex(), b"bob".hex()),
        cut=100,
    )
    recorded = msgspec.json.decode(msgspec.json.encode(shoe), type=Shoe)
    assert shoe_order(recorded, SEED) == order(SEED, [b"alice", b"bob"], decks=6, cut=100)
    with pytest.raises(RuleViolation) as refused:
        shoe_order(shoe, OTHER_SEED)
    assert refused.value.rule == "shoe-commitment"


@pytest.mark.parametrize("text", ["ALICE", "61 6c", "616C", "zz", "6"])
def test_a_recorded_contribution_must_be_lowercase_hex(text: str) -> None:
    shoe = Shoe(
        algorithm=ALGORITHM, decks=1, commitment=commitment(SEED), contributions=(text,), cut=1
    )
    with pytest.raises(RuleViolation) as refused:
        shoe_order(shoe, SEED)
    assert refused.value.rule == "shoe-contribution"


def test_unknown_algorithm_refused() -> None:
    with pytest.raises(RuleViolation, match="sabot-shoe-v9") as refused:
        order(SEED, [], decks=1, cut=1, algorithm="sabot-shoe-v9")
    assert refused.value.rule == "shoe-algorithm"


@pytest.mark.parametrize(
    ("seed", "contribs", "decks", "cut", "rule"),
    [
        (bytes(31), [], 1, 1, "shoe-seed"),
        (bytes(33), [], 1, 1, "shoe-seed"),
        (SEED, [b""], 1, 1, "shoe-contribution"),
        (SEED, [bytes(65)], 1, 1, "shoe-contribution"),
        (SEED, [], 0, 1, "shoe-decks"),
        (SEED, [], 9, 1, "shoe-decks"),
        (SEED, [], 1, 0, "shoe-cut"),
        (SEED, [], 1, 52, "shoe-cut"),
    ],
)
def test_bad_inputs_refused(
    seed: bytes, contribs: list[bytes], decks: int, cut: int, rule: str
) -> None:
    with pytest.raises(RuleViolation) as refused:
        order(seed, contribs, decks=decks, cut=cut)
    assert refused.value.rule == rule


def test_commitment_needs_a_full_seed() -> None:
    with pytest.raises(RuleViolation) as refused:
        commitment(b"short")
    assert refused.value.rule == "shoe-seed"


@pytest.mark.parametrize(("first", "burned"), [("Kh", 10), ("Ts", 10), ("7d", 7), ("Ac", 1)])
def test_burn_by_first_card(first: str, burned: int) -> None:
    settings = TableSettings.default(Variant.PUNTO_BANCO)
    assert settings.burn is Burn.BY_FIRST_CARD
    assert burn_count(settings, Card(first)) == burned


def test_fixed_burn_and_no_burn() -> None:
    chemin = TableSettings.default(Variant.CHEMIN_DE_FER)
    assert (chemin.burn, burn_count(chemin, Card("7d"))) == (Burn.FIXED, 5)
    tableaux = TableSettings.default(Variant.DEUX_TABLEAUX)
    assert (tableaux.burn, burn_count(tableaux, Card("7d"))) == (Burn.NONE, 0)


def test_cut_card_index() -> None:
    assert cut_card_index(TableSettings.default(Variant.PUNTO_BANCO)) == 8 * 52 - 16
    assert cut_card_index(TableSettings.default(Variant.DEUX_TABLEAUX)) is None
    too_deep = TableSettings.default(Variant.SIMPLIFIED, decks=1, cut_card_from_end=52)
    with pytest.raises(RuleViolation) as refused:
        cut_card_index(too_deep)
    assert refused.value.rule == "shoe-cut-card"
