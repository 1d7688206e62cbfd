"""A person at a house-dealt table over HTTP, with the director running beside the API: the
house bots bet at once, the director waits for the person (nothing recorded as hers), she bets
with her own token and the coup is dealt; the tournament goes on to its end, and every event
whose actor is her came from a command she sent."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from api.tokens import Role
from domain.table.aggregate import Table
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.e2e.test_api import KEY, Api, api  # noqa: F401 - the fixture

pytestmark = pytest.mark.postgres

BOTS = ("bot-a", "bot-b", "bot-c")
FORMAT = {"variant": "punto-banco", "seats_per_table": 6, "starting_chips": 1000,
          "min_stake": 10, "max_stake": 100, "coups_per_round": 2, "prizes": [10000],
          "stages": [{"name": "only", "rounds": 1}], "people_bet_seconds": 600}
WAIT = 30.0


@contextmanager
def directing(url: str, tournament_id: uuid.UUID) -> Iterator[None]:
    """A director (its own service on the store) ticking the tournament in a thread."""
    stop = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        service = TableService(url=url, secret_key=KEY)
        try:
            director = Director(service)
            while not stop.is_set() and director.tick(tournament_id) is not Tick.FINISHED:
                stop.wait(0.05)
        except BaseException as error:  # the test fails with it
            errors.append(error)
        finally:
            service.close()

    thread = threading.Thread(target=run, name="director")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    assert not errors, errors


def wait_for(check: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT
    while not (found := check()):
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.1)
    return found


def test_a_person_bets_over_http_at_a_house_dealt_table_and_the_tournament_goes_on(
        api: Api, postgres_url: str) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    chloe = api.token(Role.PLAYER, player="chloe")
    created = api.call("POST", "/tournaments", organiser,
                       json={"name": "night", "format": FORMAT, "seed": "5eed"})
    assert created.status_code == 201, created.text
    tournament_id = uuid.UUID(created.json()["id"])
    path = f"/tournaments/{tournament_id}"
    assert api.call("POST", f"{path}/players", chloe, json={"player": "chloe"}).status_code == 201
    for bot in BOTS:
        assert api.call("POST", f"{path}/players", organiser,
                        json={"player": bot, "bot": True}).status_code == 201
    started = api.call("POST", f"{path}/start", organiser)
    assert started.status_code == 200, started.text
    [line] = started.json()["tables"]
    name = line["name"]
    table_id = Table.create_id(name)

    def table() -> dict[str, Any]:
        answer: dict[str, Any] = api.call("GET", f"/tables/{name}", organiser).json()
        return answer

    def bots_have_bet(coup: int) -> bool:
        view = table()
        return (view["phase"] == "betting" and view["coup_number"] == coup - 1
                and {b["player"] for b in view["bets"]} == set(BOTS))

    sent: list[str] = []
    with directing(postgres_url, tournament_id):
        for coup in (1, 2):
            wait_for(lambda coup=coup: bots_have_bet(coup))
            time.sleep(0.5)  # the director waits for her: betting stays open
            assert table()["phase"] == "betting"
            assert len(hers(api, table_id)) == len(sent)  # nobody bet for her
            command_id = f"chloe-{coup}"
            answer = api.call("POST", f"/tables/{name}/commands", chloe, json={
                "kind": "bet", "command_id": command_id, "player": "chloe",
                "spot": "banker", "amount": 10})
            assert answer.status_code == 200, answer.text
            sent.append(command_id)
            wait_for(lambda coup=coup: table()["coup_number"] >= coup)
        wait_for(lambda: api.call("GET", path).json()["status"] == "finished")
    mine = hers(api, table_id)  # her token's commands, under the API's namespace for it
    assert [e.command_id.rsplit("/", 1)[-1] for e in mine] == sent
    assert {e.command_id.rsplit("/", 1)[0] for e in mine} == {"api/player:chloe"}
    assert [type(e).__name__ for e in mine] == ["BetPlaced", "BetPlaced"]


def hers(api: Api, table_id: uuid.UUID) -> list[Any]:  # noqa: F811
    return [e for e in api.service.events_of(table_id) if e.actor == "chloe"]
