"""The HTTP API over real HTTP (`test_api`'s server): what each caller sees of the cards and
of the seeds, at once and live (server-sent events, another process's writes), and how
commands land: idempotency through the `Idempotency-Key` header, racing requests.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from eventsourcing.persistence import OperationalError

from api import live_readers
from api.tokens import Role
from domain.table.commands import ShuffleShoe
from infra.services.tables import Conflict, TableService
from infra.store.live_push import RedisWake
from infra.store.outbox import Wake
from tests.e2e.test_api import KEY, PROBLEM, Api, Game, a_service, serving

pytestmark = pytest.mark.postgres


# --- what each caller sees ------------------------------------------------------------


def hands(view: dict[str, Any]) -> dict[str, list[str | None]]:
    return {h["side"]: h["cards"] for h in view["coup"]["hands"]}


def test_face_down_cards_only_for_their_holder(api: Api, game: Game) -> None:
    game.to_betting()
    dealt = game.deal_four()
    assert all(e["type"] == "CardDealt" and e["card"] is None for e in dealt)  # the croupier's
    truth = hands(game.view(game.auditor))
    assert all(c is not None for cards in truth.values() for c in cards)
    assert hands(game.view(game.organiser)) == truth
    assert hands(game.view(game.bob)) == {"punter": truth["punter"], "banker": [None, None]}
    assert hands(game.view(game.alice)) == {"punter": [None, None], "banker": truth["banker"]}
    for outsider in (None, game.carol, game.croupier):
        view = game.view(outsider)
        assert hands(view) == {"punter": [None, None], "banker": [None, None]}
        assert all(h["point"] is None for h in view["coup"]["hands"])
    # Nobody's view holds the shoe's cards, and a caller's events hide what they may not see.
    assert "dealt" not in game.view(game.auditor)["shoe"]
    early = game.send(game.bob, {"kind": "decide", "side": "punter", "draw": True}, expect=409)
    assert early.json()["rule"] == "out-of-turn"
    game.send(game.croupier, {"kind": "show-naturals"})
    awaited = game.view(game.auditor)["legal_actions"]
    assert awaited[0]["step"] in ("draw", "stand")  # no natural in this deal: bob decides
    assert game.view(game.bob)["legal_actions"] == awaited  # draw/stand, forced or not
    assert game.view(None)["legal_actions"] == [  # the rail learns nothing of bob's point
        {"step": "decide", "actor": "bob", "side": "punter", "forced": False}]
    while game.view(None)["phase"] == "playing":
        action = game.view(game.auditor)["legal_actions"][0]
        holder = {"punter": game.bob, "banker": game.alice}.get(action["side"] or "")
        match action["step"]:
            case "draw" | "stand" if holder is not None:
                game.send(holder, {"kind": "decide", "side": action["side"],
                                   "draw": action["step"] == "draw"})
            case "draw" | "stand":
                game.send(game.croupier, {"kind": "decide", "side": action["side"],
                                          "draw": action["step"] == "draw"})
            case step:
                game.send(game.croupier, {"kind": step})
    settled = hands(game.view(None))
    assert all(c is not None for cards in settled.values() for c in cards)  # turned over
    assert {s: cards[:2] for s, cards in settled.items()} == truth


def test_no_seed_before_its_reveal(api: Api, game: Game) -> None:
    """Play a whole taille of a small shoe; the seed shows only in its reveal event."""
    api.call("POST", "/tables", game.organiser,
             json={"name": "tiny", "variant": "punto-banco",
                   "settings": {"decks": 1, "cut_card_from_end": 40, "burn": "none"}})
    tiny = "/tables/tiny/commands"
    for player in ("alice", "bob"):
        api.call("POST", tiny, game.organiser,
                 json={"kind": "seat", "player": player, "chips": 1000,
                       "command_id": f"seat-{player}"})
    api.call("POST", tiny, game.organiser, json={"kind": "shuffle", "command_id": "shuffle"})
    commitment = api.call("GET", "/tables/tiny")
    seed_hex = api.service.vault.unseal(commitment.json()["shoe"]["commitment"]).hex()
    api.call("POST", tiny, game.organiser,
             json={"kind": "cut", "player": "alice", "position": 7, "command_id": "cut"})
    revealed: list[dict[str, Any]] = []
    for step in range(200):
        view = api.call("GET", "/tables/tiny", game.auditor).json()
        if view["phase"] == "no-shoe":
            break
        betting_done = view["phase"] == "betting" and view["bets"]
        action = view["legal_actions"][1 if betting_done else 0]
        body: dict[str, Any] = {"kind": action["step"], "command_id": f"s{step}"}
        if action["step"] == "bet":
            body.update(player="bob", spot="punter", amount=10)
        elif action["step"] in ("draw", "stand"):
            body.update(kind="decide", side=action["side"], draw=action["step"] == "draw")
        response = api.call("POST", tiny, game.organiser, json=body)
        assert response.status_code == 200, response.text
        revealed += [e for e in response.json()["events"] if e["type"] == "ShoeSeedRevealed"]
        if not revealed:
            assert seed_hex not in "".join(api.bodies)
    assert [e["seed"] for e in revealed] == [seed_hex]
    assert view["coup_number"] > 3


# --- idempotency ----------------------------------------------------------------------


def test_idempotency_key_applies_a_command_once(api: Api, game: Game) -> None:
    game.to_betting()
    bet = {"kind": "bet", "player": "carol", "spot": "banker", "amount": 20}
    first = game.send(game.carol, bet, key="carol-bet-1")
    after_first = api.events()
    again = game.send(game.carol, bet, key="carol-bet-1")
    assert again.json() == first.json()
    assert api.events() == after_first
    assert [b["amount"] for b in game.view(None)["bets"]] == [20]
    # The key is the command id (the body's is overridden), scoped to the caller:
    assert first.json()["events"][0]["command_id"] == "api/player:carol/carol-bet-1"
    # so another caller's same key is another command, and cannot pre-empt this one.
    other = game.send(game.organiser, {**bet, "amount": 30}, key="carol-bet-1")
    assert other.json()["events"][0]["amount"] == 30
    # A key already used on another table is refused (by the service) rather than answered.
    api.call("POST", "/tables", game.organiser, json={"name": "t3", "variant": "punto-banco"})
    reused = api.call("POST", "/tables/t3/commands", game.organiser,
                      json={"kind": "shuffle"}, headers={"Idempotency-Key": "carol-bet-1"})
    assert reused.status_code == 422 and reused.json()["rule"] == "command-id-reused"


def test_opening_with_an_idempotency_key_opens_once(api: Api, game: Game) -> None:
    body = {"name": "t4", "variant": "chemin-de-fer", "settings": {"min_stake": 10}}
    first = api.call("POST", "/tables", game.organiser, json=body,
                     headers={"Idempotency-Key": "open-t4"})
    after_first = api.events()
    again = api.call("POST", "/tables", game.organiser, json=body,
                     headers={"Idempotency-Key": "open-t4"})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and api.events() == after_first
    assert first.json()["events"][0]["settings"]["min_stake"] == 10
    without_key = api.call("POST", "/tables", game.organiser, json=body)
    assert without_key.status_code == 422 and without_key.json()["rule"] == "table-exists"


def test_a_lost_race_is_409(api: Api, game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    def always_beaten(*_: Any, **__: Any) -> None:
        raise Conflict("the table changed under this command too often; try again",
                       rule="conflict")

    monkeypatch.setattr(api.service, "execute", always_beaten)
    response = game.send(game.croupier, {"kind": "shuffle"}, expect=409)
    assert response.json()["rule"] == "conflict"


def test_a_huge_body_is_refused(api: Api, game: Game) -> None:
    before = api.events()
    response = api.call("POST", f"/tables/{game.table_id}/commands", game.organiser,
                        content=b'{"kind": "seat", "player": "' + b"x" * 100_000 + b'"}')
    assert response.status_code == 413 and response.headers["content-type"] == PROBLEM
    assert api.events() == before



# --- live -------------------------------------------------------------------------------


def listen(api: Api, path: str, token: str | None, until: int,
           into: queue.Queue[tuple[float, dict[str, Any]]]) -> None:
    """Read server-sent events until `until` events have come (each with its arrival time)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    got = 0
    with httpx.stream("GET", api.base_url + path, headers=headers, timeout=20) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("data:"):
                into.put((time.monotonic(), json.loads(line[5:])))
                got += 1
                if got == until:
                    return


def test_live_events_as_each_caller_may_see_them(api: Api, game: Game,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 60.0)  # only a wake-up can deliver in time
    game.to_betting()
    version = game.view(None)["version"]
    public: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    bobs: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    path = f"/tables/{game.table_id}/events"
    readers = [threading.Thread(target=listen, args=(api, path, None, 5, public)),
               threading.Thread(target=listen, args=(api, f"{path}?after={version}", game.bob,
                                                     5, bobs))]
    for reader in readers:
        reader.start()
    time.sleep(0.5)  # both subscribed
    dealt = game.deal_four()
    for reader in readers:
        reader.join(timeout=15)
        assert not reader.is_alive()
    seen = [public.get_nowait() for _ in range(5)]
    assert [e["type"] for _, e in seen] == ["BettingClosed"] + ["CardDealt"] * 4
    assert all(e["card"] is None for _, e in seen[1:])
    bob_sees = [bobs.get_nowait()[1] for _ in range(5)]
    assert [e["card"] is not None for e in bob_sees[1:]] == [True, False, True, False]
    assert [e["side"] for e in bob_sees[1:]] == [e["side"] for e in dealt]
    replay = api.call("GET", f"{path}?after=abc")
    assert replay.status_code == 400 and replay.headers["content-type"] == PROBLEM
    assert api.call("GET", "/tables/nowhere/events").status_code == 404


def test_a_store_that_does_not_answer_is_503(api: Api, game: Game,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def down(*_: Any) -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(api.service.database, "read_one", down)  # the request's first read
    response = api.call("GET", f"/tables/{game.table_id}")
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert response.json()["rule"] == "store-unavailable"


def test_a_view_shows_another_process_s_write_at_once(api: Api, game: Game) -> None:
    """The view's one read says the kept table is behind: it reads the newer events."""
    before = game.view(game.organiser)
    with TableService(url=api.service.database_url, secret_key=KEY) as other:
        other.execute(uuid.UUID(game.table_id),
                      ShuffleShoe(command_id="from-elsewhere", actor="@system"))
    after = game.view(game.organiser)
    assert after["version"] > before["version"]
    assert before["shoe"] is None and after["shoe"] is not None


def test_live_events_written_by_another_process(api: Api, game: Game,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Events not sent through this API (a worker, the CLI) arrive by the poll."""
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 0.3)
    got: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
    reader = threading.Thread(target=listen,
                              args=(api, f"/tables/{game.table_id}/events", None, 1, got))
    reader.start()
    time.sleep(0.5)
    api.service.execute(uuid.UUID(game.table_id),
                        ShuffleShoe(command_id="from-a-worker", actor="@system"))
    reader.join(timeout=10)
    assert got.get_nowait()[1]["type"] == "ShoeShuffled"


@pytest.mark.redis
def test_a_write_by_a_worker_wakes_live_pages_at_once(postgres_url: str, redis_url: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's service publishes its commands' wake-ups (from the outbox) on Redis, where
    the API's channels listen: no poll needed."""
    monkeypatch.setattr(live_readers, "POLL_SECONDS", 60.0)  # only a wake-up can deliver in time
    with serving(a_service(postgres_url), broker_url=redis_url) as on_redis:
        game = Game(on_redis)
        got: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        reader = threading.Thread(target=listen, args=(
            on_redis, f"/tables/{game.table_id}/events", None, 1, got))
        reader.start()
        time.sleep(0.5)
        with a_service(postgres_url) as worker:
            worker.effects.on(Wake, RedisWake(redis_url))
            worker.execute(uuid.UUID(game.table_id),
                           ShuffleShoe(command_id="from-a-worker", actor="@system"))
        reader.join(timeout=15)
        assert not reader.is_alive()
        assert got.get_nowait()[1]["type"] == "ShoeShuffled"


def test_racing_requests(api: Api, game: Game) -> None:
    """Parallel requests: distinct commands all land (the service retries), the same key sent
    at once by several requests is applied once, and nobody gets a 500."""
    game.to_betting()
    players = [f"p{i}" for i in range(6)]
    for player in players:
        game.send(game.organiser, {"kind": "seat", "player": player, "chips": 100})
    tokens = {p: api.token(Role.PLAYER, player=p) for p in players}
    before = api.events()

    def bet(player: str) -> int:
        return game.send(tokens[player], {"kind": "bet", "player": player, "spot": "tie",
                                          "amount": 5}).status_code

    def same_key(_: int) -> dict[str, Any]:
        response = api.call("POST", f"/tables/{game.table_id}/commands", game.carol,
                            json={"kind": "bet", "player": "carol", "spot": "banker",
                                  "amount": 10}, headers={"Idempotency-Key": "once"})
        assert response.status_code in (200, 409), response.text
        body: dict[str, Any] = response.json()
        return body

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(bet, players)) == [200] * len(players)
        answers = list(pool.map(same_key, range(6)))
    applied = [a for a in answers if "events" in a]
    assert applied and all(a == applied[0] for a in applied)
    assert api.events() == before + len(players) + 1
    assert sorted(b["player"] for b in game.view(None)["bets"]) == sorted([*players, "carol"])
