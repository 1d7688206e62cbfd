"""Live push: the channel a table's wake-ups go to, and sending them through Redis.

A wake-up only says "table X has events up to version V"; subscribers read the events from
the store. The API's channels (`api.live`) subscribe to `channel_of(table)`, in memory or on
Redis pub/sub; a process without them (a worker, the CLI, the director) wakes the API's
subscribers by publishing on the same Redis channel (`RedisWake`), dispatched from the
outbox like any follow-up effect.
"""

from __future__ import annotations

import uuid

import msgspec
from redis import Redis

from infra.store.outbox import Wake


def channel_of(table_id: uuid.UUID) -> str:
    return f"table:{table_id}"


def wake_message(version: int) -> dict[str, int]:
    return {"version": version}


class RedisWake:
    """Publish a table's wake-ups on Redis, where the API's channels listen."""

    def __init__(self, broker_url: str) -> None:
        self.redis = Redis.from_url(broker_url, socket_timeout=2, socket_connect_timeout=2)

    def __call__(self, wake: Wake) -> None:
        self.redis.publish(channel_of(wake.table_id),
                           msgspec.json.encode(wake_message(wake.version)))


def is_redis(url: str) -> bool:
    return url.startswith(("redis://", "rediss://"))
