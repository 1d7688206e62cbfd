"""The application services a worker process uses, on the worker's own store: one per store, kept
across tasks so that their connections and kept tables are reused, and wired to dispatch the
follow-up effects of the commands they record through the worker's broker (`infra.store.outbox`):

- a `Deadline` becomes the `expire_decision` task, a `BetDeadline` the `expire_bet_turn` one,
  sent with its countdown (`send_deadline`) and its sender's trail in its headers
  (`workers.logging.trace_headers`);
- a `Wake` is published on Redis, where the API's live channels listen, when the broker is
  Redis (on the embedded broker the API's subscribers see the events at their next poll).

The store is the worker's setting (`sabot worker --database`, else `$SABOT_DATABASE_URL`,
`worker_database_url`), never a task's argument: messages carry ids only, so no password
travels through the broker. A worker process opens one service of each kind on it, so one
connection pool each, bounded by `bound_pools` (`sabot worker --db-pool`).
"""

from __future__ import annotations

import os
import threading
from functools import cache, lru_cache

import structlog
from celery import Celery

from infra.services.disputes import DisputeService
from infra.services.tables import TableService
from infra.settings import resolve_database_url
from infra.store.live_push import RedisWake, is_redis
from infra.store.outbox import BetDeadline, Deadline, Wake
from workers.app import EXPIRE_BET_TURN, EXPIRE_DECISION, app
from workers.logging import trace_headers

log = structlog.get_logger("sabot.workers.deadlines")

_opening = threading.Lock()  # threads racing to a first task open one service, not one each
POOL_OVERFLOW = 1  # connections a pool may open beyond its size, closed once returned


def bound_pools(size: int) -> None:
    """Bound each PostgreSQL pool this process opens from now on to `size` connections (plus
    `POOL_OVERFLOW`); a store URL's own `pool_size`/`max_overflow` options still win."""
    os.environ["POSTGRES_POOL_SIZE"] = str(size)
    os.environ["POSTGRES_MAX_OVERFLOW"] = str(POOL_OVERFLOW)


def worker_database_url() -> str:
    """The store this worker process serves (`sabot worker` exports its `--database`)."""
    return resolve_database_url()


def send_deadline(deadline: Deadline | BetDeadline, *, via: Celery = app) -> str:
    """Send the task that plays `deadline`'s default (a hand's decision) or passes its turn
    to bet when it expires (ids only); its task id."""
    if isinstance(deadline, BetDeadline):
        task, awaited = EXPIRE_BET_TURN, {"player": deadline.player}
    else:
        task, awaited = EXPIRE_DECISION, {"side": deadline.side.value}
    result = via.send_task(
        task,
        args=(str(deadline.table_id), deadline.coup, *awaited.values()),
        kwargs={"seconds": deadline.seconds},
        countdown=deadline.seconds,
        queue=via.conf.task_default_queue,
        headers=trace_headers(table=deadline.table_id),
    )
    log.info("deadline.scheduled", table_id=str(deadline.table_id), coup=deadline.coup,
             **awaited, seconds=deadline.seconds, task_id=result.id)
    return str(result.id)


def table_service(*, via: Celery = app) -> TableService:
    """The table service of this worker on its store."""
    with _opening:
        service = _table_service(worker_database_url())
    service.effects.on(Deadline, lambda deadline: send_deadline(deadline, via=via))
    service.effects.on(BetDeadline, lambda deadline: send_deadline(deadline, via=via))
    broker = str(via.conf.broker_url or "")
    if is_redis(broker):
        service.effects.on(Wake, _redis_wake(broker))
    return service


@cache
def _table_service(database_url: str) -> TableService:
    return TableService(url=database_url)


@lru_cache(maxsize=8)
def _redis_wake(broker_url: str) -> RedisWake:
    return RedisWake(broker_url)


def dispute_service() -> DisputeService:
    """The dispute service of this worker on its store."""
    with _opening:
        return _dispute_service(worker_database_url())


@cache
def _dispute_service(database_url: str) -> DisputeService:
    return DisputeService(url=database_url)
