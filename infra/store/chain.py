"""The hash chain: how a stored event is digested, per stream and per partition of the store.

Pure functions, used when writing (inside the recorders' insert transaction) and when
auditing (`infra.audit.verify`), so that both sides compute exactly the same bytes:

    canonical(e)    = u32 len(id) || id || u64 version || u32 len(topic) || topic
                      || u32 len(state) || state
                      (id: the 16 bytes of a UUID, or UTF-8 text; topic: UTF-8;
                       state: the stored bytes as written, after mapper, cipher, compressor;
                       integers big-endian, unsigned)
    stream_digest   = SHA-256(previous stream_digest of that originator, or 32 zero bytes
                              || canonical(e))
    global_digest   = SHA-256(previous global_digest in the event's partition, or 32 zero
                              bytes || u64 notification_id || stream_digest)

The partitions are `infra.store.partitions`' (a store chained before them is one partition). The
global digest of a partition's last event (its "head") commits to every event of the
partition and its position; each transaction's head in each partition it wrote is signed
(`infra.store.signing`), and the same events are the
leaves of a Merkle tree (`infra.store.merkle`) whose signed roots are kept outside the database
(`infra.store.checkpoints`).
"""

from __future__ import annotations

import hashlib
from uuid import UUID

import msgspec

DIGEST_SIZE = 32
GENESIS = bytes(DIGEST_SIZE)


class ChainLink(msgspec.Struct, frozen=True):
    """One row of the `event_chain` table."""

    notification_id: int
    originator_id: UUID
    originator_version: int
    stream_digest: bytes
    global_digest: bytes
    partition: str = ""


def canonical_bytes(originator_id: UUID | str, version: int, topic: str, state: bytes) -> bytes:
    """The unambiguous byte string a stored event is digested from."""
    oid = originator_id.bytes if isinstance(originator_id, UUID) else originator_id.encode()
    topic_bytes = topic.encode()
    return b"".join(
        (
            len(oid).to_bytes(4, "big"),
            oid,
            version.to_bytes(8, "big"),
            len(topic_bytes).to_bytes(4, "big"),
            topic_bytes,
            len(state).to_bytes(4, "big"),
            state,
        )
    )


def stream_digest(
    previous: bytes, originator_id: UUID | str, version: int, topic: str, state: bytes
) -> bytes:
    return digest_canonical(previous, canonical_bytes(originator_id, version, topic, state))


def digest_canonical(previous: bytes, canonical: bytes) -> bytes:
    """`stream_digest` from the event's canonical bytes (computed once for the Merkle leaf too)."""
    return hashlib.sha256(previous + canonical).digest()


def global_digest(previous: bytes, notification_id: int, stream: bytes) -> bytes:
    return hashlib.sha256(previous + notification_id.to_bytes(8, "big") + stream).digest()
