"""Events with their proofs: the records a dossier or an export hands over.

`prove(writer, rows)` turns stored events into the records `infra.audit.offline_check` checks:

    {"n": notification id, "leaf": its index in the Merkle tree, "stream": originator id,
     "version": originator version, "topic": the event's class, "event": its short name,
     "state": the stored bytes (MessagePack) in lowercase hex, "fields": those bytes as JSON,
     "proof": the RFC 9162 inclusion proof of the leaf, lowercase hex, leaf side first}

all against one signed checkpoint: the latest of the store's checkpoint file when it covers
the events, else one written now (signed in memory for a store without a file). The store's
leaves are recomputed up to the checkpoint and must fold to its signed root, or nothing is
handed over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec

from infra.audit.offline_check import readable
from infra.errors import StoreError
from infra.store.checkpoints import (
    Checkpoint,
    checkpoint_path,
    checkpoints,
    read_lines,
    sign_checkpoint,
    tree_head,
    write_checkpoint,
    writer_trust,
)
from infra.store.database import Database
from infra.store.ledger import StoredRow, select_events
from infra.store.merkle import event_leaf, inclusion_proofs, root_of
from infra.store.signing import Signer


class Proven(msgspec.Struct, frozen=True):
    checkpoint: dict[str, Any]
    public_keys: list[dict[str, str]]
    events: list[dict[str, Any]]


def rows_of(database: Database, stream: UUID) -> list[StoredRow]:
    """The stored events of `stream`, in version order."""
    with database.transaction(write=False) as cursor:
        rows = database.execute(
            cursor,
            "SELECT {nid} AS notification_id, originator_id, originator_version, topic, state"
            " FROM {stored_events} WHERE originator_id = ? ORDER BY originator_version",
            (database.to_db_id(stream),),
        ).fetchall()
    return [StoredRow(row["notification_id"], database.from_db_id(row["originator_id"]),
                      row["originator_version"], row["topic"], bytes(row["state"]))
            for row in rows]


def public_checkpoint(checkpoint: Checkpoint) -> dict[str, Any]:
    """A checkpoint as a file hands it over: what is signed, the key and the signature."""
    body = msgspec.to_builtins(checkpoint)
    return {k: v for k, v in body.items() if k not in ("kind", "frontier")}


def covering_checkpoint(writer: Any, size: int) -> Checkpoint:
    """The latest signed checkpoint of at least `size` events; written now if none is."""
    database: Database = writer.recorder.database
    path = checkpoint_path(database)
    signed = checkpoints(read_lines(path)) if path is not None else []
    latest = max(signed, key=lambda c: (c.size, c.time), default=None)
    if latest is not None and latest.size >= size:
        return latest
    fresh = write_checkpoint(writer) if path is not None else None
    if fresh is None:
        signer: Signer = writer.recorder.signer()
        fresh = sign_checkpoint(tree_head(database, writer_trust(signer, None)), signer)
    if fresh.size < size:
        raise StoreError(f"the store's tree holds {fresh.size} events, fewer than the "
                         f"{size} to prove")
    return fresh


def prove(writer: Any, rows: Sequence[StoredRow]) -> Proven:
    """Each row as a record with its inclusion proof in one signed checkpoint."""
    database: Database = writer.recorder.database
    top = max((row.notification_id for row in rows), default=0)
    with database.transaction(write=False) as cursor:
        needed = database.execute(
            cursor, "SELECT COUNT(*) AS n FROM {stored_events} WHERE {nid} <= ?", (top,),
        ).fetchone()["n"]
    checkpoint = covering_checkpoint(writer, needed)
    with database.transaction(write=False) as cursor:
        stored = select_events(database, cursor, 0, checkpoint.size)
    leaves = [event_leaf(r.notification_id, r.canonical()) for r in stored]
    if len(leaves) != checkpoint.size or root_of(leaves).hex() != checkpoint.root:
        raise StoreError(f"the store's events do not give the root of checkpoint "
                         f"{checkpoint.size}: the store was altered; run `sabot audit verify`")
    index = {r.notification_id: i for i, r in enumerate(stored)}
    proofs = inclusion_proofs(leaves, [index[row.notification_id] for row in rows])
    events = [record(row, index[row.notification_id], proofs[index[row.notification_id]])
              for row in rows]
    keys = [{"key": checkpoint.key, "public_key": checkpoint.public_key}]
    return Proven(public_checkpoint(checkpoint), keys, events)


def record(row: StoredRow, leaf: int, proof: Sequence[bytes]) -> dict[str, Any]:
    return {
        "n": row.notification_id, "leaf": leaf, "stream": str(row.originator_id),
        "version": row.originator_version, "topic": row.topic,
        "event": row.topic.rsplit(".", 1)[-1], "state": row.state.hex(),
        "fields": readable(row.state), "proof": [p.hex() for p in proof],
    }
