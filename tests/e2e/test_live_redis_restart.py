"""A Redis restart under `sabot serve` (real processes: the server, a Redis of the test's own):
the live streams go on showing every command sent afterwards, woken through Redis again (not
only by the readers' poll), and the server still stops promptly at SIGTERM (a container's stop
gives it 10 s before SIGKILL; it waited forever for the publications of a task a Redis error
had ended: `api.live_redis`)."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from api.live_readers import POLL_SECONDS
from api.tokens import Role
from domain.game.settings import Variant
from tests.client import CLIENT
from tests.e2e.test_api import Api, a_service
from tests.e2e.test_serve_proxy import serve_process
from tests.e2e.test_topology_faults import PrivateRedis, until
from tests.integration.test_table_service import open_table

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

STOP_SECONDS = 10.0  # docker stop's grace before SIGKILL
WOKEN_SECONDS = POLL_SECONDS / 2  # a stream woken by Redis, not by the readers' poll


def stream(base: str, table: str, seen: list[int], subscribed: threading.Event,
           stop: threading.Event) -> None:
    """Follow the table's live stream, noting each event's version, until `stop`."""
    with httpx.stream("GET", f"{base}/tables/{table}/events", timeout=30) as response:
        subscribed.set()
        for line in response.iter_lines():
            if line.startswith("id:"):
                seen.append(int(line[3:]))
            if stop.is_set():
                return


def adjust(base: str, organiser: str, n: int) -> int:
    answer = CLIENT.post(f"{base}/tables/live/commands",
                         headers={"Authorization": f"Bearer {organiser}"},
                         json={"kind": "adjust-chips", "player": "p0", "delta": 1,
                               "reason": "restart", "command_id": f"adjust-{n}"}, timeout=10)
    assert answer.status_code == 200, answer.text
    version: int = answer.json()["version"]
    return version


def test_live_streams_outlive_a_redis_restart_and_the_server_stops_at_once(
        postgres_url: str, tmp_path: Path) -> None:
    (tmp_path / "redis").mkdir()
    redis = PrivateRedis(tmp_path / "redis")
    redis.start()
    service = a_service(postgres_url)
    try:
        open_table(service, "live", Variant.PUNTO_BANCO, players=2)
        api = Api("", service)
        organiser = api.token(Role.ORGANISER)
        with serve_process(postgres_url, tmp_path,
                           env={"SABOT_BROKER_URL": redis.url}) as (server, base):
            seen: list[int] = []
            subscribed, stop = threading.Event(), threading.Event()
            reader = threading.Thread(target=stream, args=(base, "live", seen, subscribed, stop),
                                      daemon=True)
            reader.start()
            assert subscribed.wait(10)
            first = adjust(base, organiser, 1)
            until(f"version {first} streamed before the restart", lambda: first in seen, 15,
                  seen=lambda: seen)

            redis.stop()
            redis.start()  # the same port, as a restarted container
            # the first wake-up may be lost with the old connection (the poll makes up for it)
            after = adjust(base, organiser, 2)
            until(f"version {after} streamed after the restart", lambda: after in seen, 15,
                  seen=lambda: seen)
            for n in range(3, 5):  # then Redis wakes the streams again: well within a poll
                version = adjust(base, organiser, n)
                until(f"version {version} woken through Redis", lambda v=version: v in seen,
                      WOKEN_SECONDS, seen=lambda: seen)
            stop.set()

            server.send_signal(signal.SIGTERM)
            started = time.monotonic()
            server.wait(timeout=30)
            stopped = time.monotonic() - started
            assert stopped < STOP_SECONDS, (stopped, (tmp_path / "serve.log").read_text()[-2000:])
    finally:
        service.close()
        redis.stop()
