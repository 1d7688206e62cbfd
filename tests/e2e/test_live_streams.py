"""Live streams (SSE) over real HTTP: bounded per client address and in all (429 and 503 with
`Retry-After`, counted in `/metrics`), and one read of a table's new events a commit shared
by all its streams in the process, each filtered for its own caller."""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from eventsourcing.persistence import OperationalError
from prometheus_client import CollectorRegistry, Counter

from api import live_readers
from api.live import channels_plugin, wake_subscribers
from api.live_readers import Batch, End, LiveReaders
from api.tokens import Grant, Role
from tests.e2e.test_api import PROBLEM, Api, Game, a_service, serving
from tests.e2e.test_api_views import listen

pytestmark = pytest.mark.postgres


def metric(api: Api, name: str) -> float:
    """One sample of `/metrics` by its name and labels (0 when absent)."""
    for line in api.call("GET", "/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def settle(api: Api, name: str, value: float) -> None:
    deadline = time.monotonic() + 10
    while metric(api, name) != value:
        assert time.monotonic() < deadline, f"{name} is {metric(api, name)}, not {value}"
        time.sleep(0.05)


@contextlib.contextmanager
def bounded(postgres_url: str, monkeypatch: pytest.MonkeyPatch, per_address: int,
            total: int) -> Iterator[Api]:
    monkeypatch.setenv("SABOT_LIVE_PER_ADDRESS", str(per_address))
    monkeypatch.setenv("SABOT_LIVE_TOTAL", str(total))
    with serving(a_service(postgres_url)) as api:
        yield api


def open_stream(client: httpx.Client, streams: contextlib.ExitStack, api: Api,
                path: str) -> httpx.Response:
    return streams.enter_context(client.stream("GET", api.base_url + path))


def test_one_address_holds_at_most_its_streams(postgres_url: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with bounded(postgres_url, monkeypatch, per_address=3, total=100) as api, \
            httpx.Client(timeout=10) as client:
        path = f"/tables/{Game(api).table_id}/events"
        with contextlib.ExitStack() as streams:
            opened = [open_stream(client, streams, api, path) for _ in range(3)]
            assert [s.status_code for s in opened] == [200, 200, 200]
            refused = open_stream(client, streams, api, path)
            assert refused.status_code == 429 and refused.headers["retry-after"] == "10"
            assert refused.headers["content-type"] == PROBLEM
            assert refused.read() and refused.json()["rule"] == "too-many-streams"
            assert metric(api, "sabot_live_subscribers") == 3
            assert metric(api, 'sabot_live_refusals_total{reason="per-address"}') == 1
            opened[0].close()  # one place frees up
            settle(api, "sabot_live_subscribers", 2)
            again = open_stream(client, streams, api, path)
            assert again.status_code == 200
            assert metric(api, "sabot_live_subscribers") == 3
        settle(api, "sabot_live_subscribers", 0)


def test_the_process_holds_at_most_its_streams(postgres_url: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with bounded(postgres_url, monkeypatch, per_address=10, total=2) as api, \
            httpx.Client(timeout=10) as client, contextlib.ExitStack() as streams:
        path = f"/tables/{Game(api).table_id}/events"
        assert [open_stream(client, streams, api, path).status_code for _ in range(2)] == [
            200, 200]
        refused = open_stream(client, streams, api, path)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "10"
        assert refused.read() and refused.json()["rule"] == "live-streams-full"
        assert metric(api, 'sabot_live_refusals_total{reason="total"}') == 1
        assert metric(api, 'sabot_live_refusals_total{reason="per-address"}') == 0


SUBSCRIBERS = 12


def test_one_read_a_commit_for_all_the_streams_of_a_table(
        api: Api, game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 60.0)  # only the wake-up reads
    game.to_betting()
    game.send(game.croupier, {"kind": "close-betting"})
    for _ in range(2):
        game.send(game.croupier, {"kind": "deal"})  # next: the punter's (bob's) second card
    path = f"/tables/{game.table_id}/events"
    callers = [game.bob if i % 2 else None for i in range(SUBSCRIBERS)]
    got: list[queue.Queue[tuple[float, dict[str, Any]]]] = [queue.Queue() for _ in callers]
    readers = [threading.Thread(target=listen, args=(api, path, token, 1, into))
               for token, into in zip(callers, got, strict=True)]
    for reader in readers:
        reader.start()
    settle(api, "sabot_live_subscribers", SUBSCRIBERS)
    shared = 'sabot_live_reads_total{kind="shared"}'
    deadline = time.monotonic() + 10
    while metric(api, shared) < 1:  # the reader's first read, as the first stream joined
        assert time.monotonic() < deadline
        time.sleep(0.05)
    before = metric(api, shared)
    dealt = game.send(game.croupier, {"kind": "deal"}).json()["events"][0]
    for reader in readers:
        reader.join(timeout=15)
        assert not reader.is_alive()
    seen = [into.get_nowait()[1] for into in got]
    assert all(e["type"] == "CardDealt" and e["side"] == dealt["side"] == "punter" for e in seen)
    truth = game.view(game.auditor)["coup"]["hands"]
    punter = next(h["cards"] for h in truth if h["side"] == "punter")
    assert [e["card"] for e in seen] == [punter[1] if token else None for token in callers]
    assert metric(api, shared) - before == 1  # one read for the twelve streams
    assert metric(api, 'sabot_live_reads_total{kind="catch-up"}') == 0


def test_a_stream_that_falls_behind_is_ended_and_the_others_go_on(
        api: Api, game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fan-out itself, on the server's store: a stream whose queue is full when a batch
    comes gets `end` (reason `behind`) in place of what waits, and leaves the table's reader;
    the stream that keeps up receives every batch."""
    monkeypatch.setattr(live_readers, "QUEUE_BATCHES", 2)
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 60.0)
    table_id = uuid.UUID(game.table_id)
    head = game.view(None)["version"]
    steps = [(game.croupier, {"kind": "shuffle"}),
             (game.bob, {"kind": "contribute", "player": "bob", "entropy": "c0ffee"}),
             (game.alice, {"kind": "cut", "player": "alice", "position": 100})]

    async def scenario() -> tuple[list[str], Any, bool]:
        channels = channels_plugin("")
        await channels._on_startup()
        reads = Counter("reads", "reads", ["kind"], registry=CollectorRegistry())
        readers = LiveReaders(api.service, channels, reads)
        try:
            anyone = Grant(role=Role.ANONYMOUS)
            slow = readers.join(table_id, anyone, head, head)
            fast = readers.join(table_id, anyone, head, head)
            types: list[str] = []
            for token, body in steps:
                await anyio.to_thread.run_sync(lambda t=token, b=body: game.send(t, b))
                wake_subscribers(channels, table_id, 0)
                batch = await asyncio.wait_for(fast.queue.get(), timeout=10)
                assert isinstance(batch, Batch)
                types += [e["type"] for e in fast.visible(batch, head)]
            return types, slow.queue.get_nowait(), slow in slow.reader.subscribers
        finally:
            await readers.close()
            await channels._on_shutdown()

    types, ended, still_there = asyncio.run(scenario())
    assert types == ["ShoeShuffled", "EntropyContributed", "ShoeCut"]
    assert ended == End("behind") and not still_there


def test_a_stream_the_server_stops_ends_with_a_named_message(
        api: Api, game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """The table's reader cannot read: its streams get `event: end` with the reason and the
    last id they received, then the stream closes (a browser reconnects after that id)."""
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 60.0)
    with httpx.stream("GET", f"{api.base_url}/tables/{game.table_id}/events?after=0",
                      timeout=20) as response:
        lines = response.iter_lines()
        first = [next(lines) for _ in range(3)]  # id, data, blank: the reader has read once
        assert first[0] == "id: 1" and first[1].startswith("data:")
        while metric(api, 'sabot_live_reads_total{kind="shared"}') < 1:
            time.sleep(0.05)

        def down(*_: Any, **__: Any) -> None:
            raise OperationalError("connection refused")

        monkeypatch.setattr(api.service, "events_of", down)
        game.send(game.croupier, {"kind": "shuffle"})  # wakes the reader, which cannot read
        rest = list(lines)  # to the end of the stream
    ended = rest.index("event: end")
    assert json.loads(rest[ended + 1][5:]) == {"reason": "store-unavailable",
                                               "last_event_id": int(rest[ended - 3][3:])}
    settle(api, "sabot_live_subscribers", 0)


def test_the_streams_that_see_a_batch_alike_share_its_bytes(
        api: Api, game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch is encoded once a view: two anonymous streams get the very same bytes, the
    player whose hand was dealt gets their own, with the card the others do not see."""
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 60.0)
    game.to_betting()
    game.send(game.croupier, {"kind": "close-betting"})
    table_id = uuid.UUID(game.table_id)
    head = game.view(None)["version"]

    async def scenario() -> tuple[list[bytes], set[int], int]:
        channels = channels_plugin("")
        await channels._on_startup()
        reads = Counter("reads", "reads", ["kind"], registry=CollectorRegistry())
        readers = LiveReaders(api.service, channels, reads)
        try:
            grants = [Grant(role=Role.ANONYMOUS), Grant(role=Role.ANONYMOUS),
                      Grant(role=Role.PLAYER, player="bob")]
            streams = [readers.join(table_id, grant, head, head) for grant in grants]
            await anyio.to_thread.run_sync(
                lambda: game.send(game.croupier, {"kind": "deal"}))
            wake_subscribers(channels, table_id, 0)
            chunks, lasts, views = [], set(), 0
            for stream in streams:
                batch = await asyncio.wait_for(stream.queue.get(), timeout=10)
                assert isinstance(batch, Batch)
                chunk, last = stream.messages(batch, head)
                chunks.append(chunk)
                lasts.add(last)
                views = len(batch.encoded)
            return chunks, lasts, views
        finally:
            await readers.close()
            await channels._on_shutdown()

    (first, second, bob), lasts, views = asyncio.run(scenario())
    assert first is second and views == 2
    assert lasts == {game.view(None)["version"]}
    dealt = game.view(game.bob)["coup"]["hands"]
    punter = next(h["cards"] for h in dealt if h["side"] == "punter")
    assert b'"card":null' in first and b'"card":null' not in bob
    assert f'"card":"{punter[0]}"'.encode() in bob
    assert first.startswith(f"id: {head + 1}\r\ndata: ".encode()) and first.endswith(b"\r\n\r\n")


def test_a_quiet_stream_gets_keep_alive_comments(api: Api, game: Game,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """No event for `POLL_SECONDS`: the table's reader has each stream send a comment."""
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 0.2)
    with httpx.stream("GET", f"{api.base_url}/tables/{game.table_id}/events",
                      timeout=10) as response:
        lines = response.iter_lines()
        assert next(lines) == ": keep-alive" and next(lines) == ""
        assert next(lines) == ": keep-alive"
