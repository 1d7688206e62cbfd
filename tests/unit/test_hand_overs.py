"""Key hand-overs (`infra.store.hand_overs`): followed from the roots only, in any order of
the file, and a writer (`infra.store.checkpoints.WriterTrust`) reading them as they are
appended."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.errors import ChainError
from infra.store.checkpoints import WriterTrust, append_line
from infra.store.hand_overs import follow, hand_over
from infra.store.signing import Signer


def a_key() -> Signer:
    return Signer(Ed25519PrivateKey.generate(), "test")


def roots(*signers: Signer) -> dict[str, bytes]:
    return {s.key_id: s.public_key for s in signers}


def test_a_chain_of_hand_overs_is_followed_from_the_root_whatever_the_order() -> None:
    a, b, c = a_key(), a_key(), a_key()
    lines = [hand_over(b, c.public_key, 20, "ab"), hand_over(a, b.public_key, 10, "cd")]
    followed = follow(roots(a), lines)
    assert followed.keys == roots(a, b, c) and followed.refused == []
    from_b = follow(roots(b), lines)  # not back: b's root does not vouch for a
    assert from_b.keys == roots(b, c)
    assert [why for _, why in from_b.refused] == [
        f"the hand-over at size 10 ({lines[1].time}) from key {a.key_id} to key {b.key_id} is "
        f"signed by key {a.key_id}, which is not trusted"]


def test_a_hand_over_not_signed_by_the_trusted_key_adopts_nothing() -> None:
    operator, insider, target = a_key(), a_key(), a_key()
    own = hand_over(insider, target.public_key, 5, "00")
    spoofed = msgspec.structs.replace(  # the operator's key named, the insider's signature
        own, key=operator.key_id, public_key=operator.public_key.hex())
    altered = msgspec.structs.replace(hand_over(operator, target.public_key, 5, "00"), size=6)
    for line in (own, spoofed, altered):
        followed = follow(roots(operator), [line])
        assert followed.keys == roots(operator) and len(followed.refused) == 1
    assert "not validly signed by the trusted key" in follow(roots(operator), [spoofed])[1][0][1]
    assert altered.signed_by(operator.public_key) is False
    assert msgspec.structs.replace(altered, size=5).signed_by(operator.public_key)


def test_a_writer_follows_a_hand_over_appended_after_it_started(tmp_path: Path) -> None:
    old, new, insider = a_key(), a_key(), a_key()
    path = tmp_path / "store.checkpoints"
    trust = WriterTrust(old, path)
    assert trust.refresh() == roots(old)
    append_line(path, hand_over(old, new.public_key, 0, "00"))
    assert trust.refresh() == roots(old, new)
    append_line(path, hand_over(insider, a_key().public_key, 0, "00"))
    with pytest.raises(ChainError, match=f"from key {insider.key_id}.*not trusted"):
        trust.refresh()
    path.write_bytes(path.read_bytes().splitlines(keepends=True)[0])  # the forged line gone
    assert trust.refresh() == roots(old, new)
    path.write_bytes(b"")  # replaced by an empty file: read again from its start
    assert trust.refresh() == roots(old)
