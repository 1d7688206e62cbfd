"""The table channels: who is woken when a table records events through this API.

One channel a table (`table:<id>`). The message only says a new version exists; subscribers read
the events themselves from the store, so a coalesced or dropped message loses nothing. On the
embedded default the channels live in this process's memory; given a Redis URL (`sabot serve
--broker redis://...`, or `SABOT_BROKER_URL`), they go through Redis pub/sub, so that every API
process wakes its subscribers whichever process recorded the command.
"""

from __future__ import annotations

import uuid

from litestar.channels import ChannelsPlugin
from litestar.channels.backends.base import ChannelsBackend
from litestar.channels.backends.memory import MemoryChannelsBackend
from litestar.channels.backends.redis import RedisChannelsPubSubBackend
from redis.asyncio import Redis


def channels_plugin(broker_url: str = "") -> ChannelsPlugin:
    """Channels in memory, or through Redis when `broker_url` is a Redis URL."""
    backend: ChannelsBackend = MemoryChannelsBackend()
    if broker_url.startswith(("redis://", "rediss://")):
        backend = RedisChannelsPubSubBackend(redis=Redis.from_url(broker_url),
                                             key_prefix="SABOT_CHANNELS")
    return ChannelsPlugin(backend=backend, arbitrary_channels_allowed=True)


def channel_of(table_id: uuid.UUID) -> str:
    return f"table:{table_id}"


def wake_subscribers(channels: ChannelsPlugin, table_id: uuid.UUID, version: int) -> None:
    """Tell a table's subscribers that it has events up to `version`."""
    channels.publish({"version": version}, channel_of(table_id))
