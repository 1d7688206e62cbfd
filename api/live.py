"""The table channels: who is woken when a table records events.

One channel a table (`table:<id>`, `infra.store.live_push`). The message only says a new version
exists; subscribers read the events themselves from the store, so a coalesced or dropped
message loses nothing. On the embedded default the channels live in this process's memory;
given a Redis URL (`sabot serve --broker redis://...`, or `SABOT_BROKER_URL`), they go through
Redis pub/sub, so that every API process wakes its subscribers whichever process recorded
the command (a worker publishes its wake-ups there too, `infra.store.live_push.RedisWake`);
without Redis, on PostgreSQL, an API process sends its own through the store's notices
(`NoticeWake`), heard by the others' `Heard`.

`wake_through(channels, service)` makes this process's channels the handler of the service's
`Wake` effects (`infra.store.outbox`): every command the service records, whoever sent it, wakes the
table's subscribers once it commits; at startup it relays the effects left pending.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import anyio
from litestar.channels import ChannelsPlugin
from litestar.channels.backends.base import ChannelsBackend
from litestar.channels.backends.memory import MemoryChannelsBackend
from redis.asyncio import Redis

from api.live_redis import RestartableRedisChannels
from infra.services.tables import TableService
from infra.store.database import PostgresDatabase
from infra.store.live_push import LIVE, NoticeWake, channel_of, is_redis, wake_message, woken
from infra.store.notices import Listener
from infra.store.outbox import Wake

__all__ = ["Heard", "channel_of", "channels_plugin", "wake_subscribers", "wake_through"]


def channels_plugin(broker_url: str = "") -> ChannelsPlugin:
    """Channels in memory, or through Redis when `broker_url` is a Redis URL."""
    backend: ChannelsBackend = MemoryChannelsBackend()
    if is_redis(broker_url):
        backend = RestartableRedisChannels(redis=Redis.from_url(broker_url),
                                           key_prefix="SABOT_CHANNELS")
    return ChannelsPlugin(backend=backend, arbitrary_channels_allowed=True)


def wake_through(channels: ChannelsPlugin,
                 service: TableService) -> Callable[[], Awaitable[None]]:
    """A startup hook: the service's wake-ups go to `channels`, from whatever thread the
    command ran in (the event loop's own publishes them)."""

    async def start() -> None:
        loop = asyncio.get_running_loop()

        def wake(effect: Wake) -> None:
            loop.call_soon_threadsafe(wake_subscribers, channels, effect.table_id,
                                      effect.version)
            if notice is not None:  # the other API processes, without Redis
                notice(effect)

        notice = notice_wake(service)

        service.effects.on(Wake, wake)
        await anyio.to_thread.run_sync(service.effects.relay)  # what others left pending

    return start


def notice_wake(service: TableService) -> NoticeWake | None:
    """How this API process tells the others of its wake-ups when there is no Redis to carry
    them: PostgreSQL's notices (None: Redis carries them, or SQLite, one process)."""
    broker = service.env.get("SABOT_BROKER_URL") or ""
    if is_redis(broker) or not isinstance(service.database, PostgresDatabase):
        return None
    return NoticeWake(service.database)


class Heard:
    """The wake-ups other processes send as PostgreSQL notices (no Redis: `NoticeWake`),
    published on this process's table channels, from `start` (a startup hook) to `close`."""

    def __init__(self, channels: ChannelsPlugin, service: TableService) -> None:
        self.channels = channels
        self.listener = (Listener(service.database, LIVE, lambda: None, self._heard)
                         if notice_wake(service) is not None else None)
        self.loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        if self.listener is not None:
            self.listener.start()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()

    def _heard(self, payload: str) -> None:
        table = woken(payload)
        if table is not None and self.loop is not None:
            self.loop.call_soon_threadsafe(wake_subscribers, self.channels, *table)


def wake_subscribers(channels: ChannelsPlugin, table_id: uuid.UUID, version: int) -> None:
    """Tell a table's subscribers that it has events up to `version`."""
    channels.publish(wake_message(version), channel_of(table_id))
