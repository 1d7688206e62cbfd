"""The Merkle tree hashes as RFC 9162 defines, and its proofs verify exactly when they should."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infra.store.merkle import (
    EMPTY_ROOT,
    Frontier,
    consistency_proof,
    inclusion_proof,
    inclusion_proofs,
    leaf_hash,
    node_hash,
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


# --- RFC 9162 section 2.1.5's example tree, and properties ----------------------------


def rfc_example() -> dict[str, bytes]:
    """The 7-leaf tree of RFC 9162 section 2.1.5 (d0..d6), its nodes by the figure's names:

                hash
               /    \\
              k      l
             / \\    / \\
            g   h  i   j
           / \\ / \\ / \\  |
           a b c d e f  d6
    """
    a, b, c, d, e, f, j = (LEAVES[i] for i in range(7))
    g, h, i = node_hash(a, b), node_hash(c, d), node_hash(e, f)
    k, l_ = node_hash(g, h), node_hash(i, j)
    return {"a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g, "h": h, "i": i,
            "j": j, "k": k, "l": l_, "root": node_hash(k, l_)}


def test_the_consistency_proofs_of_the_rfc_example() -> None:
    """RFC 9162 2.1.5: 'The consistency proof between hash0 and hash is PROOF(3, D[7]) =
    [c, d, g, l] ... between hash1 and hash is PROOF(4, D[7]) = [l] ... between hash2 and
    hash is PROOF(6, D[7]) = [i, j, k].'"""
    node = rfc_example()
    assert root_of(LEAVES[:7]) == node["root"]
    for m, names in ((3, "cdgl"), (4, "l"), (6, "ijk")):
        proof = consistency_proof(frontier(m), LEAVES[m:7])
        assert proof == [node[name] for name in names], m
        assert verify_consistency(m, 7, root_of(LEAVES[:m]), node["root"], proof)


def test_the_inclusion_proofs_of_the_rfc_example() -> None:
    """RFC 9162 2.1.5: 'The inclusion proof for d0 is [b, h, l]', 'for d3 is [c, g, l]',
    'for d4 is [f, j, k]', 'for d6 is [i, k]'."""
    node = rfc_example()
    for index, names in ((0, "bhl"), (3, "cgl"), (4, "fjk"), (6, "ik")):
        assert inclusion_proof(LEAVES[:7], index) == [node[name] for name in names], index


@given(st.integers(1, 300), st.integers(0, 300), st.data())
@settings(max_examples=60, deadline=None)
def test_a_consistency_proof_holds_and_any_change_breaks_it(m: int, grow: int,
                                                            data: st.DataObject) -> None:
    n = m + grow
    leaves = [leaf_hash(i.to_bytes(4, "big")) for i in range(n)]
    old = Frontier()
    for leaf in leaves[:m]:
        old.append(leaf)
    proof = consistency_proof(old, leaves[m:])
    old_root, new_root = old.root(), mth(leaves)
    assert verify_consistency(m, n, old_root, new_root, proof)
    if m == n:
        return
    changed = data.draw(st.integers(0, n - 1))  # any leaf rewritten: old or new part
    forged = [*leaves[:changed], leaf_hash(b"forged"), *leaves[changed + 1:]]
    assert not verify_consistency(m, n, old_root, mth(forged), proof)
    if proof:
        at = data.draw(st.integers(0, len(proof) - 1))
        bent = [*proof[:at], hashlib.sha256(proof[at]).digest(), *proof[at + 1:]]
        assert not verify_consistency(m, n, old_root, new_root, bent)
