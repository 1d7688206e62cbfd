"""The global log as a Merkle tree, hashed as RFC 9162 (Certificate Transparency v2) says.

    leaf i    = the i-th stored event in notification order (i = 0, 1, ...), its data
                d(i) = u64 notification_id || canonical(e)     (`infra.store.chain.canonical_bytes`)
    MTH({})   = SHA-256()
    MTH({d})  = SHA-256(0x00 || d)
    MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n]))   k: the largest power of 2 < n

Leaves hold the event's canonical bytes, not its chain digest, so that a single event and
its inclusion proof are checkable without the rest of its stream.

A `Frontier` is the compact form of a tree of size n: the roots of its perfect subtrees,
largest first (one per bit set in n). It grows by one leaf in amortised O(1) hashes, gives
the root in O(log n), and is all a writer keeps (`merkle_tree` row, `infra.store.ledger`) and all
a checkpoint needs to be continued later. `consistency_proof` builds RFC 9162's proof from
size m to size n out of the frontier at m and the leaf hashes after it;
`verify_consistency` and `verify_inclusion` are RFC 9162's verification algorithms
(sections 2.1.4.2 and 2.1.3.2).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def event_leaf(notification_id: int, canonical: bytes) -> bytes:
    """The leaf hash of a stored event, from its canonical bytes."""
    return hashlib.sha256(b"\x00" + notification_id.to_bytes(8, "big") + canonical).digest()


def subtree_sizes(size: int) -> list[int]:
    """The sizes of the perfect subtrees a tree of `size` leaves is made of, largest first."""
    return [1 << bit for bit in range(size.bit_length() - 1, -1, -1) if size >> bit & 1]


class Frontier:
    """A tree of `size` leaves, kept as the roots of its perfect subtrees."""

    __slots__ = ("nodes", "size")

    def __init__(self, size: int = 0, nodes: Sequence[bytes] = ()) -> None:
        if len(nodes) != bin(size).count("1"):
            raise ValueError(f"a tree of {size} leaves has {bin(size).count('1')} subtrees, "
                             f"not {len(nodes)}")
        self.size = size
        self.nodes = list(nodes)

    def append(self, leaf: bytes) -> None:
        nodes = self.nodes
        nodes.append(leaf)
        size = self.size
        while size & 1:  # each trailing 1 bit is a subtree of the new leaf's size: merge
            right = nodes.pop()
            nodes[-1] = node_hash(nodes[-1], right)
            size >>= 1
        self.size += 1

    def root(self) -> bytes:
        if not self.nodes:
            return EMPTY_ROOT
        root = self.nodes[-1]
        for left in reversed(self.nodes[:-1]):
            root = node_hash(left, root)
        return root

    def copy(self) -> Frontier:
        return Frontier(self.size, self.nodes)

    def to_bytes(self) -> bytes:
        return b"".join(self.nodes)

    @classmethod
    def from_bytes(cls, size: int, data: bytes) -> Frontier:
        return cls(size, [data[i : i + 32] for i in range(0, len(data), 32)])


def root_of(leaves: Sequence[bytes]) -> bytes:
    frontier = Frontier()
    for leaf in leaves:
        frontier.append(leaf)
    return frontier.root()


def _split(n: int) -> int:
    """The largest power of 2 smaller than n (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def consistency_proof(old: Frontier, new_leaves: Sequence[bytes]) -> list[bytes]:
    """RFC 9162's PROOF(m, D[n]) where m = old.size and D[m:n] = new_leaves."""
    m, n = old.size, old.size + len(new_leaves)
    if m == 0 or m == n:
        return []
    starts, start = {}, 0
    for size, node in zip(subtree_sizes(m), old.nodes, strict=True):
        starts[(start, start + size)] = node
        start += size

    def mth(lo: int, hi: int) -> bytes:
        if lo >= m:
            return root_of(new_leaves[lo - m : hi - m])
        return starts[(lo, hi)]  # the recursion only asks for the old tree's subtrees

    return _subproof(m, 0, n, True, mth)


def _subproof(m: int, lo: int, hi: int, whole: bool,
              mth: Callable[[int, int], bytes]) -> list[bytes]:
    n = hi - lo
    if m == n:
        return [] if whole else [mth(lo, hi)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, lo, lo + k, whole, mth), mth(lo + k, hi)]
    return [*_subproof(m - k, lo + k, hi, False, mth), mth(lo, lo + k)]


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes,
                       proof: Sequence[bytes]) -> bool:
    """RFC 9162 section 2.1.4.2: does the tree of `second` leaves extend that of `first`?"""
    if first == 0:
        return second >= 0 and not proof
    if first == second:
        return not proof and first_root == second_root
    if first > second or not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """RFC 9162's PATH(index, D[n]) over the leaf hashes."""
    if len(leaves) <= 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*inclusion_proof(leaves[:k], index), root_of(leaves[k:])]
    return [*inclusion_proof(leaves[k:], index - k), root_of(leaves[:k])]


def verify_inclusion(leaf: bytes, index: int, size: int, root: bytes,
                     proof: Sequence[bytes]) -> bool:
    """RFC 9162 section 2.1.3.2: is `leaf` the `index`-th leaf of the tree with `root`?"""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def inclusion_proofs(leaves: Sequence[bytes], indices: Sequence[int]) -> dict[int, list[bytes]]:
    """`inclusion_proof` for many leaves at once: the tree's levels are hashed once (adjacent
    pairs, an odd last node carried up: RFC 9162's tree), then each path is read off them."""
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        level = levels[-1]
        upper = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            upper.append(level[-1])
        levels.append(upper)
    proofs = {}
    for index in indices:
        path, i = [], index
        for level in levels[:-1]:
            if i ^ 1 < len(level):
                path.append(level[i ^ 1])
            i >>= 1
        proofs[index] = path
    return proofs
