"""The record as signed: an event's canonical bytes, its Merkle leaf, RFC 9162 inclusion
proofs, key ids and Ed25519 signatures, a checkpoint's signed text, the canonical JSON a
manifest is signed over, and strict hex."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

CHECKPOINT_PREFIX = b"sabot-checkpoint-v1\n"
WITNESS_PREFIX = b"sabot-witness-v1\n"
HAND_OVER_PREFIX = b"sabot-hand-over-v1\n"
MANIFEST_PREFIX = b"sabot-export-v1\n"


def canonical(stream: str, version: int, topic: str, state: bytes) -> bytes:
    oid, topic_bytes = uuid.UUID(stream).bytes, topic.encode()
    return b"".join((len(oid).to_bytes(4, "big"), oid, version.to_bytes(8, "big"),
                     len(topic_bytes).to_bytes(4, "big"), topic_bytes,
                     len(state).to_bytes(4, "big"), state))


def leaf_hash(notification: int, canonical_bytes: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + notification.to_bytes(8, "big") + canonical_bytes).digest()


def verify_inclusion(leaf: bytes, index: int, size: int, root: bytes,
                     proof: Sequence[bytes]) -> bool:
    """RFC 9162 section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + p + r).digest()
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = hashlib.sha256(b"\x01" + r + p).digest()
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).digest()[:8].hex()


def signed(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def checkpoint_text(cp: dict[str, Any]) -> bytes:
    return (f"{cp['size']}\n{cp['root']}\n{cp['head']}\n{cp['chain']}\n{cp['time']}\n"
            + "".join(f"partition {p['key']} {p['size']} {p['head']} {p['chain']}\n"
                      for p in cp.get("partitions") or [])).encode()


def hand_over_text(line: dict[str, Any]) -> bytes:
    """What the old key of a key hand-over signs (docs/audit.md, Roots of trust)."""
    return "".join(f"{line[field]}\n" for field in (
        "key", "public_key", "new_key", "new_public_key", "size", "root", "time")).encode()


def canonical_json(value: Any) -> bytes:
    """The bytes a manifest is signed over: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def hex_bytes(text: Any, what: str, size: int | None = None) -> bytes:
    """Lowercase hex only, so that no two texts name the same bytes."""
    if not isinstance(text, str):
        raise ValueError(f"{what} is not hex text")
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{what} is not hex") from None
    if data.hex() != text or (size is not None and len(data) != size):
        raise ValueError(f"{what} is not {size or 'some'} bytes of lowercase hex")
    return data
