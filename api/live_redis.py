"""The live channels' Redis backend, made to outlive a Redis restart.

litestar's pub/sub backend lets a Redis error escape its `publish` and its `stream_events`;
the channels plugin runs each in one task that an error ends for good: after a Redis restart
the process published no more wake-ups (its streams fell back to the readers' poll, every
`api.live_readers.POLL_SECONDS`), and at shutdown it waited forever for the queue of
publications no task emptied any more (`sabot serve` then ignored SIGTERM until killed).

Here a publication that fails is logged and dropped (a wake-up carries no data: the readers
read the store, and their poll makes up for it), and a subscription that fails is taken up
again once Redis answers (redis-py subscribes the channels again on its new connection).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable
from typing import Any

import structlog
from litestar.channels.backends.redis import RedisChannelsPubSubBackend
from redis.exceptions import RedisError

log = structlog.get_logger("sabot.api.live")

RETRY_SECONDS = 1.0  # between two attempts to take the subscription up again


class RestartableRedisChannels(RedisChannelsPubSubBackend):
    async def publish(self, data: bytes, channels: Iterable[str]) -> None:
        try:
            await super().publish(data, channels)
        except RedisError as error:
            log.warning("live.publish-failed", error=type(error).__name__)

    async def stream_events(self) -> AsyncGenerator[tuple[str, Any], None]:
        failing = False
        while True:
            try:
                async for event in super().stream_events():
                    if failing:
                        log.info("live.subscription-back")
                        failing = False
                    yield event
            except RedisError as error:
                if not failing:
                    log.warning("live.subscription-lost", error=type(error).__name__)
                failing = True
                await asyncio.sleep(RETRY_SECONDS)
