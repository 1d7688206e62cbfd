"""The witness as a small HTTP service of its own (`sabot audit witness serve`): C2SP
tlog-witness's `POST /add-checkpoint`, answered by `infra.store.tlog_witness.LogWitness`
(plain text in and out, as the specification says; nothing else is served)."""

from __future__ import annotations

from litestar import Litestar, Response, post

from infra.store.tlog_witness import MAX_BODY, PATH, LogWitness


def create_witness_app(witness: LogWitness) -> Litestar:
    @post(PATH, sync_to_thread=True, status_code=200)
    def add_checkpoint(body: bytes) -> Response[str]:
        answer = witness.add_checkpoint(body)
        return Response(answer.body, status_code=answer.status, media_type=answer.media_type)

    return Litestar([add_checkpoint], openapi_config=None, request_max_body_size=MAX_BODY)
