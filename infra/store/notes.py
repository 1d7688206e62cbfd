"""Signed notes (https://c2sp.org/signed-note), the keys that sign and verify them, and the
text forms those keys are configured in: what transparency logs (Go's checksum database,
Sigsum, Tessera and their witnesses) sign their checkpoints and co-signatures with.

A note is UTF-8 text ending in a newline, then a blank line, then one signature line a key:

    <text, ending in \\n>
    \\n
    — <key name> base64(u32 key hash, big-endian || signature)\\n

The key hash is SHA-256(key name || 0x0A || signature type || public key)[:4]. Two
signature types, each a small rule object (`Ed25519Verifier`, `CosignatureVerifier`):

    0x01  Ed25519 (RFC 8032) over the note text                          (c2sp.org/signed-note)
    0x04  timestamped Ed25519 co-signature: u64 t || Ed25519 over
          "cosignature/v1\\ntime <t>\\n" || the note text                (c2sp.org/tlog-cosignature)

A verifier key ("vkey") names a key to trust: `<name>+<8 hex digits of the key hash>+
base64(signature type || 32-byte public key)`, e.g. Go's example
`PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW`.

`open_note` follows the specification (and Go's golang.org/x/mod/sumdb/note): signatures of
unknown keys are kept aside unverified, a known key's signature that fails rejects the whole
note, and a note no known key signed is rejected.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
from collections.abc import Callable, Iterable
from typing import ClassVar, NamedTuple, Protocol

from infra.store.signing import signature_valid

ED25519 = 0x01
COSIGNATURE_V1 = 0x04
PUBLIC_KEY_SIZE = 32
SIGNATURE_SIZE = 64
MAX_SIGNATURES = 100
DASH = "\u2014 "
COSIGNATURE_HEADER = b"cosignature/v1\n"
MAX_TIMESTAMP = (1 << 63) - 1


class MalformedNote(ValueError):
    """The bytes are not a signed note, or a key is not a key."""


class NoteRejected(ValueError):
    """A note whose signature by a known key fails, or that no known key signed."""


def key_hash(name: str, kind: int, public_key: bytes) -> int:
    """The 32-bit key hash of a signed note's signature lines."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def valid_name(name: str) -> bool:
    """Non-empty, with neither a Unicode space nor a plus."""
    return bool(name) and "+" not in name and not any(c.isspace() for c in name)


def valid_text(text: str) -> bool:
    """A note text: non-empty, ending in a newline, with no control character but newlines."""
    return text.endswith("\n") and not any(c < " " and c != "\n" for c in text)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(text: str) -> bytes:
    """Standard base64 (RFC 4648, section 4) with its padding; `MalformedNote` otherwise."""
    try:
        return base64.b64decode(text.encode(), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise MalformedNote(f"not base64: {text[:40]!r}") from None


class NoteSignature(NamedTuple):
    """One signature line: the key's name and hash, and the signature after the hash."""

    name: str
    key_hash: int
    signature: bytes

    def line(self) -> str:
        return f"{DASH}{self.name} {b64(self.key_hash.to_bytes(4, 'big') + self.signature)}\n"


class Note(NamedTuple):
    """A note's text and signature lines, as read (`parse_note`) or written (`encode`)."""

    text: str
    signatures: tuple[NoteSignature, ...]

    def encode(self) -> bytes:
        return (self.text + "\n" + "".join(s.line() for s in self.signatures)).encode()


def parse_signature_line(line: str) -> NoteSignature:
    """One signature line, without its newline (`MalformedNote` if it is not one)."""
    if not line.startswith(DASH):
        raise MalformedNote(f"not a signature line: {line[:40]!r}")
    name, _, encoded = line[len(DASH):].partition(" ")
    raw = unb64(encoded) if valid_name(name) and encoded else b""
    if len(raw) < 5:
        raise MalformedNote(f"not a signature line: {line[:40]!r}")
    return NoteSignature(name, int.from_bytes(raw[:4], "big"), raw[4:])


def parse_note(data: bytes | str) -> Note:
    """The text and signature lines of a signed note, nothing verified (`MalformedNote`)."""
    try:
        message = data.decode() if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise MalformedNote("a note is UTF-8") from None
    if any(c < " " and c != "\n" for c in message):
        raise MalformedNote("a note holds no control character but newlines")
    split = message.rfind("\n\n")
    if split < 0:
        raise MalformedNote("a note has a blank line before its signatures")
    text, lines = message[:split + 1], message[split + 2:]
    if not lines or not lines.endswith("\n"):
        raise MalformedNote("a note ends with signature lines, each ending in a newline")
    signatures = [parse_signature_line(line) for line in lines[:-1].split("\n")]
    if len(signatures) > MAX_SIGNATURES:
        raise MalformedNote(f"a note has at most {MAX_SIGNATURES} signatures")
    return Note(text, tuple(signatures))


class Verifier(Protocol):
    """A key trusted to sign notes: its name, hash and how its signatures verify."""

    @property
    def name(self) -> str: ...

    @property
    def key_hash(self) -> int: ...

    def verify(self, text: bytes, signature: bytes) -> bool: ...


class _Key:
    """A named Ed25519 public key of one signature type."""

    kind: ClassVar[int]

    def __init__(self, name: str, public_key: bytes) -> None:
        if not valid_name(name):
            raise MalformedNote(f"a key name is non-empty, without spaces or '+': {name!r}")
        if len(public_key) != PUBLIC_KEY_SIZE:
            raise MalformedNote(f"an Ed25519 public key is {PUBLIC_KEY_SIZE} bytes")
        self.name = name
        self.public_key = public_key
        self.key_hash = key_hash(name, self.kind, public_key)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.vkey()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.vkey() == other.vkey()

    def __hash__(self) -> int:
        return hash(self.vkey())

    def vkey(self) -> str:
        """The verifier key form: name+hash+base64(type || public key)."""
        return f"{self.name}+{self.key_hash:08x}+{b64(bytes([self.kind]) + self.public_key)}"


class Ed25519Verifier(_Key):
    """Signature type 0x01: Ed25519 over the note text."""

    kind = ED25519

    def verify(self, text: bytes, signature: bytes) -> bool:
        return len(signature) == SIGNATURE_SIZE and signature_valid(self.public_key, text,
                                                                  signature)


def cosigned_message(timestamp: int, text: bytes) -> bytes:
    """What a tlog-cosignature/v1 Ed25519 co-signature signs."""
    return COSIGNATURE_HEADER + b"time %d\n" % timestamp + text


class CosignatureVerifier(_Key):
    """Signature type 0x04: a witness's timestamped Ed25519 co-signature of a checkpoint."""

    kind = COSIGNATURE_V1

    def verify(self, text: bytes, signature: bytes) -> bool:
        if len(signature) != 8 + SIGNATURE_SIZE:
            return False
        timestamp = int.from_bytes(signature[:8], "big")
        return timestamp <= MAX_TIMESTAMP and signature_valid(
            self.public_key, cosigned_message(timestamp, text), signature[8:])


def cosignature_time(signature: NoteSignature) -> int:
    """The POSIX time a co-signature says it was made at (`MalformedNote` if it is none)."""
    if len(signature.signature) != 8 + SIGNATURE_SIZE:
        raise MalformedNote(f"the signature of {signature.name} is not a co-signature")
    return int.from_bytes(signature.signature[:8], "big")


KEY_KINDS: dict[int, type[_Key]] = {ED25519: Ed25519Verifier, COSIGNATURE_V1: CosignatureVerifier}


def parse_vkey(vkey: str) -> Ed25519Verifier | CosignatureVerifier:
    """The verifier a verifier key names (`MalformedNote` if it is not one, or its hash is not
    its key's)."""
    parts = vkey.split("+", 2)
    if len(parts) != 3 or len(parts[1]) != 8 or not all(c in "0123456789abcdef"
                                                        for c in parts[1]):
        raise MalformedNote(f"a verifier key is name+hash+key: {vkey[:60]!r}")
    name, hash_hex, encoded = parts
    raw = unb64(encoded) if encoded else b""
    kind = KEY_KINDS.get(raw[0]) if raw else None
    if kind is None:
        raise MalformedNote(f"{name}: not a key of a known signature type")
    verifier = kind(name, raw[1:])
    if verifier.key_hash != int(hash_hex, 16):
        raise MalformedNote(f"{name}: the key hash {hash_hex} is not the key's")
    assert isinstance(verifier, Ed25519Verifier | CosignatureVerifier)
    return verifier


class NoteSigner:
    """A private key that signs notes as `name`: Ed25519 over the text (type 0x01), given
    the signing function of a key kept elsewhere (`infra.store.signing.Signer.sign`)."""

    verifier_kind: ClassVar[type[_Key]] = Ed25519Verifier

    def __init__(self, name: str, public_key: bytes, sign: Callable[[bytes], bytes]) -> None:
        self.verifier = self.verifier_kind(name, public_key)
        self._sign = sign

    @property
    def name(self) -> str:
        return self.verifier.name

    @property
    def key_hash(self) -> int:
        return self.verifier.key_hash

    def signature(self, text: bytes) -> bytes:
        return self._sign(text)

    def sign(self, text: str) -> NoteSignature:
        if not valid_text(text):
            raise MalformedNote("a note text ends in a newline and holds no control character")
        return NoteSignature(self.name, self.key_hash, self.signature(text.encode()))


class Cosigner(NoteSigner):
    """A witness's key: timestamped co-signatures (type 0x04) at `clock()` (POSIX seconds)."""

    verifier_kind = CosignatureVerifier

    def __init__(self, name: str, public_key: bytes, sign: Callable[[bytes], bytes],
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(name, public_key, sign)
        self.clock = clock

    def signature(self, text: bytes) -> bytes:
        timestamp = int(self.clock())
        return timestamp.to_bytes(8, "big") + self._sign(cosigned_message(timestamp, text))


def sign_note(text: str, *signers: NoteSigner) -> bytes:
    """The note of `text` signed by each of `signers`, in order."""
    return Note(text, tuple(s.sign(text) for s in signers)).encode()


def add_signatures(note: bytes | str, *signers: NoteSigner) -> bytes:
    """A signed note with the signatures of `signers` added (a key's earlier line replaced):
    how a witness co-signs a checkpoint."""
    parsed = parse_note(note)
    new = [s.sign(parsed.text) for s in signers]
    replaced = {(s.name, s.key_hash) for s in new}
    kept = [s for s in parsed.signatures if (s.name, s.key_hash) not in replaced]
    return Note(parsed.text, (*kept, *new)).encode()


class OpenedNote(NamedTuple):
    """A note whose text at least one known key signed: those signatures, and the others."""

    text: str
    verified: tuple[NoteSignature, ...]
    unverified: tuple[NoteSignature, ...]


def open_note(note: bytes | str, verifiers: Iterable[Verifier]) -> OpenedNote:
    """Check a signed note against the keys trusted: `MalformedNote` if it is not one,
    `NoteRejected` if a known key's signature fails or no known key signed it."""
    parsed = parse_note(note)
    known: dict[tuple[str, int], list[Verifier]] = {}
    for verifier in verifiers:
        same = known.setdefault((verifier.name, verifier.key_hash), [])
        if verifier not in same:
            same.append(verifier)
    text = parsed.text.encode()
    verified: list[NoteSignature] = []
    unverified: list[NoteSignature] = []
    for signature in parsed.signatures:
        keys = known.get((signature.name, signature.key_hash), [])
        if not keys:
            if signature not in unverified:
                unverified.append(signature)
            continue
        if len(keys) > 1:
            raise NoteRejected(f"ambiguous key {signature.name}+{signature.key_hash:08x}")
        if any((s.name, s.key_hash) == (signature.name, signature.key_hash) for s in verified):
            continue
        if not keys[0].verify(text, signature.signature):
            raise NoteRejected(f"invalid signature for key "
                               f"{signature.name}+{signature.key_hash:08x}")
        verified.append(signature)
    if not verified:
        raise NoteRejected("the note has no signature by a known key")
    return OpenedNote(parsed.text, tuple(verified), tuple(unverified))
