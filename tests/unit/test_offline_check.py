"""The standalone checker's own copies (`infra/audit/offline_check/`) against Sabot's: the shoe,
the Merkle proofs, MessagePack, C2SP notes and tlog-proofs; and the package itself imports
nothing of Sabot."""

from __future__ import annotations

import ast
import datetime
from pathlib import Path

import msgspec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given
from hypothesis import strategies as st

from domain.game.cards import CARDS_PER_DECK
from domain.game.shoe import order
from infra.audit import offline_check
from infra.audit.offline_check import note as checker_note
from infra.store import merkle
from infra.store.chain import canonical_bytes
from infra.store.notes import Cosigner, NoteSigner, add_signatures, sign_note
from infra.store.tlog import CheckpointBody, TlogProof

SEED = bytes(range(32))


def test_the_checkers_shoe_gives_the_golden_vector() -> None:
    cards = offline_check.shoe_v1(SEED, [b"alice", b"bob"], 6, 100)
    assert cards[:12] == ["Jd", "8h", "6d", "Jc", "2d", "Jc", "8c", "Ac", "6d", "2s", "5s", "3d"]
    assert cards == order(SEED, [b"alice", b"bob"], decks=6, cut=100)


@given(seed=st.binary(min_size=32, max_size=32),
       contributions=st.lists(st.binary(min_size=1, max_size=64), max_size=4),
       decks=st.integers(1, 8), data=st.data())
def test_the_checkers_shoe_is_domain_shoe(seed: bytes, contributions: list[bytes], decks: int,
                                          data: st.DataObject) -> None:
    cut = data.draw(st.integers(1, decks * CARDS_PER_DECK - 1))
    assert offline_check.shoe_v1(seed, contributions, decks, cut) == order(
        seed, contributions, decks=decks, cut=cut)


@given(size=st.integers(1, 70), data=st.data())
def test_proofs_many_at_once_are_rfc_9162_paths(size: int, data: st.DataObject) -> None:
    leaves = [merkle.leaf_hash(i.to_bytes(4, "big")) for i in range(size)]
    root = merkle.root_of(leaves)
    indices = data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=5))
    proofs = merkle.inclusion_proofs(leaves, indices)
    for index in indices:
        assert proofs[index] == merkle.inclusion_proof(leaves, index)
        assert offline_check.verify_inclusion(leaves[index], index, size, root, proofs[index])
        wrong = (index + 1) % size
        assert offline_check.verify_inclusion(leaves[wrong], index, size, root,
                                              proofs[index]) is (leaves[wrong] == leaves[index])


def test_the_checkers_leaf_is_the_ledgers() -> None:
    oid = "5ab07000-0000-4000-8000-7ab1e0000000"
    import uuid

    ours = merkle.event_leaf(7, canonical_bytes(uuid.UUID(oid), 3, "a:B.C", b"\x81\xa1x\x01"))
    assert offline_check.leaf_hash(7, offline_check.canonical(oid, 3, "a:B.C",
                                                              b"\x81\xa1x\x01")) == ours


values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=300)
    | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=20) | st.dictionaries(st.text(max_size=10), inner,
                                                                 max_size=20),
    max_leaves=40,
)


@given(value=values)
def test_the_checkers_messagepack_reads_msgspecs(value: object) -> None:
    assert offline_check.unpack(msgspec.msgpack.encode(value)) == value


@given(moment=st.datetimes(min_value=datetime.datetime(1970, 1, 2),
                           max_value=datetime.datetime(2400, 1, 1),
                           timezones=st.just(datetime.UTC)))
def test_the_checkers_timestamps_are_msgspecs(moment: datetime.datetime) -> None:
    assert offline_check.unpack(msgspec.msgpack.encode(moment)) == msgspec.to_builtins(moment)


def test_the_checker_imports_only_the_standard_library_and_cryptography() -> None:
    """Every module of the package: absolute imports of the standard library and
    `cryptography` only, and relative ones that stay inside the package."""
    package = Path(offline_check.__file__).parent
    modules = sorted(package.glob("*.py"))
    assert {m.stem for m in modules} >= {"__init__", "__main__", "checks", "cli"}
    trees = [ast.parse(m.read_text()) for m in modules]
    nodes = [node for tree in trees for node in ast.walk(tree)]
    relative = [node for node in nodes if isinstance(node, ast.ImportFrom) and node.level]
    assert relative and all(node.level == 1 for node in relative)
    assert {node.module for node in relative} <= {m.stem for m in modules}
    roots = {(node.module or "").split(".")[0] for node in nodes
             if isinstance(node, ast.ImportFrom) and not node.level}
    roots |= {alias.name.split(".")[0] for node in nodes
              if isinstance(node, ast.Import) for alias in node.names}
    import sys

    assert roots - {"cryptography", "__future__"} <= set(sys.stdlib_module_names)


NAMES = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E,
                                       blacklist_characters="+"), min_size=1, max_size=30)


@given(NAMES, NAMES, st.integers(0, 2**40), st.binary(min_size=32, max_size=32),
       st.lists(st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E),
                        min_size=1, max_size=20), max_size=3),
       st.integers(0, 2**40), st.lists(st.binary(min_size=32, max_size=32), max_size=6))
def test_the_checkers_reading_of_notes_is_sabots_writing(
        origin: str, witness_name: str, size: int, root: bytes, extensions: list[str],
        when: int, hashes: list[bytes]) -> None:
    log, witness = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    log_public, witness_public = (k.public_key().public_bytes_raw() for k in (log, witness))
    body = CheckpointBody(origin, size, root, tuple(extensions))
    note = add_signatures(sign_note(body.text(), NoteSigner(origin, log_public, log.sign)),
                          Cosigner(witness_name, witness_public, witness.sign, lambda: when))
    read = checker_note.read_note(note.decode())
    assert read.signed_by(origin, log_public)
    assert not read.signed_by(origin, witness_public)
    assert read.cosigned_by(witness_name, witness_public) == when
    assert read.cosigned_by(witness_name, log_public) is None
    assert checker_note.read_checkpoint(read.text) == (origin, size, root, extensions)
    proof = checker_note.read_proof(TlogProof(size, tuple(hashes), note.decode()).text())
    assert proof == (size, hashes, note.decode())
    assert checker_note.vkey_public(
        Cosigner(witness_name, witness_public, witness.sign).verifier.vkey(), 0x04) == \
        witness_public
