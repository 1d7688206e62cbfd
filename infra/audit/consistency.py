"""What a receipt's holder asks later: does the record still extend the checkpoint they hold?

    consistency(writer, size, leaves) -> {"from": size, "checkpoint": the latest signed checkpoint,
                                  "checkpoint_note": its C2SP note with the witnesses'
                                  co-signature lines, "witnesses": [{"name", "key",
                                  "public_key"}], "proof": [RFC 9162 consistency proof, hex],
                                  "inclusions": [each leaf's inclusion proof in the latest]}

(GET /audit/consistency?from=SIZE&leaves=I,J,...). The proof is built from the store's
events as they are now, from size `size` to the latest checkpoint's: a record rewritten
after the holder's checkpoint gives a proof that does not lead from its root, whatever the
key holder signed since; and the leaves asked (a receipt's events) are proved in the latest
checkpoint, so that the receipts whose own events were rewritten are named. `latest_of`,
`extends` and `includes` check such an answer against a receipt (`sabot audit
check-receipts`; the page's `receipts.js` does the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

import msgspec

from domain.errors import NotFound
from infra.audit.proofs import covering_checkpoint, public_checkpoint
from infra.store.chain import canonical_bytes
from infra.store.checkpoint_notes import cosigned_note
from infra.store.checkpoints import Checkpoint, leaves_after
from infra.store.merkle import (
    Frontier,
    consistency_proof,
    event_leaf,
    inclusion_proofs,
    verify_consistency,
    verify_inclusion,
)
from infra.store.notes import parse_signature_line

MAX_LEAVES = 200
"""The leaves one answer proves (`GET /audit/consistency`'s `leaves`)."""


def consistency(writer: Any, size: int, leaves: Sequence[int] = ()) -> dict[str, Any]:
    if size < 1:
        raise NotFound("a consistency proof starts from a checkpoint of at least one event",
                       rule="unknown-checkpoint")
    latest, cosignatures = covering_checkpoint(writer, 1)
    if size > latest.size:
        raise NotFound(f"no checkpoint of {size} events: the latest holds {latest.size}",
                       rule="unknown-checkpoint")
    hashes = leaves_after(writer.recorder.database, 0, latest.size)
    beyond = [leaf for leaf in leaves if not 0 <= leaf < latest.size]
    if beyond:
        raise NotFound(f"the latest checkpoint holds {latest.size} events, not leaf {beyond[0]}",
                       rule="unknown-leaf")
    old = Frontier()
    for leaf in hashes[:size]:
        old.append(leaf)
    included = inclusion_proofs(hashes, leaves)
    note = cosigned_note(latest.note, [c.note_signature for c in cosignatures]) \
        if latest.note else ""
    return {"from": size, "checkpoint": public_checkpoint(latest), "checkpoint_note": note,
            "witnesses": [{"name": parse_signature_line(c.note_signature).name,
                           "key": c.witness, "public_key": c.public_key}
                          for c in cosignatures if c.note_signature],
            "proof": [node.hex() for node in consistency_proof(old, hashes[size:])],
            "inclusions": [[node.hex() for node in included[leaf]] for leaf in leaves]}


class NotTheRecord(ValueError):
    """An answer whose latest checkpoint is malformed, or not signed by the keys trusted."""


def latest_of(answer: Any, trusted: Sequence[bytes]) -> Checkpoint:
    """The latest checkpoint an answer of `consistency` gives, signed by a `trusted` key
    (`NotTheRecord` saying why not)."""
    try:
        latest = msgspec.convert({**answer["checkpoint"], "note": answer["checkpoint_note"]},
                                 Checkpoint)
    except (msgspec.ValidationError, KeyError, TypeError) as error:
        raise NotTheRecord(f"the record's answer is malformed ({error})") from None
    if bytes.fromhex(latest.public_key) not in trusted or not latest.signed_by_its_key():
        raise NotTheRecord(f"checkpoint #{latest.size} is not signed by the operator's key "
                           "you were given")
    return latest


def extends(held: dict[str, Any], answer: Any, latest: Checkpoint) -> str | None:
    """None if the latest checkpoint's tree extends the checkpoint `held` (a receipt's,
    already checked), else what does not hold, naming both."""
    proof = [bytes.fromhex(node) for node in answer["proof"]]
    if verify_consistency(held["size"], latest.size, bytes.fromhex(held["root"]),
                          bytes.fromhex(latest.root), proof):
        return None
    return (f"checkpoint #{latest.size} (root {latest.root[:16]}…) does not extend checkpoint "
            f"#{held['size']} (root {held['root'][:16]}…): the record was rewritten after it")


def includes(events: Sequence[dict[str, Any]],
             proved: Mapping[int, tuple[Checkpoint, Sequence[str]]]) -> str | None:
    """None if each of a receipt's `events` is still in the latest checkpoint (`proved`: each
    leaf's latest checkpoint and inclusion proof there, from `consistency`), else which is
    not."""
    for event in events:
        latest, proof = proved[event["leaf"]]
        leaf = event_leaf(event["n"], canonical_bytes(
            UUID(event["stream"]), event["version"], event["topic"],
            bytes.fromhex(event["state"])))
        if not verify_inclusion(leaf, event["leaf"], latest.size, bytes.fromhex(latest.root),
                                [bytes.fromhex(node) for node in proof]):
            return (f"its {event['event']} at #{event['leaf']} is not in checkpoint "
                    f"#{latest.size}")
    return None
