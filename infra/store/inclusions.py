"""An event's place in a checkpoint's tree: RFC 9162's inclusion proof, built from the
store's events (`sabot audit prove`)."""

from __future__ import annotations

from typing import NamedTuple

from infra.store.checkpoints import Checkpoint, leaves_after
from infra.store.database import Database
from infra.store.merkle import inclusion_proof, verify_inclusion


class Inclusion(NamedTuple):
    """An event's place in a checkpoint's tree: RFC 9162's inclusion proof."""

    notification_id: int
    position: int
    leaf: bytes
    proof: list[bytes]
    checkpoint: Checkpoint

    def holds(self) -> bool:
        return verify_inclusion(self.leaf, self.position, self.checkpoint.size,
                                bytes.fromhex(self.checkpoint.root), self.proof)


def inclusion(database: Database, checkpoint: Checkpoint, notification_id: int) -> Inclusion:
    """The inclusion proof of the event at `notification_id` in `checkpoint`'s tree, from the
    store's events (`ValueError` if the checkpoint does not hold that event)."""
    leaves = leaves_after(database, 0, checkpoint.size)
    with database.transaction(write=False) as cursor:
        ids = [row["n"] for row in database.execute(
            cursor, "SELECT {nid} AS n FROM {stored_events} ORDER BY {nid} LIMIT ?",
            (checkpoint.size,)).fetchall()]
    if notification_id not in ids:
        raise ValueError(f"the checkpoint of size {checkpoint.size} does not hold notification "
                         f"{notification_id}")
    index = ids.index(notification_id)
    return Inclusion(notification_id, index, leaves[index], inclusion_proof(leaves, index),
                     checkpoint)
