"""The transparency logs' formats, read as their specifications say, for the checker alone:
C2SP signed notes (https://c2sp.org/signed-note: Ed25519 signatures, type 0x01, and witness
co-signatures, tlog-cosignature/v1, type 0x04), checkpoints (https://c2sp.org/tlog-checkpoint)
and entry proofs (https://c2sp.org/tlog-proof).

Sabot writes them with its own code (`infra/store/notes.py`); this reading is kept apart on
purpose, so that the checker runs from the zipapp alone and a misreading would have to be
made twice to pass.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import NamedTuple

from .record import signed

DASH = "\u2014 "
TLOG_PROOF = "c2sp.org/tlog-proof@v1"


class NoteError(ValueError):
    """Not a signed note, checkpoint or proof, or not signed as it must be."""


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode(text.encode(), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise NoteError(f"not base64: {text[:40]!r}") from None


def _key_hash(name: str, kind: int, public: bytes) -> bytes:
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


def vkey_public(vkey: str, kind: int) -> bytes:
    """The Ed25519 public key a verifier key (name+hex key hash+base64(type || key)) of
    signature type `kind` names, its key hash checked."""
    name, hexid, encoded = [*vkey.split("+", 2), "", ""][:3]
    raw = _b64(encoded) if encoded else b""
    if len(raw) != 33 or raw[0] != kind or _key_hash(name, kind, raw[1:]).hex() != hexid:
        raise NoteError(f"not a verifier key of signature type {kind:#04x}: {vkey[:60]!r}")
    return raw[1:]


class Signed(NamedTuple):
    """A note's text and its signature lines: (key name, key hash, signature)."""

    text: bytes
    signatures: list[tuple[str, bytes, bytes]]

    def signed_by(self, name: str, public: bytes) -> bool:
        """An Ed25519 signature (type 0x01) of the text by `public` under `name`."""
        hashed = _key_hash(name, 0x01, public)
        return any(signed(public, self.text, s) for n, h, s in self.signatures
                   if (n, h) == (name, hashed))

    def cosigned_by(self, name: str, public: bytes) -> int | None:
        """The time of a valid co-signature (type 0x04) by `public` under `name`, if any."""
        hashed = _key_hash(name, 0x04, public)
        for n, h, s in self.signatures:
            if (n, h) == (name, hashed) and len(s) == 72:
                when = int.from_bytes(s[:8], "big")
                if signed(public, b"cosignature/v1\ntime %d\n" % when + self.text, s[8:]):
                    return when
        return None


def read_note(note: str) -> Signed:
    if any(c < " " and c != "\n" for c in note):
        raise NoteError("a note holds no control character but newlines")
    cut = note.rfind("\n\n")
    lines = note[cut + 2:]
    if cut < 0 or not lines.endswith("\n"):
        raise NoteError("a note is a text, a blank line, and signature lines")
    signatures = []
    for line in lines[:-1].split("\n"):
        name, _, encoded = line.removeprefix(DASH).partition(" ")
        raw = _b64(encoded)
        if not line.startswith(DASH) or not name or "+" in name or len(raw) < 5:
            raise NoteError(f"not a signature line: {line[:40]!r}")
        signatures.append((name, raw[:4], raw[4:]))
    return Signed(note[:cut + 1].encode(), signatures)


class Body(NamedTuple):
    """A checkpoint's text: origin, tree size, root hash, extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: list[str]


def read_checkpoint(text: bytes) -> Body:
    lines = text.decode().split("\n")
    if len(lines) < 4 or lines[-1] or not all(lines[:-1]):
        raise NoteError("a checkpoint is an origin, a size, a root and extension lines")
    origin, size, root, *extensions = lines[:-1]
    if not size.isdigit() or not size.isascii() or (size != "0" and size[0] == "0"):
        raise NoteError(f"a checkpoint's size is a decimal number: {size!r}")
    return Body(origin, int(size), _b64(root), extensions)


class Proof(NamedTuple):
    """A tlog-proof: the entry's index, its inclusion proof, and the checkpoint note."""

    leaf: int
    hashes: list[bytes]
    checkpoint: str


def read_proof(text: str) -> Proof:
    head, blank, checkpoint = text.partition("\n\n")
    lines = head.split("\n")
    if not blank or lines[0] != TLOG_PROOF:
        raise NoteError(f"a tlog-proof starts with {TLOG_PROOF}")
    rest = lines[2:] if len(lines) > 1 and lines[1].startswith("extra ") else lines[1:]
    index = rest[0].removeprefix("index ") if rest else ""
    if not rest or not rest[0].startswith("index ") or not index.isdigit() or (
            index != "0" and index[0] == "0"):
        raise NoteError("a tlog-proof has an index line")
    hashes = [_b64(line) for line in rest[1:]]
    if any(len(h) != 32 for h in hashes):
        raise NoteError("a tlog-proof's proof lines are SHA-256 hashes")
    return Proof(int(index), hashes, checkpoint)
