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

Each record's proof is also given as a C2SP tlog-proof (https://c2sp.org/tlog-proof,
`infra.store.tlog`): its leaf index, its inclusion proof in base64, and the checkpoint's
signed note with the co-signatures of the witnesses who co-signed it (tlog-cosignature/v1),
so that a transparency log's tools can check it: `tlog_proofs`, in the records' order, and
`witnesses`, the name and public key of each co-signature there. The checkpoint's own note is
`note` (beside the checkpoint, not in it: the checkers handed out before read a checkpoint's
fields strictly).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec

from infra.audit.offline_check import readable
from infra.errors import StoreError
from infra.store.checkpoint_notes import cosigned_note
from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import (
    Checkpoint,
    Cosignature,
    WriterTrust,
    checkpoint_path,
    checkpoints,
    read_lines,
    sign_checkpoint,
    tree_head,
)
from infra.store.database import Database
from infra.store.ledger import StoredRow, select_events
from infra.store.merkle import event_leaf, inclusion_proofs, root_of
from infra.store.notes import parse_signature_line
from infra.store.signing import Signer
from infra.store.tlog import TlogProof


class Proven(msgspec.Struct, frozen=True):
    checkpoint: dict[str, Any]
    public_keys: list[dict[str, str]]
    events: list[dict[str, Any]]
    note: str
    tlog_proofs: list[str]
    witnesses: list[dict[str, str]]


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
    """A checkpoint as a file hands it over: what is signed, the key and the signature (its
    note is handed over beside it, so that checkers of before still read the checkpoint)."""
    body = msgspec.to_builtins(checkpoint)
    return {k: v for k, v in body.items() if k not in ("kind", "frontier", "note")}


def covering_checkpoint(writer: Any, size: int) -> tuple[Checkpoint, list[Cosignature]]:
    """The latest signed checkpoint of at least `size` events, and the witnesses'
    co-signatures of it; written now (not co-signed yet) if none is."""
    database: Database = writer.recorder.database
    path = checkpoint_path(database)
    lines = read_lines(path) if path is not None else []
    latest = max(checkpoints(lines), key=lambda c: (c.size, c.time), default=None)
    if latest is not None and latest.size >= size:
        return latest, [line for line in lines if isinstance(line, Cosignature)
                        and line.note_signature and line.valid_for(latest)]
    fresh = write_checkpoint(writer) if path is not None else None
    if fresh is None:
        signer: Signer = writer.recorder.signer()
        fresh = sign_checkpoint(tree_head(database, WriterTrust(signer, None).keys), signer)
    if fresh.size < size:
        raise StoreError(f"the store's tree holds {fresh.size} events, fewer than the "
                         f"{size} to prove")
    return fresh, []


def prove(writer: Any, rows: Sequence[StoredRow]) -> Proven:
    """Each row as a record with its inclusion proof in one signed checkpoint."""
    database: Database = writer.recorder.database
    top = max((row.notification_id for row in rows), default=0)
    with database.transaction(write=False) as cursor:
        needed = database.execute(
            cursor, "SELECT COUNT(*) AS n FROM {stored_events} WHERE {nid} <= ?", (top,),
        ).fetchone()["n"]
    checkpoint, cosignatures = covering_checkpoint(writer, needed)
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
    note = cosigned_note(checkpoint.note, [c.note_signature for c in cosignatures]) \
        if checkpoint.note else ""
    tlog = [TlogProof(index[row.notification_id], tuple(proofs[index[row.notification_id]]),
                      note).text() for row in rows] if note else []
    witnesses = [{"name": parse_signature_line(c.note_signature).name,
                  "key": c.witness, "public_key": c.public_key} for c in cosignatures]
    return Proven(public_checkpoint(checkpoint), keys, events, checkpoint.note, tlog, witnesses)


def record(row: StoredRow, leaf: int, proof: Sequence[bytes]) -> dict[str, Any]:
    return {
        "n": row.notification_id, "leaf": leaf, "stream": str(row.originator_id),
        "version": row.originator_version, "topic": row.topic,
        "event": row.topic.rsplit(".", 1)[-1], "state": row.state.hex(),
        "fields": readable(row.state), "proof": [p.hex() for p in proof],
    }
