"""`GET /metrics` over real HTTP: commands counted and timed by kind and outcome, the
projections' lag, the workers alive, the live subscribers and the depth of the broker's queue
(Redis and the embedded broker), in Prometheus's text format."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import httpx
import pytest

from api.deadlines import DeadlineClock
from tests.conftest import REDIS_URL, need_server
from tests.e2e.test_api import Api, Game, a_service, serving
from workers.app import make_app

pytestmark = pytest.mark.postgres


def test_metrics_count_commands_and_read_the_store(api: Api, game: Game) -> None:
    game.send(game.organiser, {"kind": "deal"}, expect=409)  # refused: out of turn
    response = api.call("GET", "/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert 'sabot_commands_total{kind="seat",outcome="ok"} 3.0' in text  # the game's seats
    assert 'sabot_commands_total{kind="deal",outcome="OutOfTurn"} 1.0' in text
    assert 'sabot_command_seconds_count{kind="open"} 1.0' in text
    assert 'sabot_projection_behind_events{projection="recall"}' in text
    assert "sabot_workers_alive 0.0" in text


def test_metrics_count_the_live_subscribers(api: Api, game: Game) -> None:
    def subscribers() -> str:
        lines = api.call("GET", "/metrics").text.splitlines()
        return next(line for line in lines if line.startswith("sabot_live_subscribers "))

    assert subscribers() == "sabot_live_subscribers 0.0"
    with httpx.stream("GET", f"{api.base_url}/tables/t1/events?after=0", timeout=10) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()  # kept: dropping the iterator closes the stream
        assert next(lines) == "id: 1"
        assert subscribers() == "sabot_live_subscribers 1.0"
    deadline = time.monotonic() + 10
    while subscribers() != "sabot_live_subscribers 0.0":  # the server sees the client leave
        assert time.monotonic() < deadline, subscribers()
        time.sleep(0.05)


@pytest.mark.parametrize("broker", ["redis", "embedded"])
def test_metrics_read_the_depth_of_the_queue(broker: str, postgres_url: str,
                                             tmp_path: Path) -> None:
    queue = f"depth-{uuid.uuid4().hex[:8]}"
    url = ""
    if broker == "redis":
        need_server("Redis", "127.0.0.1", 6379)
        url = REDIS_URL
    producer = make_app(url, home=tmp_path / ".sabot", queue=queue)
    try:
        with serving(a_service(postgres_url), deadlines=DeadlineClock(producer)) as api:
            assert f'sabot_queue_depth{{queue="{queue}"}} 0.0' in api.call("GET", "/metrics").text
            for _ in range(3):  # no worker listens on this queue: they wait
                producer.send_task("sabot.nothing", queue=queue)
            assert f'sabot_queue_depth{{queue="{queue}"}} 3.0' in api.call("GET", "/metrics").text
    finally:
        if url:
            with producer.connection_for_write() as connection:
                client = connection.default_channel.client
                client.delete(queue, *client.keys(f"_kombu.binding*.{queue}"))
        producer.close()
