"""The record's signed checkpoints, for anyone to copy and compare: public, no token needed.

    GET /audit/checkpoints?last=N   the store's public key, the latest checkpoint and its short
                                    fingerprint (for the big screen), the last N checkpoints
                                    and the witnesses' co-signatures of them; the latest as a
                                    C2SP checkpoint note with its witnesses' co-signatures
                                    (`note`) and the verifier key that checks it (`vkey`)

A checkpoint (`infra.store.checkpoints`) is a signed tree head: size, Merkle root, chain head,
time. Copies kept elsewhere (a witness, a screenshot of the fingerprint, a regulator's
download) are what `sabot audit verify` can later be held to.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from litestar import Request, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from api.routes_tables import blocking
from infra.services.tables import TableService
from infra.store.checkpoint_notes import cosigned_note, note_origin
from infra.store.checkpoints import Checkpoint, Cosignature, checkpoint_path, read_lines
from infra.store.notes import Ed25519Verifier

Last = Annotated[int, QueryParameter(ge=1, le=1000, description="how many checkpoints")]


class Checkpoints(msgspec.Struct, kw_only=True):
    """The store's signing key and its latest checkpoints, newest last."""

    key: str
    public_key: str
    fingerprint: str
    latest: Checkpoint | None
    checkpoints: list[Checkpoint]
    cosignatures: list[Cosignature]
    note: str = ""
    vkey: str = ""


def read_checkpoints(service: TableService, last: int) -> Checkpoints:
    signer = service.chained_recorder.signer()
    path = checkpoint_path(service.database)
    lines = read_lines(path) if path is not None else []
    signed = sorted((c for c in lines if isinstance(c, Checkpoint)), key=lambda c: (c.size, c.time))
    shown = signed[-last:]
    keys = {(c.size, c.root, c.time) for c in shown}
    cosignatures = [c for c in lines if isinstance(c, Cosignature)
                    and (c.size, c.root, c.time) in keys]
    latest = shown[-1] if shown else None
    note = vkey = ""
    origin = note_origin(latest.note) if latest is not None else None
    if latest is not None and origin is not None:
        note = cosigned_note(latest.note, [c.note_signature for c in cosignatures
                                           if c.note_signature and c.valid_for(latest)])
        vkey = Ed25519Verifier(origin, bytes.fromhex(latest.public_key)).vkey()
    return Checkpoints(key=signer.key_id, public_key=signer.public_key.hex(),
                       fingerprint=latest.fingerprint() if latest else "", latest=latest,
                       checkpoints=shown, cosignatures=cosignatures, note=note, vkey=vkey)


@get("/audit/checkpoints", summary="The store's signed checkpoints", tags=["audit"])
async def audit_checkpoints(request: Request[Any, Any, State], last: Last = 20) -> Checkpoints:
    service: TableService = request.app.state.service
    return await blocking(read_checkpoints, service, last)
