"""Every checkpoint line carries its C2SP checkpoint note, and every co-signature its
tlog-cosignature line (`infra.store.checkpoint_notes`): they are checked with the line, a
line of before (no note) still reads and checks."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from infra.store.checkpoint_notes import ORIGIN_SETTING, note_origin
from infra.store.checkpoints import Checkpoint, TreeHead, cosign, read_lines, sign_checkpoint
from infra.store.merkle import Frontier, leaf_hash
from infra.store.notes import (
    CosignatureVerifier,
    Ed25519Verifier,
    open_note,
    parse_signature_line,
)
from infra.store.signing import Signer
from infra.store.tlog import parse_checkpoint_body


def a_head(size: int) -> TreeHead:
    tree = Frontier()
    for i in range(size):
        tree.append(leaf_hash(b"event %d" % i))
    return TreeHead(tree, size + 40, bytes(32), {"main": (size, size + 40, "00" * 32)})


@pytest.fixture
def signer() -> Signer:
    return Signer(Ed25519PrivateKey.generate(), "memory")


def test_a_checkpoints_note_is_its_tree_head_signed_by_its_key(signer: Signer) -> None:
    checkpoint = sign_checkpoint(a_head(7), signer)
    origin = f"sabot.{signer.key_id}/log"
    opened = open_note(checkpoint.note, [Ed25519Verifier(origin, signer.public_key)])
    body = parse_checkpoint_body(opened.text)
    assert (body.origin, body.size, body.root.hex()) == (origin, 7, checkpoint.root)
    assert body.extensions[0].startswith("sabot-checkpoint-v1 ")
    assert checkpoint.signed_by_its_key()


def test_a_note_that_is_not_the_lines_is_not_validly_signed(signer: Signer) -> None:
    checkpoint = sign_checkpoint(a_head(7), signer)
    other = sign_checkpoint(a_head(8), signer)
    later = sign_checkpoint(a_head(7), signer, at=datetime(2026, 1, 1, tzinfo=UTC))
    assert not msgspec.structs.replace(checkpoint, note=other.note).signed_by_its_key()
    # the same tree at another time: the extension line binds Sabot's own signed text
    assert later.root == checkpoint.root and later.time != checkpoint.time
    assert not msgspec.structs.replace(checkpoint, note=later.note).signed_by_its_key()
    tampered = checkpoint.note.replace("\n7\n", "\n6\n")
    assert not msgspec.structs.replace(checkpoint, note=tampered).signed_by_its_key()
    stranger = Signer(Ed25519PrivateKey.generate(), "memory")
    foreign = sign_checkpoint(a_head(7), stranger).note
    assert not msgspec.structs.replace(checkpoint, note=foreign).signed_by_its_key()
    assert msgspec.structs.replace(checkpoint, note="").signed_by_its_key()  # a line of before


def test_a_line_of_before_reads(signer: Signer, tmp_path: Path) -> None:
    old = msgspec.json.encode(sign_checkpoint(a_head(3), signer))
    path = tmp_path / "old.checkpoints"
    body = msgspec.json.decode(old)
    del body["note"]
    path.write_bytes(msgspec.json.encode(body) + b"\n")
    (line,) = read_lines(path)
    assert isinstance(line, Checkpoint) and line.note == "" and line.signed_by_its_key()


def test_the_origin_is_the_setting_else_the_logs_before(signer: Signer,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ORIGIN_SETTING, "casino.example/sabot")
    first = sign_checkpoint(a_head(2), signer)
    assert note_origin(first.note) == "casino.example/sabot"
    monkeypatch.delenv(ORIGIN_SETTING)
    other_key = Signer(Ed25519PrivateKey.generate(), "memory")
    second = sign_checkpoint(a_head(3), other_key, previous=first)
    assert note_origin(second.note) == "casino.example/sabot"  # one log, whatever key signs
    assert second.signed_by_its_key()


def test_a_cosignature_cosigns_the_note(signer: Signer) -> None:
    checkpoint = sign_checkpoint(a_head(5), signer)
    witness = Signer(Ed25519PrivateKey.generate(), "memory")
    cosignature = cosign(checkpoint, witness)
    assert cosignature.valid_for(checkpoint)
    line = parse_signature_line(cosignature.note_signature)
    assert line.name == f"sabot-witness.{witness.key_id}"
    verifier = CosignatureVerifier(line.name, witness.public_key)
    cosigned = checkpoint.note + cosignature.note_signature + "\n"
    assert open_note(cosigned, [verifier]).verified == (line,)
    other = sign_checkpoint(a_head(6), signer)
    assert not msgspec.structs.replace(cosignature, note_signature=cosign(
        other, witness).note_signature).valid_for(checkpoint)
    assert not cosign(checkpoint, witness).valid_for(other)
