"""Live push: the channel a table's wake-ups go to, and sending them through Redis.

A wake-up only says "table X has events up to version V"; subscribers read the events from
the store. The API's channels (`api.live`) subscribe to `channel_of(table)`, in memory or on
Redis pub/sub; a process without them (a worker, the CLI, the director) wakes the API's
subscribers by publishing on the same Redis channel (`RedisWake`), dispatched from the
outbox like any follow-up effect. Without Redis, on PostgreSQL, every process sends its
wake-ups as notices on the store's `LIVE` channel (`NoticeWake`, `infra.store.notices`), which
each API process listens to (`api.live.Heard`).
"""

from __future__ import annotations

import uuid

import msgspec
from redis import Redis

from infra.store.database import PostgresDatabase
from infra.store.notices import channel
from infra.store.outbox import Wake

LIVE = "live"


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


class NoticeWake:
    """Send a table's wake-ups as PostgreSQL notices (`table_id version`), where the API
    processes listen."""

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database

    def __call__(self, wake: Wake) -> None:
        self.database.write_one("SELECT pg_notify(?, ?)", (
            channel(self.database, LIVE), f"{wake.table_id} {wake.version}"))


def woken(payload: str) -> tuple[uuid.UUID, int] | None:
    """The table and version of a `NoticeWake`'s notice (None: not one)."""
    table, _, version = payload.partition(" ")
    try:
        return uuid.UUID(table), int(version)
    except ValueError:
        return None


def is_redis(url: str) -> bool:
    return url.startswith(("redis://", "rediss://"))
