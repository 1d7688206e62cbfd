"""The application services a worker process uses, on the worker's own store: one per store, kept
across tasks so that their connections and kept tables are reused, and wired to dispatch the
follow-up effects of the commands they record through the worker's broker (`infra.store.outbox`):

- a `Deadline` becomes the `expire_decision` task, a `BetDeadline` the `expire_bet_turn` one,
  a `BankDeadline` the `expire_bank_offer` one, sent with its countdown (`send_deadline`) and
  its sender's trail in its headers (`workers.logging.trace_headers`);
- a `Wake` is published on Redis, where the API's live channels listen, when the broker is
  Redis (on the embedded broker the API's subscribers see the events at their next poll).

The store is the worker's setting (`sabot worker --database`, else `$SABOT_DATABASE_URL`,
`worker_database_url`), never a task's argument: messages carry ids only, so no password
travels through the broker. A worker process opens one service of each kind on it, so one
connection pool each, bounded by `bound_pools` (`sabot worker --db-pool`). A prefork child
closes them as it ends (`worker_process_shutdown`: it leaves by `os._exit`, running no
`atexit`), so that its last checkpoint covers what it wrote.
"""

from __future__ import annotations

import os
import threading
from functools import cache, lru_cache
from typing import Any

import structlog
from celery import Celery, signals

from infra.services.disputes import DisputeService
from infra.services.tables import TableService
from infra.settings import resolve_database_url
from infra.store.live_push import RedisWake, is_redis
from infra.store.outbox import CLOCKS, BankDeadline, BetDeadline, Clock, Deadline, Wake
from workers.app import EXPIRE_BANK_OFFER, EXPIRE_BET_TURN, EXPIRE_DECISION, app
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


def send_deadline(deadline: Clock, *, via: Celery = app) -> str:
    """Send the task that plays `deadline`'s default (a hand's decision), passes its turn to
    bet or lets the shoe offered pass on when it expires (ids only); its task id."""
    task, awaited = _expiry(deadline)
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


def _expiry(deadline: Clock) -> tuple[str, dict[str, str]]:
    """The task that plays `deadline`'s default, and what it awaits beside table and coup."""
    match deadline:
        case BetDeadline(player=player):
            return EXPIRE_BET_TURN, {"player": player}
        case BankDeadline(player=player):
            return EXPIRE_BANK_OFFER, {"player": player}
        case Deadline(side=side):
            return EXPIRE_DECISION, {"side": side.value}


def table_service(*, via: Celery = app) -> TableService:
    """The table service of this worker on its store."""
    with _opening:
        service = _table_service(worker_database_url())
    for clock in CLOCKS:
        service.effects.on(clock, lambda deadline: send_deadline(deadline, via=via))
    broker = str(via.conf.broker_url or "")
    if is_redis(broker):
        service.effects.on(Wake, _redis_wake(broker))
    return service


@cache
def _table_service(database_url: str) -> TableService:
    service = TableService(url=database_url)
    _opened.append(service)
    return service


@lru_cache(maxsize=8)
def _redis_wake(broker_url: str) -> RedisWake:
    return RedisWake(broker_url)


def dispute_service() -> DisputeService:
    """The dispute service of this worker on its store."""
    with _opening:
        return _dispute_service(worker_database_url())


@cache
def _dispute_service(database_url: str) -> DisputeService:
    service = DisputeService(url=database_url)
    _opened.append(service)
    return service


_opened: list[TableService | DisputeService] = []


@signals.worker_process_shutdown.connect
def _close_services(**_: Any) -> None:
    """A prefork child's services closed as it ends: their last checkpoint written."""
    with _opening:
        _table_service.cache_clear()
        _dispute_service.cache_clear()
        while _opened:
            _opened.pop().close()
