"""The application services a worker process uses: one per store (and seed), kept across tasks
so that their connections and kept tables are reused, and wired to dispatch the follow-up
effects of the commands they record through the worker's broker (`infra.outbox`):

- a `Deadline` becomes the `expire_decision` task, sent with its countdown (`send_deadline`);
- a `Wake` is published on Redis, where the API's live channels listen, when the broker is
  Redis (on the embedded broker the API's subscribers see the events at their next poll).
"""

from __future__ import annotations

from functools import lru_cache

import structlog
from celery import Celery

from infra.disputes import DisputeService
from infra.live_push import RedisWake, is_redis
from infra.outbox import Deadline, Wake
from infra.service import TableService, seeds_from
from workers.app import EXPIRE_DECISION, app

log = structlog.get_logger("sabot.workers.deadlines")


def send_deadline(database_url: str, deadline: Deadline, *, via: Celery = app) -> str:
    """Send the task that plays `deadline`'s default when it expires; its task id."""
    result = via.send_task(
        EXPIRE_DECISION,
        args=(database_url, str(deadline.table_id), deadline.coup, deadline.side.value),
        kwargs={"seconds": deadline.seconds},
        countdown=deadline.seconds,
        queue=via.conf.task_default_queue,
    )
    log.info("deadline.scheduled", table_id=str(deadline.table_id), coup=deadline.coup,
             side=deadline.side.value, seconds=deadline.seconds, task_id=result.id)
    return str(result.id)


def table_service(database_url: str, *, via: Celery = app,
                  seed_hex: str | None = None) -> TableService:
    """The table service of this worker on `database_url` (bots' seeds from `seed_hex`)."""
    service = _table_service(database_url, seed_hex)
    service.effects.on(Deadline, lambda deadline: send_deadline(database_url, deadline,
                                                                via=via))
    broker = str(via.conf.broker_url or "")
    if is_redis(broker):
        service.effects.on(Wake, _redis_wake(broker))
    return service


@lru_cache(maxsize=8)
def _table_service(database_url: str, seed_hex: str | None) -> TableService:
    service = TableService(url=database_url)
    if seed_hex is not None:
        service.seed_source = seeds_from(bytes.fromhex(seed_hex))
    return service


@lru_cache(maxsize=8)
def _redis_wake(broker_url: str) -> RedisWake:
    return RedisWake(broker_url)


@lru_cache(maxsize=8)
def dispute_service(database_url: str) -> DisputeService:
    return DisputeService(url=database_url)
