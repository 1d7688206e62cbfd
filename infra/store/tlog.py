"""A transparency log's checkpoint and proofs in the C2SP text forms, any log's:

the checkpoint body (https://c2sp.org/tlog-checkpoint), the text of a signed note
(`infra.store.notes`):

    <origin>\\n                 the log's identity, e.g. sabot.example/tables
    <tree size>\\n              decimal, no leading zero
    <base64 root hash>\\n       the RFC 6962 / RFC 9162 Merkle tree root at that size
    [<extension line>\\n ...]   optional, opaque

and the proof of an entry (https://c2sp.org/tlog-proof), self-contained and checkable offline:

    c2sp.org/tlog-proof@v1\\n
    [extra <base64>\\n]
    index <leaf index>\\n
    <base64 inclusion proof hash>\\n ...   from the leaf's sibling up
    \\n
    <the checkpoint, a signed note, verbatim>
"""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple

from infra.store.notes import MalformedNote, b64, unb64

PROOF_HEADER = "c2sp.org/tlog-proof@v1"
HASH_SIZE = 32


def _decimal(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit() or (len(text) > 1 and text[0] == "0"):
        raise MalformedNote(f"{what} is a decimal number without leading zeroes: {text!r}")
    return int(text)


def _hash(text: str, what: str) -> bytes:
    try:
        value = unb64(text)
    except MalformedNote:
        value = b""
    if len(value) != HASH_SIZE:
        raise MalformedNote(f"{what} is a base64 SHA-256 hash: {text[:60]!r}")
    return value


class CheckpointBody(NamedTuple):
    """The three lines every log's checkpoint has, and its extension lines."""

    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        return "".join(f"{line}\n" for line in (self.origin, str(self.size), b64(self.root),
                                               *self.extensions))


def parse_checkpoint_body(text: str) -> CheckpointBody:
    """A checkpoint's note text read (`MalformedNote` if it is not one)."""
    if not text.endswith("\n"):
        raise MalformedNote("a checkpoint's text ends in a newline")
    lines = text[:-1].split("\n")
    if len(lines) < 3 or not all(lines):
        raise MalformedNote("a checkpoint is an origin, a size, a root and non-empty extensions")
    origin, size, root, *extensions = lines
    return CheckpointBody(origin, _decimal(size, "a checkpoint's size"),
                          _hash(root, "a checkpoint's root"), tuple(extensions))


class TlogProof(NamedTuple):
    """An entry's inclusion proof in a checkpoint (a signed note, kept verbatim)."""

    leaf_index: int
    proof: tuple[bytes, ...]
    checkpoint: str
    extra: bytes | None = None

    def text(self) -> str:
        extra = [] if self.extra is None else [f"extra {b64(self.extra)}"]
        lines = [PROOF_HEADER, *extra, f"index {self.leaf_index}", *(b64(h) for h in self.proof)]
        return "".join(f"{line}\n" for line in lines) + "\n" + self.checkpoint


def parse_tlog_proof(text: str) -> TlogProof:
    """A tlog-proof read, nothing verified (`MalformedNote` if it is not one)."""
    head, blank, checkpoint = text.partition("\n\n")
    lines = head.split("\n")
    if not blank or lines[0] != PROOF_HEADER or len(lines) < 2:
        raise MalformedNote(f"a tlog-proof starts with {PROOF_HEADER!r} and an index line")
    extra = None
    rest = lines[1:]
    if rest[0].startswith("extra "):
        try:
            extra = base64.b64decode(rest[0][6:].encode(), validate=True)
        except (binascii.Error, ValueError):
            raise MalformedNote("a tlog-proof's extra data is base64") from None
        rest = rest[1:]
    if not rest or not rest[0].startswith("index "):
        raise MalformedNote("a tlog-proof has an index line")
    index = _decimal(rest[0][6:], "a tlog-proof's index")
    proof = tuple(_hash(line, "an inclusion proof line") for line in rest[1:])
    return TlogProof(index, proof, checkpoint, extra)
