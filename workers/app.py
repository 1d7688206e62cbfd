"""The Celery app of the workers, configured from Sabot's settings.

Broker: `SABOT_BROKER_URL` (or the `broker_url` given), e.g. `redis://127.0.0.1:6379/0`.
When it is empty, the embedded broker: kombu's filesystem transport with atomic writes
(`workers.embedded_broker`, `sabotfs://`), one file a message under `.sabot/broker/queue/`,
so a real worker process runs without any server; every message delivered is also kept
under `.sabot/broker/processed/` (a trail of what the workers were asked, safe to delete).
Producers and workers must share the same `.sabot` folder.

No result backend: tasks report through the event store (the commands they send) and through
their logs; nobody waits on a result. Messages are JSON. Tasks are acknowledged only once
done (`acks_late`) and requeued if their worker dies mid-way, so a task may run twice: every
task is idempotent (deterministic command ids).

With Redis, a message a worker took but did not acknowledge (a deadline it holds until its
time, a task it runs) goes back to the queue after the visibility timeout if that worker
vanished without a clean shutdown: `VISIBILITY_TIMEOUT`, 5 minutes, not Celery's hour, so a
dead worker's deadlines are played at most that late. A deadline further ahead than that is
delivered again meanwhile, and a task running longer is run twice: idempotence makes both
harmless.

The periodic audit (`workers.audits.verify_store`) runs under `celery beat` (or
`sabot worker --beat`) every `audit_every` seconds on the worker's store. No task carries a
database URL (it may hold a password): messages carry ids, and the worker takes its store from
its own settings (`workers.services.worker_database_url`).
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery import Celery, signals
from celery.app.task import Task

from infra.settings import HOME
from workers import embedded_broker
from workers.logging import bind_task, configure_logging, unbind_task

QUEUE = "sabot"
EXPIRE_DECISION = "sabot.expire_decision"
EXPIRE_BET_TURN = "sabot.expire_bet_turn"
EXPIRE_BANK_OFFER = "sabot.expire_bank_offer"
VERIFY_STORE = "sabot.verify_store"
REPLAY_DISPUTE = "sabot.replay_dispute"
AUDIT_EVERY = 3600.0
VISIBILITY_TIMEOUT = 300
EMBEDDED_POLLING = 0.1  # seconds between two looks at the embedded broker's folder


def broker_config(broker_url: str, home: Path = HOME) -> dict[str, Any]:
    """`broker_url` and its transport options; "" is the embedded filesystem broker."""
    if broker_url:
        return {"broker_url": broker_url,
                "broker_transport_options": {"visibility_timeout": VISIBILITY_TIMEOUT}}
    folder = (home / "broker").resolve()
    queue, processed, control = (folder / name for name in ("queue", "processed", "control"))
    for path in (queue, processed, control):
        path.mkdir(parents=True, exist_ok=True)
    return {
        "broker_url": f"{embedded_broker.SCHEME}://",
        "broker_transport_options": {
            "data_folder_in": str(queue),
            "data_folder_out": str(queue),
            "store_processed": True,
            "processed_folder": str(processed),
            "control_folder": str(control),
            "polling_interval": EMBEDDED_POLLING,
        },
    }


def audit_schedule(every: float = AUDIT_EVERY) -> dict[str, dict[str, Any]]:
    """The beat schedule: verify the worker's store periodically."""
    return {
        "verify-store": {
            "task": VERIFY_STORE,
            "schedule": timedelta(seconds=every),
        }
    }


def make_app(broker_url: str | None = None, *, home: Path = HOME, queue: str = QUEUE,
             audit_every: float = AUDIT_EVERY) -> Celery:
    """A Celery app on `broker_url` (None: `$SABOT_BROKER_URL`, else the embedded broker)."""
    broker = broker_url if broker_url is not None else os.environ.get("SABOT_BROKER_URL", "")
    app = Celery("sabot", include=["workers.deadlines", "workers.audits", "workers.disputes"])
    app.conf.update(
        broker_config(broker, home),
        broker_connection_retry_on_startup=True,
        task_serializer="json",
        accept_content=["json"],
        result_backend=None,
        task_ignore_result=True,
        task_default_queue=queue,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        # a task running when the broker's connection drops cannot be acknowledged and comes
        # back to the queue: cancel it rather than finish it beside its redelivery (every task
        # is idempotent). Celery 6's default; left unset, every lost connection raised its
        # CPendingDeprecationWarning in the worker's log.
        worker_cancel_long_running_tasks_on_connection_loss=True,
        worker_prefetch_multiplier=1,
        worker_hijack_root_logger=False,
        beat_schedule=audit_schedule(audit_every),
        beat_schedule_filename=str((home / "beat-schedule").resolve()),
        enable_utc=True,
        timezone="UTC",
    )
    return app


app = make_app()


@signals.setup_logging.connect
def _setup_logging(loglevel: int | str | None = None, **_: Any) -> None:
    configure_logging(loglevel or logging.INFO)


@signals.task_prerun.connect
def _bind_task(task_id: str, task: Task, **_: Any) -> None:
    bind_task(task_id, task.name, vars(task.request))


@signals.task_postrun.connect
def _unbind_task(**_: Any) -> None:
    unbind_task()
