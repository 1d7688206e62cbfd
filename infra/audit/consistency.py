"""What a receipt's holder asks later: does the record still extend the checkpoint they hold?

    consistency(writer, size) -> {"from": size, "checkpoint": the latest signed checkpoint,
                                  "checkpoint_note": its C2SP note with the witnesses'
                                  co-signature lines, "witnesses": [{"name", "key",
                                  "public_key"}], "proof": [RFC 9162 consistency proof, hex]}

(GET /audit/consistency?from=SIZE). The proof is built from the store's events as they are
now, from size `size` to the latest checkpoint's: a record rewritten after the holder's
checkpoint gives a proof that does not lead from its root, whatever the key holder signed
since (`api.commands.receipts`, `receipts.js` check it).
"""

from __future__ import annotations

from typing import Any

from domain.errors import NotFound
from infra.audit.proofs import covering_checkpoint, public_checkpoint
from infra.store.checkpoint_notes import cosigned_note
from infra.store.checkpoints import leaves_after
from infra.store.merkle import Frontier, consistency_proof
from infra.store.notes import parse_signature_line


def consistency(writer: Any, size: int) -> dict[str, Any]:
    if size < 1:
        raise NotFound("a consistency proof starts from a checkpoint of at least one event",
                       rule="unknown-checkpoint")
    latest, cosignatures = covering_checkpoint(writer, size)
    leaves = leaves_after(writer.recorder.database, 0, latest.size)
    old = Frontier()
    for leaf in leaves[:size]:
        old.append(leaf)
    note = cosigned_note(latest.note, [c.note_signature for c in cosignatures]) \
        if latest.note else ""
    return {"from": size, "checkpoint": public_checkpoint(latest), "checkpoint_note": note,
            "witnesses": [{"name": parse_signature_line(c.note_signature).name,
                           "key": c.witness, "public_key": c.public_key}
                          for c in cosignatures if c.note_signature],
            "proof": [node.hex() for node in consistency_proof(old, leaves[size:])]}
