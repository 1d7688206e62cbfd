"""The table channels: who is woken when a table records events through this API.

One channel a table (`table:<id>`), on litestar's in-memory channels backend: subscribers in
this process are woken at once. The message only says a new version exists; subscribers read
the events themselves from the store, so a coalesced or dropped message loses nothing. With
several API processes, a shared backend (Redis) replaces the memory one.
"""

from __future__ import annotations

import uuid

from litestar.channels import ChannelsPlugin
from litestar.channels.backends.memory import MemoryChannelsBackend


def channels_plugin() -> ChannelsPlugin:
    return ChannelsPlugin(backend=MemoryChannelsBackend(), arbitrary_channels_allowed=True)


def channel_of(table_id: uuid.UUID) -> str:
    return f"table:{table_id}"


def wake_subscribers(channels: ChannelsPlugin, table_id: uuid.UUID, version: int) -> None:
    """Tell a table's subscribers that it has events up to `version`."""
    channels.publish({"version": version}, channel_of(table_id))
