"""The Merkle tree hashes as RFC 9162 defines, and its proofs verify exactly when they should."""

from __future__ import annotations

import hashlib

import pytest

from infra.store.merkle import (
    EMPTY_ROOT,
    Frontier,
    consistency_proof,
    inclusion_proof,
    inclusion_proofs,
    leaf_hash,
    root_of,
    verify_consistency,
    verify_inclusion,
)

LEAVES = [leaf_hash(bytes([i])) for i in range(40)]


def mth(leaves: list[bytes]) -> bytes:
    """RFC 9162's definition, written recursively."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:])).digest()


def frontier(size: int) -> Frontier:
    tree = Frontier()
    for leaf in LEAVES[:size]:
        tree.append(leaf)
    return tree


def test_leaf_and_empty_hashes_have_the_rfc_prefixes() -> None:
    assert leaf_hash(b"") == hashlib.sha256(b"\x00").digest()
    assert root_of([]) == EMPTY_ROOT == hashlib.sha256(b"").digest()


@pytest.mark.parametrize("size", range(41))
def test_frontier_root_is_the_rfc_root(size: int) -> None:
    tree = frontier(size)
    assert tree.root() == mth(LEAVES[:size])
    assert Frontier.from_bytes(size, tree.to_bytes()).root() == tree.root()


def test_every_consistency_proof_verifies_and_a_wrong_root_does_not() -> None:
    for n in range(1, 33):
        for m in range(1, n + 1):
            proof = consistency_proof(frontier(m), LEAVES[m:n])
            old, new = mth(LEAVES[:m]), mth(LEAVES[:n])
            assert verify_consistency(m, n, old, new, proof), (m, n)
            if m < n:
                assert not verify_consistency(m, n, new, new, proof)
                assert not verify_consistency(m, n, old, old, proof)
                forked = [*LEAVES[: m - 1], leaf_hash(b"forged"), *LEAVES[m:n]]
                assert not verify_consistency(m, n, old, mth(forked), proof)


def test_every_inclusion_proof_verifies_at_its_index_only() -> None:
    for n in range(1, 20):
        root = mth(LEAVES[:n])
        for i in range(n):
            proof = inclusion_proof(LEAVES[:n], i)
            assert verify_inclusion(LEAVES[i], i, n, root, proof)
            assert not verify_inclusion(LEAVES[i], (i + 1) % n, n, root, proof) or n == 1


def test_a_frontier_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ValueError):
        Frontier(3, [bytes(32)])


def test_batched_inclusion_proofs_are_the_rfc_paths() -> None:
    for n in range(1, 41):
        proofs = inclusion_proofs(LEAVES[:n], range(n))
        assert all(proofs[i] == inclusion_proof(LEAVES[:n], i) for i in range(n)), n
