"""Live channels through Redis: a table's wake-up published by one API process reaches the
subscribers of another (the memory backend reaches only its own process)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import msgspec

from api.live import channel_of, channels_plugin, wake_subscribers


async def _delivered(publisher_url: str, subscriber_url: str,
                     wait: float) -> list[dict[str, int]]:
    """What the subscriber received of one wake-up within `wait` seconds."""
    publisher, subscriber = channels_plugin(publisher_url), channels_plugin(subscriber_url)
    await publisher._on_startup()
    await subscriber._on_startup()
    table_id = uuid.uuid4()
    received: list[dict[str, int]] = []
    try:
        async with subscriber.start_subscription([channel_of(table_id)]) as events:
            await asyncio.sleep(0.3)  # the Redis subscription is in place
            wake_subscribers(publisher, table_id, 7)

            async def first() -> None:
                async for message in events.iter_events():
                    received.append(msgspec.json.decode(message))
                    return

            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(first(), timeout=wait)
    finally:
        await publisher._on_shutdown()
        await subscriber._on_shutdown()
    return received


def test_a_wake_up_crosses_processes_through_redis(redis_url: str) -> None:
    assert asyncio.run(_delivered(redis_url, redis_url, wait=5)) == [{"version": 7}]


def test_the_memory_backend_stays_in_its_process() -> None:
    # In memory a crossing would come within a few turns of the event loop, not after seconds.
    assert asyncio.run(_delivered("", "", wait=1)) == []
