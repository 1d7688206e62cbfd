"""Decision deadlines through the API: a table with a time limit, driven over HTTP, gets its
default move played by a real celery worker on Redis when nobody decides in time. The worker
runs on the API's store (`--database`): the task carries ids only."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from api.app import create_app
from api.auth import Role
from api.deadlines import DeadlineClock
from api.tokens import Grant, TokenStore
from domain.game.coup import Side
from domain.table.aggregate import Table
from infra.services.tables import TableService
from tests.client import CLIENT
from tests.conftest import REDIS_URL, need_server
from tests.e2e.test_api import free_port
from tests.integration.test_workers import Worker
from workers.app import make_app
from workers.deadlines import ACTOR


@pytest.fixture
def server(postgres_url: str, tmp_path: Path) -> Iterator[tuple[str, str, TableService]]:
    need_server("Redis", "127.0.0.1", 6379)
    queue = f"sabot-test-{uuid.uuid4().hex[:8]}"
    producer = make_app(REDIS_URL, home=tmp_path / ".sabot", queue=queue)
    worker = Worker(tmp_path, "--broker", REDIS_URL, "--queue", queue, "--database", postgres_url,
                    "--no-director")
    service = TableService(url=postgres_url, secret_key=bytes(range(32)))
    app = create_app(service=service, deadlines=DeadlineClock(producer))
    port = free_port()
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    while not uv.started:
        time.sleep(0.02)
    token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER, player=None,
                                                     tables=frozenset()))
    yield f"http://127.0.0.1:{port}", token, service
    uv.should_exit = True
    thread.join(timeout=10)
    worker.stop()
    with producer.connection_for_write() as connection:
        client = connection.default_channel.client
        client.delete(queue, *client.keys(f"_kombu.binding*.{queue}"))
    producer.close()


def deal_to_the_naturals(send: Callable[..., object]) -> None:
    """Through `send(kind, **fields)`, a physical coup at an opened punto banco table: ann
    seated, bets on the punter, four cards dealt (punter 5, banker 4: no natural), so that
    once the naturals are shown the punter's hand must decide."""
    send("seat", player="ann", chips=500)
    send("shuffle", physical=True)
    send("cut", player="ann", position=100)
    send("burn", card="Ah")  # turned: an ace, so one more card is burned
    send("burn", card="9s")
    send("bet", player="ann", spot="punter", amount=50)
    send("close-betting")
    for card in ("2c", "4d", "3c", "Tc"):  # punter 5, banker 4: no natural
        send("deal", card=card)


def test_a_hand_that_does_not_decide_in_time_gets_the_default(
        server: tuple[str, str, TableService]) -> None:
    base, token, service = server
    headers = {"Authorization": f"Bearer {token}"}

    def send(kind: str, **fields: Any) -> None:
        response = CLIENT.post(f"{base}/tables/timed/commands", headers=headers, timeout=10,
                               json={"kind": kind, "command_id": uuid.uuid4().hex, **fields})
        assert response.status_code == 200, response.text

    opened = CLIENT.post(f"{base}/tables", headers=headers, timeout=10, json={
        "name": "timed", "variant": "punto-banco", "settings": {"decision_seconds": 1}})
    assert opened.status_code == 201, opened.text
    deal_to_the_naturals(send)
    send("show-naturals")  # the punter's hand must now draw: nobody sends it

    deadline = time.monotonic() + 20
    view: dict[str, Any] = {}
    while time.monotonic() < deadline:
        view = CLIENT.get(f"{base}/tables/timed", headers=headers, timeout=10).json()
        if any(a["step"] == "deal" for a in view["legal_actions"]):
            break
        time.sleep(0.1)
    assert [a["step"] for a in view["legal_actions"]] == ["deal"], view["legal_actions"]
    asked = [e for e in service.events_of(Table.create_id("timed"))
             if isinstance(e, Table.ThirdCardAsked)]
    assert [(e.actor, e.side) for e in asked] == [(ACTOR, Side.PUNTER)]
