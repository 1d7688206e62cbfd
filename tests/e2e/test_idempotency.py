"""The `Idempotency-Key` header as the IETF draft has it, over real HTTP on PostgreSQL: keys
belong to a token, a key reused for another request is 422, a key whose request still runs
is 409, a replay says so; two concurrent duplicates get the same answer and record once; and 33
clients on one table queue instead of failing."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from api.auth import scope_key
from api.idempotency import REPLAYED, Idempotency, fingerprint
from api.tokens import Role
from tests.e2e.test_api import Api, Game

pytestmark = pytest.mark.postgres


def test_a_key_reused_for_another_request_is_422(api: Api, game: Game) -> None:
    game.to_betting()
    bet = {"kind": "bet", "player": "carol", "spot": "banker", "amount": 20}
    first = game.send(game.carol, bet, key="k1")
    assert REPLAYED not in first.headers
    before = api.events()
    again = game.send(game.carol, dict(reversed(bet.items())), key="k1")  # the same request
    assert again.json() == first.json() and again.headers[REPLAYED] == "true"
    other = game.send(game.carol, {**bet, "amount": 30}, key="k1", expect=422)
    assert other.json()["rule"] == "command-id-reused"
    assert other.json()["field"] == "Idempotency-Key"
    assert api.events() == before


def test_a_command_s_answer_is_kept_in_its_own_transaction(
        api: Api, game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer travels with the command's events (`infra.store.answers`): with the key's
    own write (the path of a command that records nothing, or of a duplicate) failing, a
    command is answered and its retry replays that answer."""
    database = api.service.database

    def refused(*_: object) -> None:
        raise AssertionError("an answer written in a transaction of its own")

    monkeypatch.setattr(database, "write_one", refused)
    game.to_betting()
    bet = {"kind": "bet", "player": "carol", "spot": "banker", "amount": 20}
    first = game.send(game.carol, bet, key="kept")
    before = api.events()
    again = game.send(game.carol, bet, key="kept")
    assert again.headers[REPLAYED] == "true" and again.json() == first.json()
    assert api.events() == before


def test_two_croupiers_keys_are_their_own(api: Api, game: Game) -> None:
    one, two = (api.token(Role.CROUPIER, tables=("t1",)) for _ in range(2))
    first = game.send(one, {"kind": "shuffle"}, key="same")
    assert first.json()["events"][0]["type"] == "ShoeShuffled"
    second = game.send(two, {"kind": "contribute", "player": "bob", "entropy": "ab"},
                       key="same")  # applied, not answered with the other croupier's shuffle
    assert second.json()["events"][0]["type"] == "EntropyContributed"


def test_a_key_whose_request_still_runs_is_409(api: Api, game: Game) -> None:
    body = {"kind": "shuffle"}
    path = f"/tables/{game.table_id}/commands"
    grant = api.store.lookup(game.croupier)
    assert grant is not None
    running = Idempotency(api.service.database)  # another replica took the key a moment ago
    assert running._claim(scope_key(grant.grant, "busy"), fingerprint("POST", path, body)) is None
    before = api.events()
    response = api.call("POST", path, game.croupier, json=body,
                        headers={"Idempotency-Key": "busy"})
    assert response.status_code == 409 and response.json()["rule"] == "idempotency-key-in-use"
    assert response.headers["Retry-After"] == "1" and api.events() == before


def test_two_concurrent_duplicates_get_the_first_answer_and_record_once(
        api: Api, game: Game) -> None:
    """The key is not claimed in a transaction of its own: the second waits on the command
    log's row within the first's transaction, then answers what the first recorded."""
    body = {"kind": "adjust-chips", "player": "alice", "delta": 1, "reason": "twice"}
    before = api.events()
    for round_ in range(5):
        start = threading.Barrier(2)

        def send(_: int, key: str = f"twice-{round_}",
                 start: threading.Barrier = start) -> dict[str, object]:
            start.wait(timeout=10)
            answer = game.send(game.organiser, body, key=key)
            return dict(answer.json())

        with ThreadPoolExecutor(2) as pool:
            first, second = pool.map(send, range(2))
        assert first == second and len(first["events"]) == 1  # type: ignore[arg-type]
    assert api.events() == before + 5
    alice = next(s for s in game.view(None)["seats"] if s["player"] == "alice")
    assert alice["chips"] == 500 + 5


def test_a_refused_request_frees_its_key(api: Api, game: Game) -> None:
    game.send(game.croupier, {"kind": "deal"}, key="early", expect=409)  # out of turn
    assert game.send(game.croupier, {"kind": "deal"}, key="early", expect=409).json()[
        "rule"] == "out-of-turn"  # tried again, not replayed as "in use"


def test_33_clients_on_one_table_queue_instead_of_failing(api: Api, game: Game) -> None:
    clients, each = 33, 3
    before = api.events()

    def adjust(n: int) -> list[int]:
        return [game.send(game.organiser, {"kind": "adjust-chips", "player": "alice",
                                           "delta": 1, "reason": "contention"},
                          key=f"c{n}-{i}-{uuid.uuid4().hex[:6]}", expect=200).status_code
                for i in range(each)]

    with ThreadPoolExecutor(clients) as pool:
        statuses = [s for batch in pool.map(adjust, range(clients)) for s in batch]
    conflicts = statuses.count(409)
    assert conflicts / len(statuses) < 0.01, statuses
    assert api.events() == before + clients * each
    alice = next(s for s in game.view(None)["seats"] if s["player"] == "alice")
    assert alice["chips"] == 500 + clients * each


def test_an_announcement_replayed_with_its_key_says_so(api: Api) -> None:
    organiser = api.token(Role.ORGANISER)
    made = api.call("POST", "/tournaments", organiser,
                    json={"name": "replays", "preset": "punto-banco-heats"})
    assert made.status_code == 201, made.text
    key = {"Idempotency-Key": "announce-1"}
    first = api.call("POST", "/tournaments/replays/announcements", organiser,
                     json={"text": "doors at eight"}, headers=key)
    assert first.status_code == 201 and REPLAYED not in first.headers, first.text
    again = api.call("POST", "/tournaments/replays/announcements", organiser,
                     json={"text": "doors at eight"}, headers=key)
    assert again.status_code == 201 and again.headers[REPLAYED] == "true", again.headers
    assert again.json()["version"] == first.json()["version"]


def test_creating_starting_and_pausing_replayed_with_their_keys_say_so(api: Api) -> None:
    """Each answer is the tournament as it stands, given again under the same key with
    `Idempotent-Replayed: true`, and nothing is recorded twice."""
    organiser = api.token(Role.ORGANISER)

    def twice(path: str, key: str, status: int, body: object = None) -> None:
        headers = {"Idempotency-Key": key}
        first = api.call("POST", path, organiser, json=body or {}, headers=headers)
        assert first.status_code == status and REPLAYED not in first.headers, first.text
        before = api.events()
        again = api.call("POST", path, organiser, json=body or {}, headers=headers)
        assert again.status_code == status and again.headers[REPLAYED] == "true", again.text
        assert again.json()["status"] == first.json()["status"]
        assert api.events() == before, path

    twice("/tournaments", "create-1", 201, {"name": "keys", "preset": "punto-banco-heats"})
    for player in (f"p{n:02d}" for n in range(12)):
        registered = api.call("POST", "/tournaments/keys/players", organiser,
                              json={"player": player, "bot": True})
        assert registered.status_code == 201, registered.text
    twice("/tournaments/keys/start", "start-1", 200)
    twice("/tournaments/keys/pause", "pause-1", 200)
    twice("/tournaments/keys/resume", "resume-1", 200)
