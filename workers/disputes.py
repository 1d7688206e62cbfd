"""Dispute replays in a worker: `request_replay` asks for one, `replay_dispute` records it.

    dispute_id = DisputeService(url=database_url).open(table_id, coup=12, ...)
    request_replay(dispute_id)        # a worker on the same store records the verdict

The service (`infra.services.disputes`) records the verdict once, however often the task is
delivered.
"""

from __future__ import annotations

import uuid

import structlog
from celery import Celery

from workers.app import REPLAY_DISPUTE, app
from workers.logging import trace_headers
from workers.services import dispute_service
from workers.transient import RETRY_OPTIONS

log = structlog.get_logger("sabot.workers.disputes")


def request_replay(dispute_id: uuid.UUID, *, via: Celery = app) -> str:
    """Ask a worker (on the dispute's store) to replay the dispute; the task id."""
    result = via.send_task(REPLAY_DISPUTE, args=(str(dispute_id),),
                           queue=via.conf.task_default_queue, headers=trace_headers())
    return str(result.id)


@app.task(name=REPLAY_DISPUTE, **RETRY_OPTIONS)
def replay_dispute(dispute_id: str) -> str:
    """Replay a dispute and record its verdict; the verdict."""
    structlog.contextvars.bind_contextvars(command_id=f"replay:{dispute_id}")
    dispute = dispute_service().replay(uuid.UUID(dispute_id))
    log.info("dispute.replayed", dispute_id=dispute_id, table_id=str(dispute.table_id),
             coup=dispute.coup, verdict=str(dispute.verdict),
             discrepancies=[d.describe() for d in dispute.discrepancies], notes=dispute.notes)
    return str(dispute.verdict)
