"""Live push: the channel a table's wake-ups go to, and sending them through Redis.

A wake-up only says "table X has events up to version V"; subscribers read the events from
the store. The API's channels (`api.live`) subscribe to `channel_of(table)`, in memory or on
Redis pub/sub; a process without them (a worker, the CLI, the director) wakes the API's
subscribers by publishing on the same Redis channel (`RedisWake`), dispatched from the
outbox like any follow-up effect. Without Redis, on PostgreSQL, an API process sends its
wake-ups as notices on the store's `LIVE` channel too (`NoticeWake`, `infra.store.notices`),
which the other API processes listen to (`api.live.Heard`).
"""

from __future__ import annotations

import logging
import threading
import uuid

import msgspec
from redis import Redis

from infra.store.database import PostgresDatabase
from infra.store.notices import channel
from infra.store.outbox import Wake

LIVE = "live"
ORIGIN = uuid.uuid4().hex[:12]
"""This process, in its notices: it hears them too, and has woken its own streams already."""
log = logging.getLogger("sabot.live")


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
    """Send a table's wake-ups as PostgreSQL notices (`table_id version origin`), where the API
    processes listen: from a thread of its own, off the command's path, the wake-ups pending
    in one statement."""

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database
        self._pending: dict[uuid.UUID, int] = {}
        self._lock = threading.Lock()
        self._sending = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, wake: Wake) -> None:
        with self._lock:
            self._pending[wake.table_id] = max(wake.version, self._pending.get(wake.table_id, 0))
            if self._thread is None:
                self._thread = threading.Thread(target=self._send, name="notify-live",
                                                daemon=True)
                self._thread.start()
        self._sending.set()

    def _send(self) -> None:
        target = channel(self.database, LIVE)
        while True:
            self._sending.wait()
            self._sending.clear()
            with self._lock:
                pending, self._pending = self._pending, {}
            if not pending:
                continue
            try:
                self.database.write_one(
                    "SELECT " + ", ".join("pg_notify(?, ?)" for _ in pending),
                    [v for table, version in pending.items()
                     for v in (target, f"{table} {version} {ORIGIN}")])
            except Exception:  # the live readers' own look makes up for it
                log.warning("%d live wake-ups not sent", len(pending), exc_info=True)


def woken(payload: str) -> tuple[uuid.UUID, int] | None:
    """The table and version of another process's `NoticeWake` notice (None: not one, or
    this process's own)."""
    table, version, origin = [*payload.split(" "), "", ""][:3]
    if origin == ORIGIN:
        return None
    try:
        return uuid.UUID(table), int(version)
    except ValueError:
        return None


def is_redis(url: str) -> bool:
    return url.startswith(("redis://", "rediss://"))
