"""Prometheus metrics at `GET /metrics` (text exposition format), one registry per app.

* `sabot_commands_total{kind,outcome}`: commands (and table openings, kind `open`) answered,
  by outcome (`ok`, `replayed`, or the refusal's class: `RuleViolation`, `ApiProblem`...);
* `sabot_command_seconds{kind}`: how long answering them took (histogram);
* `sabot_projection_behind_events{projection}`: events each view has yet to apply, and
  `sabot_projection_stopped{projection}` (1 when stopped by an event it cannot apply);
* `sabot_workers_alive`: workers that beat within 10 s (`workers.heartbeat`);
* `sabot_live_subscribers`: live event streams (SSE) this process holds open, and
  `sabot_live_refusals_total{reason}` the streams refused (`per-address`, `total`;
  `api.live_limits`); `sabot_live_reads_total{kind}`: reads of a table's new events for its
  streams (`shared`: one a wake-up for all the table's streams, `catch-up`: a stream joining
  behind; `api.live_readers`);
* `sabot_checkpoint_age_seconds{database}`: seconds since the latest checkpoint of each store
  this process writes to (its checkpoint file's name; it grows while the store is idle too),
  and `sabot_checkpoint_failures_total{database}` the attempts to write one that failed (the
  events stay outside any checkpoint meanwhile: `infra.store.checkpoints`); alert on the
  failures rising;
* `sabot_queue_depth{queue}`: tasks waiting for a worker in the queue this process sends to
  (the length of its Redis list, or the embedded broker's message files); left out of a
  scrape, with a warning logged, while the broker does not answer.

The store's gauges and the queue's depth are read when Prometheus scrapes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import structlog
from anyio import to_thread
from celery import Celery
from litestar import Request, Response, get
from litestar.datastructures import State
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector
from redis import Redis, RedisError

from api.view_reader import ViewReader
from infra.store.checkpointer import anchoring
from infra.store.database import Database
from infra.store.live_push import is_redis
from projections.registry import NAMES
from workers.heartbeat import workers

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
BROKER_TIMEOUT = 1.0  # seconds a scrape waits for Redis

log = structlog.get_logger("sabot.api.metrics")


class Metrics:
    """The app's registry: command counters and latencies, live subscribers, and the store's
    and the broker's gauges (`broker`: the Celery app this process sends tasks through)."""

    def __init__(self, views: ViewReader, broker: Celery) -> None:
        self.registry = CollectorRegistry()
        self.commands = Counter("sabot_commands", "commands answered", ["kind", "outcome"],
                                registry=self.registry)
        self.seconds = Histogram("sabot_command_seconds", "time to answer a command", ["kind"],
                                 registry=self.registry)
        self.subscribers = Gauge("sabot_live_subscribers", "live event streams (SSE) open",
                                 registry=self.registry)
        self.live_refusals = Counter("sabot_live_refusals", "live event streams refused",
                                     ["reason"], registry=self.registry)
        self.live_reads = Counter("sabot_live_reads", "reads of a table's new events for its "
                                  "live streams", ["kind"], registry=self.registry)
        self.registry.register(_StoreGauges(views))
        self.registry.register(_Checkpoints(views.service.database))
        self.registry.register(_QueueDepth(broker))

    async def timed(self, kind: str, respond: Callable[[], Awaitable[Any]]) -> Any:
        started = time.perf_counter()
        outcome = "ok"
        try:
            answer = await respond()
            if isinstance(answer, Response):
                outcome = "replayed"
            return answer
        except Exception as error:
            outcome = type(error).__name__
            raise
        finally:
            self.commands.labels(kind, outcome).inc()
            self.seconds.labels(kind).observe(time.perf_counter() - started)


class _StoreGauges(Collector):
    def __init__(self, views: ViewReader) -> None:
        self.views = views

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        runner = self.views.runner()
        behind = GaugeMetricFamily("sabot_projection_behind_events",
                                   "events a projection has yet to apply", labels=["projection"])
        stopped = GaugeMetricFamily("sabot_projection_stopped",
                                    "1 when a projection is stopped by an event",
                                    labels=["projection"])
        for name in NAMES:
            lag = runner.lag(name)
            behind.add_metric([name], lag.behind)
            stopped.add_metric([name], 0 if lag.stopped_at is None else 1)
        found = workers(self.views.service.database)
        waits = CounterMetricFamily("sabot_view_waits", "looks of reads waiting for a view's "
                                    "position, by what ended them (notice, look)", labels=["by"])
        for by in ("notice", "look"):
            waits.add_metric([by], self.views.waits[by])
        yield behind
        yield stopped
        yield waits
        yield GaugeMetricFamily("sabot_workers_alive", "workers that beat within 10 s",
                                value=found.alive if found is not None else 0)


class _Checkpoints(Collector):
    """The installation's anchoring: this process's writers and the others' reports."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        age = GaugeMetricFamily("sabot_checkpoint_age_seconds",
                                "seconds since the store's latest checkpoint", labels=["database"])
        failures = CounterMetricFamily("sabot_checkpoint_failures",
                                       "attempts to write a checkpoint that failed",
                                       labels=["database"])
        for store in anchoring(self.database):
            if store.age is not None:
                age.add_metric([store.database], store.age)
            failures.add_metric([store.database], store.failures)
        yield age
        yield failures


class _QueueDepth(Collector):
    def __init__(self, broker: Celery) -> None:
        self.queue = str(broker.conf.task_default_queue)
        url = str(broker.conf.broker_url or "")
        self.redis = Redis.from_url(url, socket_timeout=BROKER_TIMEOUT,
                                    socket_connect_timeout=BROKER_TIMEOUT) if is_redis(url) \
            else None
        self.options = broker.conf.broker_transport_options

    def depth(self) -> int:
        if self.redis is not None:
            return int(self.redis.llen(self.queue))
        name = f"{self.queue}.msg"  # kombu's filesystem transport: `<time>_<uuid>.<queue>.msg`
        return sum(entry.name.partition(".")[2] == name
                   for entry in os.scandir(self.options["data_folder_in"]))

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            depth = self.depth()
        except (RedisError, OSError) as error:
            log.warning("metrics.queue-depth-unknown", queue=self.queue,
                        error=type(error).__name__)
            return
        family = GaugeMetricFamily("sabot_queue_depth", "tasks waiting for a worker",
                                   labels=["queue"])
        family.add_metric([self.queue], depth)
        yield family


@get("/metrics", tags=["health"], summary="Prometheus metrics", media_type=CONTENT_TYPE,
     include_in_schema=False)
async def metrics(request: Request[Any, Any, State]) -> Response[bytes]:
    registry: Metrics = request.app.state.metrics
    body = await to_thread.run_sync(generate_latest, registry.registry)
    return Response(body, media_type=CONTENT_TYPE)
