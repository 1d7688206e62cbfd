"""The HTTP API over real HTTP: uvicorn on a free port, PostgreSQL behind it, httpx in front.

The server's health, readiness and schema, who may do what (a matrix of roles and calls), and
bad input of every kind (each a problem details answer with the right status, and not one
event written). What each caller sees, live events, idempotency and racing requests are in
`test_api_views.py`. The helpers here (`Api`, `serving`, `a_service`, `Game`, the `api` and
`game` fixtures, which `conftest.py` shares) serve the other e2e modules too.

Views are served as they are, kept caught up by a runner (`projections.follower`), which
`serving` runs beside the server as `sabot worker` would; `Api.call` reads a view as a page
that must see what was written does: at the store's head (`?at=`), honouring a 503's
`Retry-After` (`api.view_reader`).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import httpx
import pytest
import uvicorn

from api.app import create_app
from api.cli import main
from api.tokens import Grant, Role, TokenStore
from domain.table.aggregate import Table
from infra.services.tables import TableService, seeds_from
from projections.follower import Follower
from projections.registry import VIEWS
from projections.runner import Runner
from tests.client import CLIENT

pytestmark = pytest.mark.postgres

KEY = bytes(range(32))
PROBLEM = "application/problem+json"
VIEW_READ = re.compile(r"^/tables(/[^/?]+/(rotation|recall|roads))?(\?|$)"
                       r"|^/tournaments/[^/?]+/standings(\?|$)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Api:
    """A running server, its service (to count events) and a token per role."""

    def __init__(self, base_url: str, service: TableService, *, at_head: bool = True) -> None:
        self.base_url = base_url
        self.service = service
        self.store = TokenStore(service.database)
        self.bodies: list[str] = []
        self.at_head = at_head  # read the views at the store's head (`?at=`)

    def token(self, role: Role, player: str | None = None, tables: tuple[str, ...] = ()) -> str:
        grant = Grant(role=role, player=player,
                      tables=frozenset(Table.create_id(t) for t in tables))
        return self.store.issue(grant)

    def call(self, method: str, path: str, token: str | None = None, *,
             json: Any = None, content: bytes | None = None,
             headers: dict[str, str] | None = None) -> httpx.Response:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if method == "GET" and self.at_head and VIEW_READ.match(path) and "at=" not in path:
            path += ("&" if "?" in path else "?") + f"at={self.head()}"
        deadline = time.monotonic() + 20
        while True:
            response = CLIENT.request(method, self.base_url + path, json=json,
                                      content=content, headers=sent)
            if response.status_code != 503 or "retry-after" not in response.headers \
                    or "x-view-position" not in response.headers \
                    or time.monotonic() > deadline:
                break
            time.sleep(float(response.headers["retry-after"]) / 10)  # a view behind
        self.bodies.append(response.text)
        return response

    def head(self) -> int:
        """The last position of the store's log (what a view must reach to show it all)."""
        database = self.service.database
        with database.transaction(write=False) as cursor:
            row = database.execute(cursor, "SELECT MAX({nid}) AS head FROM {stored_events}"
                                   ).fetchone()
        return int(row["head"] or 0)

    def events(self) -> int:
        """Events in the store (counted: notification ids may skip after a lost race)."""
        database = self.service.database
        with database.transaction(write=False) as cursor:
            row = database.execute(cursor, "SELECT count(*) AS n FROM {stored_events}").fetchone()
        return int(row["n"])

    def settled_events(self, quiet: float = 0.5, bound: float = 30.0) -> int:
        """The event count once the writes under way are done (the same over `quiet`
        seconds): what a click started may still be writing when its page says so."""
        count, until = self.events(), time.monotonic() + bound
        while time.monotonic() < until:
            time.sleep(quiet)
            if (now := self.events()) == count:
                return count
            count = now
        raise AssertionError(f"the store kept growing for {bound} s")


@contextmanager
def following(service: TableService) -> Iterator[Follower]:
    """The views of `service`'s store kept caught up, as `sabot worker` keeps them."""
    follower = Follower(Runner(service, VIEWS)).start()
    try:
        yield follower
    finally:
        follower.stop()


@contextmanager
def serving(service: TableService, *, views: bool = True, **options: Any) -> Iterator[Api]:
    """The API on `service` under uvicorn, on a free port, for the duration; its views kept
    caught up beside it unless `views` is False (a server without workers)."""
    with following(service) if views else nullcontext(), _serving(service, **options) as api:
        api.at_head = views
        yield api


@contextmanager
def _serving(service: TableService, **options: Any) -> Iterator[Api]:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(service=service, **options),
                                           host="127.0.0.1", port=port, log_level="warning",
                                           timeout_graceful_shutdown=2))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield Api(f"http://127.0.0.1:{port}", service)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def a_service(url: str) -> TableService:
    service = TableService(url=url, secret_key=KEY)
    service.seed_source = seeds_from(b"api tests")
    return service


@pytest.fixture
def api(postgres_url: str) -> Iterator[Api]:
    with serving(a_service(postgres_url)) as running:
        yield running


class Game:
    """A family-game table (`t1` unless named): alice holds the banker's hand, bob the
    punter's."""

    def __init__(self, api: Api, name: str = "t1") -> None:
        self.api = api
        self.organiser = api.token(Role.ORGANISER)
        self.croupier = api.token(Role.CROUPIER, tables=(name,))
        self.alice = api.token(Role.PLAYER, player="alice")
        self.bob = api.token(Role.PLAYER, player="bob")
        self.carol = api.token(Role.PLAYER, player="carol")
        self.auditor = api.token(Role.AUDITOR)
        opened = api.call("POST", "/tables", self.organiser,
                          json={"name": name, "variant": "simplified",
                                "settings": {"min_stake": 5}})
        assert opened.status_code == 201, opened.text
        self.table_id = opened.json()["table_id"]
        for player in ("alice", "bob", "carol"):
            self.send(self.organiser, {"kind": "seat", "player": player, "chips": 500})

    def send(self, token: str | None, body: dict[str, Any], *, expect: int = 200,
             key: str | None = None) -> httpx.Response:
        if "command_id" not in body and key is None:
            body = {**body, "command_id": uuid.uuid4().hex}
        headers = {"Idempotency-Key": key} if key else None
        response = self.api.call("POST", f"/tables/{self.table_id}/commands", token,
                                 json=body, headers=headers)
        assert response.status_code == expect, response.text
        return response

    def view(self, token: str | None) -> dict[str, Any]:
        response = self.api.call("GET", f"/tables/{self.table_id}", token)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def to_betting(self) -> None:
        self.send(self.croupier, {"kind": "shuffle"})
        self.send(self.bob, {"kind": "contribute", "player": "bob", "entropy": "c0ffee"})
        self.send(self.alice, {"kind": "cut", "player": "alice", "position": 100})
        assert self.view(None)["phase"] == "betting"

    def deal_four(self) -> list[dict[str, Any]]:
        self.send(self.croupier, {"kind": "close-betting"})
        return [self.send(self.croupier, {"kind": "deal"}).json()["events"][0]
                for _ in range(4)]


@pytest.fixture
def game(api: Api) -> Game:
    return Game(api)


# --- health, readiness, schema ------------------------------------------------------


def test_sabot_serve(postgres_url: str, tmp_path: Any) -> None:
    """`sabot serve` runs the API under uvicorn on the database it is given."""
    port = free_port()
    env = {**os.environ, "SABOT_SECRET_KEY": KEY.hex()}
    server = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--database",
         postgres_url], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    try:
        deadline = time.monotonic() + 20
        while True:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            try:
                ready = CLIENT.get(f"http://127.0.0.1:{port}/ready", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "sabot serve did not start"
                time.sleep(0.1)
        assert ready.json() == {"status": "ready", "database": "postgres"}
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_health_ready_and_openapi(api: Api) -> None:
    assert api.call("GET", "/health").json() == {"status": "ok"}
    assert api.call("GET", "/ready").json() == {"status": "ready", "database": "postgres"}
    schema = api.call("GET", "/schema/openapi.json").json()
    assert {"/tables", "/tables/{table}", "/tables/{table}/commands"} <= set(schema["paths"])
    command = schema["paths"]["/tables/{table}/commands"]["post"]
    body = command["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    union = schema["components"]["schemas"][body.rsplit("/", 1)[1]]
    assert union["discriminator"]["propertyName"] == "kind" and len(union["anyOf"]) >= 21
    bet = schema["components"]["schemas"]["Body.PlaceBet"]
    assert "actor" not in bet["properties"] and "command_id" not in bet["required"]
    assert {"401", "403", "409", "422"} <= set(command["responses"])



# --- who may do what ----------------------------------------------------------------

REFUSED_ONLY = {"anonymous": 401, "bad-token": 401, "auditor": 403}


def test_roles_matrix(api: Api, game: Game) -> None:
    """Every role against every kind of call: allowed ones pass auth, refused ones are 401/403
    problems that write nothing."""
    other_croupier = api.token(Role.CROUPIER, tables=("elsewhere",))
    callers: dict[str, str | None] = {
        "organiser": game.organiser, "croupier": game.croupier,
        "other-croupier": other_croupier, "alice": game.alice, "auditor": game.auditor,
        "anonymous": None, "bad-token": "sabot_not-a-real-token",
    }
    official = {"kind": "shuffle"}
    seat = {"kind": "seat", "player": "dave", "chips": 100}
    leave = {"kind": "leave", "player": "carol"}
    auction = {"kind": "award-bank", "player": "alice", "amount": 100, "how": "auction"}
    own_bet = {"kind": "bet", "player": "alice", "spot": "tie", "amount": 5}
    bob_bet = {"kind": "bet", "player": "bob", "spot": "tie", "amount": 5}
    table = f"/tables/{game.table_id}"
    calls: dict[str, tuple[str, str, Any, set[str]]] = {
        "open": ("POST", "/tables", {"name": "t2", "variant": "punto-banco"}, {"organiser"}),
        "view": ("GET", table, None, {"organiser", "croupier", "other-croupier", "alice",
                                      "auditor", "anonymous"}),
        "official": ("POST", table + "/commands", official, {"organiser", "croupier"}),
        "seat": ("POST", table + "/commands", seat, {"organiser"}),
        "auction": ("POST", table + "/commands", auction, {"organiser", "croupier"}),
        "own-bet": ("POST", table + "/commands", own_bet, {"organiser", "croupier", "alice"}),
        "bob-bet": ("POST", table + "/commands", bob_bet, {"organiser", "croupier"}),
        "leave": ("POST", table + "/commands", leave, {"organiser"}),
    }
    for call, (method, path, body, allowed) in calls.items():
        for who, token in callers.items():
            before = api.events()
            sent = {**body, "command_id": f"{call}-{who}"} if body and "kind" in body else body
            response = api.call(method, path, token, json=sent)
            status = response.status_code
            if who in allowed:
                assert status not in (401, 403), (call, who, response.text)
                continue
            expected = REFUSED_ONLY.get(who, 403)
            assert status == expected, (call, who, response.text)
            assert response.headers["content-type"] == PROBLEM
            assert response.json()["status"] == expected
            assert api.events() == before, (call, who)
            if expected == 401:
                assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_actor_comes_from_the_token(game: Game) -> None:
    game.to_betting()
    seated = game.send(game.organiser, {"kind": "seat", "player": "dave", "chips": 50,
                                        "actor": "dave"})
    assert seated.json()["events"][0]["actor"] == "@organiser"
    bet = game.send(game.carol, {"kind": "bet", "player": "carol", "spot": "banker",
                                         "amount": 20, "actor": "@croupier"})
    assert bet.json()["events"][0]["actor"] == "carol"
    closed = game.send(game.croupier, {"kind": "close-betting", "actor": "alice"})
    assert closed.json()["events"][0]["actor"] == "@croupier"


def test_token_cli_prints_once_and_stores_the_hash(api: Api, capsys: pytest.CaptureFixture[str],
                                                    postgres_url: str) -> None:
    opened = api.call("POST", "/tables", api.token(Role.ORGANISER),
                      json={"name": "t9", "variant": "punto-banco"})
    assert opened.status_code == 201  # a croupier serves tables that are open
    code = main(["token", "create", "--role", "croupier", "--table", "t9",
                 "--database", postgres_url])
    token = capsys.readouterr().out.strip()
    assert code == 0 and token.startswith("sabot_")
    with api.service.database.transaction(write=False) as cursor:
        rows = api.service.database.execute(
            cursor, "SELECT token_hash, role, tables FROM {api_tokens}").fetchall()
    assert all(token not in str(dict(row)) for row in rows)
    grant = api.store.grant(token)
    assert grant is not None and grant.role is Role.CROUPIER
    assert grant.tables == {Table.create_id("t9")}
    assert main(["token", "create", "--role", "player", "--database", postgres_url]) == 2
    assert main(["token", "create", "--role", "player", "--player", "@croupier",
                 "--database", postgres_url]) == 2


# --- bad input ------------------------------------------------------------------------

BAD_COMMANDS: list[tuple[str, bytes | dict[str, Any] | list[Any], int, str, str | None]] = [
    ("malformed json", b'{"kind": "bet", ', 400, "malformed-json", None),
    ("not an object", [1, 2], 422, "invalid-field", None),
    ("unknown kind", {"kind": "fly", "command_id": "x1"}, 422, "invalid-field", "kind"),
    ("no kind", {"player": "alice", "command_id": "x2"}, 422, "invalid-field", "kind"),
    ("wrong type", {"kind": "bet", "command_id": "x3", "player": "carol", "spot": "banker",
                    "amount": "ten"}, 422, "invalid-field", "amount"),
    ("unknown spot", {"kind": "bet", "command_id": "x4", "player": "carol", "spot": "moon",
                      "amount": 10}, 422, "invalid-field", "spot"),
    ("missing field", {"kind": "bet", "command_id": "x5", "player": "carol", "amount": 10},
     422, "invalid-field", "spot"),
    ("no command id", {"kind": "close-betting"}, 422, "invalid-field", "command_id"),
    ("empty command id", {"kind": "close-betting", "command_id": ""}, 422, "invalid-field",
     "command_id"),
    ("negative amount", {"kind": "bet", "command_id": "x6", "player": "carol",
                         "spot": "banker", "amount": -50}, 422, "stake-below-minimum", None),
    ("beyond the chips", {"kind": "bet", "command_id": "x7", "player": "carol",
                          "spot": "banker", "amount": 5000}, 422, "chips-short", None),
    ("negative chips", {"kind": "seat", "command_id": "x8", "player": "erin", "chips": -1},
     422, "chips-negative", None),
    ("out of turn", {"kind": "deal", "command_id": "x9"}, 409, "out-of-turn", None),
    ("unknown player", {"kind": "bet", "command_id": "x10", "player": "zed", "spot": "tie",
                        "amount": 5}, 404, "unknown-player", None),
]


@pytest.mark.parametrize(("case", "body", "status", "rule", "field"), BAD_COMMANDS,
                         ids=[c[0] for c in BAD_COMMANDS])
def test_bad_commands_are_problems_and_write_nothing(
    api: Api, game: Game, case: str, body: Any, status: int, rule: str, field: str | None
) -> None:
    game.to_betting()
    before = api.events()
    content = body if isinstance(body, bytes) else None
    response = api.call("POST", f"/tables/{game.table_id}/commands", game.organiser,
                        json=None if content else body, content=content)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert problem["status"] == status and problem["rule"] == rule, problem
    assert problem.get("field") == field, problem
    assert problem["type"] == f"urn:sabot:rule:{rule}" and problem["title"] and problem["detail"]
    assert api.events() == before


BAD_OPENINGS: list[tuple[str, Any, int, str, str | None]] = [
    ("unknown variant", {"name": "b1", "variant": "poker"}, 422, "invalid-field", "variant"),
    ("no name", {"variant": "punto-banco"}, 422, "invalid-field", "name"),
    ("unknown field", {"name": "b2", "variant": "punto-banco", "colour": "green"}, 422,
     "invalid-field", "colour"),
    ("unknown setting", {"name": "b3", "variant": "punto-banco", "settings": {"speed": 2}},
     422, "unknown-setting", "settings.speed"),
    ("setting of the wrong type", {"name": "b4", "variant": "punto-banco",
                                   "settings": {"decks": "six"}}, 422, "invalid-field",
     "settings.decks"),
    ("setting out of range", {"name": "b5", "variant": "punto-banco",
                              "settings": {"decks": 99}}, 422, "settings-decks", None),
    ("table already open", {"name": "t1", "variant": "punto-banco"}, 422, "table-exists", None),
]


@pytest.mark.parametrize(("case", "body", "status", "rule", "field"), BAD_OPENINGS,
                         ids=[c[0] for c in BAD_OPENINGS])
def test_bad_openings_are_problems_and_write_nothing(
    api: Api, game: Game, case: str, body: Any, status: int, rule: str, field: str | None
) -> None:
    before = api.events()
    response = api.call("POST", "/tables", game.organiser, json=body)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert (problem["rule"], problem.get("field")) == (rule, field), problem
    assert api.events() == before


def test_unknown_tables_routes_and_headers(api: Api, game: Game) -> None:
    before = api.events()
    cases = [
        ("POST", "/tables/nowhere/commands", {"kind": "shuffle", "command_id": "u1"}, {}, 404,
         "unknown-table"),
        ("GET", f"/tables/{uuid.uuid4()}", None, {}, 404, "unknown-table"),
        ("GET", "/nothing-here", None, {}, 404, "not-found"),
        ("DELETE", f"/tables/{game.table_id}", None, {}, 405, "method-not-allowed"),
        ("POST", f"/tables/{game.table_id}/commands", {"kind": "shuffle"},
         {"Idempotency-Key": "has spaces in it"}, 400, "bad-request"),
    ]
    for method, path, body, headers, status, rule in cases:
        response = api.call(method, path, game.organiser, json=body, headers=headers)
        assert response.status_code == status, (path, response.text)
        assert response.headers["content-type"] == PROBLEM
        assert response.json()["rule"] == rule
        if headers:
            assert response.json()["field"] == "Idempotency-Key"
    bad_auth = api.call("GET", f"/tables/{game.table_id}", headers={"Authorization": "Basic x"})
    assert bad_auth.status_code == 401 and bad_auth.json()["rule"] == "bad-authorization"
    assert api.events() == before


@pytest.mark.parametrize("entropy", ["zz", "c0ffe", "", "ab" * 65])
def test_bad_entropy_is_refused_and_writes_nothing(api: Api, game: Game, entropy: str) -> None:
    game.send(game.croupier, {"kind": "shuffle"})
    before = api.events()
    response = game.send(game.bob, {"kind": "contribute", "player": "bob", "entropy": entropy},
                         expect=422)
    assert response.json()["rule"] == "shoe-contribution"
    assert api.events() == before
