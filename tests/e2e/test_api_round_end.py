"""A croupier-dealt tournament table over HTTP stops at its round's last coup: the croupier
who deals ahead of the director's steps deals the round's coups and no more (close betting →
409 `round-over`), a person's bet on the next coup is refused the same way, nothing is
written; the director's next round opens the table again."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from api.tokens import Role
from domain.table.aggregate import Table
from infra.services.autoplay import Awaited, play_coups
from infra.services.direction import Tick
from infra.services.tournaments import Director
from tests.e2e.test_api import PROBLEM, Api, api  # noqa: F401 - the fixture

pytestmark = pytest.mark.postgres

TABLE = "evening-table-1"
FORMAT = {"variant": "punto-banco", "seats_per_table": 6, "starting_chips": 1000,
          "min_stake": 10, "max_stake": 100, "coups_per_round": 2, "dealing": "croupier",
          "stages": [{"name": "heats", "rounds": 2}]}
CHLOE = frozenset({"chloe"})


def test_the_croupier_cannot_deal_past_the_rounds_last_coup(api: Api) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    croupier = api.token(Role.CROUPIER, tables=(TABLE,))
    chloe = api.token(Role.PLAYER, player="chloe")
    created = api.call("POST", "/tournaments", organiser,
                       json={"name": "evening", "format": FORMAT, "seed": "5eed"})
    assert created.status_code == 201, created.text
    tournament_id = uuid.UUID(created.json()["id"])
    path = f"/tournaments/{tournament_id}"
    for body in ({"player": "chloe"}, {"player": "bot-a", "bot": True},
                 {"player": "bot-b", "bot": True}):
        assert api.call("POST", f"{path}/players", organiser, json=body).status_code == 201
    assert api.call("POST", f"{path}/start", organiser).status_code == 200
    director = Director(api.service)
    state = director.tournaments.state
    while state(tournament_id).step is None:
        assert director.tick(tournament_id) is Tick.ACTED  # round 1, its first step
    table_id = Table.create_id(TABLE)

    def send(token: str, kind: str, **fields: Any) -> httpx.Response:
        return api.call("POST", f"/tables/{TABLE}/commands", token,
                        json={"kind": kind, "command_id": uuid.uuid4().hex, **fields})

    def croupier_deals(until: int) -> None:
        """The croupier's steps and the bots' moves (as the bots choose them), chloe
        betting by her own token when the table waits for her."""
        while True:
            try:
                play_coups(api.service, table_id, b"croupier", "croupier", until, people=CHLOE)
                return
            except Awaited:
                bet = send(chloe, "bet", player="chloe", spot="banker", amount=10)
                assert bet.status_code == 200, bet.text

    croupier_deals(2)  # both coups of the round, ahead of the director's second step
    assert api.service.state(table_id).coup_number == 2
    version, before = api.service.table(table_id).version, api.events()
    for token, kind, fields in ((chloe, "bet", {"player": "chloe", "spot": "banker",
                                               "amount": 10}),
                                (croupier, "bet", {"player": "bot-a", "spot": "punter",
                                                   "amount": 10}),
                                (croupier, "close-betting", {})):
        answer = send(token, kind, **fields)
        assert answer.status_code == 409, answer.text
        assert answer.headers["content-type"].startswith(PROBLEM)
        assert answer.json()["rule"] == "round-over", answer.text
    assert api.service.table(table_id).version == version and api.events() == before

    for _ in range(20):  # the director ends the round's steps and the round, starts the next
        assert director.tick(tournament_id) is not Tick.FINISHED
        if state(tournament_id).round == 2:
            break
    assert state(tournament_id).round == 2
    assert api.service.state(table_id).coup_number == 2  # the director asked for no more
    placed = send(chloe, "bet", player="chloe", spot="banker", amount=10)
    assert placed.status_code == 200, placed.text  # the next round's coup takes bets
