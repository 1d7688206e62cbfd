"""`GET /metrics` over real HTTP: commands counted and timed by kind and outcome, the
projections' lag and the workers alive, in Prometheus's text format."""

from __future__ import annotations

import pytest

from tests.e2e.test_api import Api, Game

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
