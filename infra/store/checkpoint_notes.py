"""Sabot's checkpoints as the transparency logs write theirs: a C2SP tlog-checkpoint signed
note beside each checkpoint line, and each witness's co-signature as a tlog-cosignature/v1
line, so that tools written for Go's checksum database, Sigsum or Tessera witnesses can check
a Sabot checkpoint (`infra.store.notes`, `infra.store.tlog`).

The note of a checkpoint (`infra.store.checkpoints`) of `size` events and Merkle root `root`:

    sabot.<...>/log                              the origin (below)
    <size>
    <base64 root>                                the RFC 9162 tree of `infra.store.merkle`
    sabot-checkpoint-v1 <base64 SHA-256("sabot-checkpoint-v1\\n" || the checkpoint's text)>

    — <origin> base64(key hash || Ed25519 signature of the text above)

The extension line binds what only Sabot signs (the chain head, the time, the partitions'
heads) to the note, so that a witness co-signing the note co-signs them too; tools that do
not know it ignore it, as the specification says. The note is signed by the store's key
(`infra.store.signing`) under the origin as key name (type 0x01: key hash SHA-256(origin ||
0x0A || 0x01 || public key)[:4]).

The origin names the log: `SABOT_LOG_ORIGIN` if set (an installation with several writers'
keys sets it, so that their checkpoints name one log), else the origin of the checkpoint
before, else `sabot.<key id of the store's key>/log`.

A witness co-signs the note under its own name (`witness_name`: `sabot-witness.<key id>`
unless it is given one) with a timestamped Ed25519 co-signature (type 0x04).
"""

from __future__ import annotations

import base64
import hashlib
import os
import time
from collections.abc import Callable, Mapping

from infra.store.notes import (
    CosignatureVerifier,
    Cosigner,
    Ed25519Verifier,
    MalformedNote,
    NoteRejected,
    NoteSigner,
    add_signatures,
    open_note,
    parse_note,
    parse_signature_line,
    sign_note,
)
from infra.store.signing import Signer
from infra.store.tlog import CheckpointBody, parse_checkpoint_body

ORIGIN_SETTING = "SABOT_LOG_ORIGIN"
EXTENSION = "sabot-checkpoint-v1"


def log_origin(signer: Signer, previous: str | None = None,
               environ: Mapping[str, str] | None = None) -> str:
    """The origin line of the store's next checkpoint note."""
    configured = (os.environ if environ is None else environ).get(ORIGIN_SETTING, "").strip()
    return configured or previous or f"sabot.{signer.key_id}/log"


def extension(signed_text: bytes) -> str:
    """The extension line binding Sabot's own signed text to the note."""
    return f"{EXTENSION} {base64.b64encode(hashlib.sha256(signed_text).digest()).decode()}"


def checkpoint_note(origin: str, size: int, root: bytes, signed_text: bytes,
                    signer: Signer) -> str:
    """The C2SP checkpoint note of a Sabot checkpoint, signed by the store's key."""
    body = CheckpointBody(origin, size, root, (extension(signed_text),))
    note_signer = NoteSigner(origin, signer.public_key, signer.sign)
    return sign_note(body.text(), note_signer).decode()


def note_origin(note: str) -> str | None:
    """The origin a checkpoint note names (None if it is not one)."""
    try:
        return parse_checkpoint_body(parse_note(note).text).origin
    except MalformedNote:
        return None


def note_holds(note: str, public_key: bytes, size: int, root: bytes,
               signed_text: bytes) -> bool:
    """Whether `note` is the checkpoint note of that checkpoint, signed by `public_key` under
    its origin."""
    origin = note_origin(note)
    if origin is None:
        return False
    try:
        opened = open_note(note, [Ed25519Verifier(origin, public_key)])
    except (MalformedNote, NoteRejected):
        return False
    return opened.text == CheckpointBody(origin, size, root, (extension(signed_text),)).text()


def witness_name(witness: Signer) -> str:
    return f"sabot-witness.{witness.key_id}"


def cosignature_line(note: str, witness: Signer, name: str | None = None,
                     clock: Callable[[], float] | None = None) -> str:
    """The witness's tlog-cosignature/v1 line for a checkpoint note (without its newline)."""
    cosigner = Cosigner(name or witness_name(witness), witness.public_key, witness.sign,
                        clock or time.time)
    cosigned = parse_note(add_signatures(note, cosigner))
    return cosigned.signatures[-1].line().rstrip("\n")


def cosignature_holds(note: str, line: str, public_key: bytes) -> bool:
    """Whether `line` is a valid co-signature of the note's text by `public_key`."""
    try:
        signature = parse_signature_line(line)
        verifier = CosignatureVerifier(signature.name, public_key)
        return verifier.key_hash == signature.key_hash and verifier.verify(
            parse_note(note).text.encode(), signature.signature)
    except MalformedNote:
        return False


def cosigned_note(note: str, lines: list[str]) -> str:
    """The checkpoint note with the witnesses' co-signature lines after the log's: the form
    a tlog-proof carries and transparency tools read."""
    return note + "".join(f"{line}\n" for line in lines if f"{line}\n" not in note)

