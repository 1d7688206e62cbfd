"""The tables resource: open a table, see it as the caller may, send it one command.

    POST /tables                      open a table (organiser)          -> 201 Recorded
    GET  /tables/{table}              the table as the caller may see it -> 200 TableView
    POST /tables/{table}/commands     one domain command (kind-tagged)   -> 200 Recorded

`{table}` is a table's UUID or its name. A command's `Idempotency-Key` header, when present,
is its command id (else the body's `command_id`); a key sent again answers what it answered
the first time and records nothing (`api.idempotency`, which takes a body's `command_id` as
the key when no header gives one: the same key with another body is 422, while its first
request runs 409). The body's `actor` is ignored: the token says who acts.
The service is synchronous (psycopg's pool, SQLite): its calls run in worker threads. What
follows a command (live push, a decision's deadline) is the service's to dispatch
(`infra.store.outbox`), not the route's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import msgspec
from anyio import to_thread
from litestar import Controller, Request, get, post
from litestar.datastructures import State
from litestar.params import HeaderParameter, PathParameter

from api import auth
from api.idempotency import Idempotency, fingerprint
from api.openapi import (
    BEARER,
    BEARER_OR_ANONYMOUS,
    CommandOperation,
    OpenTableOperation,
    problems,
)
from api.problems import ApiProblem, invalid
from api.schemas import OpenTable, Recorded, TableView
from api.tokens import Grant, TokenStore
from api.visibility import table_view, visible_events
from domain.game.settings import TableSettings
from domain.limits import MAX_COMMAND_ID, PRINTABLE
from domain.table.commands import TableCommand
from infra.services.references import table_id_of
from infra.services.tables import Recorded as Recording
from infra.services.tables import TableService
from infra.store.answers import KeptAnswer
from infra.store.senders import send_as

if TYPE_CHECKING:
    from api.metrics import Metrics

T = TypeVar("T")

IdempotencyKey = Annotated[
    str | None,
    HeaderParameter(name="Idempotency-Key", required=False, min_length=1, max_length=200,
                    pattern=r"^[\x21-\x7e]+$",
                    description="the command id (scoped to the caller); a retry sends it again"),
]
TableRef = Annotated[str, PathParameter(description="the table's UUID or its name")]

_HIDDEN_CARDS = frozenset({"CardDealt", "CardBurned"})


async def blocking(fn: Callable[..., T], *args: Any) -> T:
    return await to_thread.run_sync(fn, *args)


async def grant_of(request: Request[Any, Any, State]) -> Grant:
    """The caller's grant, from the `Authorization` header (the OpenAPI `bearer` scheme) or
    the sign-in cookie (`api.auth.credentials`). The commands the rest of the request
    applies are recorded as sent by it (`infra.store.senders`)."""
    tokens: TokenStore = request.app.state.tokens
    grant = await blocking(auth.authenticate, tokens, credentials_of(request))
    send_as(auth.sender_of(grant))
    return grant


def credentials_of(request: Request[Any, Any, State]) -> str | None:
    return auth.credentials(request.headers, request.cookies, request.method)


FRESHNESS = ("SELECT (SELECT generation FROM {api_token_generation}) AS generation,"
             " (SELECT MAX(originator_version) FROM {stored_events} WHERE originator_id = ?)"
             " AS head")


def freshness(service: TableService, table_id: uuid.UUID) -> tuple[int | None, int | None]:
    """The tokens' generation and the table's last version, in one round trip: what a view
    needs to know that its cached token and kept table are current. (None, None) when the
    table may live in another database (`infra.store.homes`): each is then read on its own."""
    if len(service.home_databases()) > 1:
        return None, None
    row = service.database.read_one(FRESHNESS, (service.database.to_db_id(table_id),))
    head = row["head"]
    return int(row["generation"]), None if head is None else int(head)


def settings_of(body: OpenTable) -> TableSettings:
    """The variant's defaults with the body's overrides; an unknown setting is refused."""
    known = set(TableSettings.__struct_fields__) - {"variant"}
    for name in body.settings:
        if name not in known:
            raise ApiProblem(422, f"no setting named {name!r} (known: {', '.join(sorted(known))})",
                             rule="unknown-setting", field=f"settings.{name}")
    try:
        return TableSettings.default(body.variant, **body.settings)
    except msgspec.ValidationError as error:
        raise invalid(error, "settings") from None


def body_command_id(raw: dict[str, Any]) -> Any:
    """The body's own `command_id`, refused (422, naming it) when a string that is not 1 to
    `MAX_COMMAND_ID` printable characters: it may become the request's idempotency key, read
    before the command is decoded."""
    given = raw.get("command_id")
    if isinstance(given, str) and not (0 < len(given) <= MAX_COMMAND_ID
                                       and re.fullmatch(PRINTABLE, given)):
        raise ApiProblem(422, f"a command id is 1 to {MAX_COMMAND_ID} printable characters",
                         rule="invalid-field", field="command_id")
    return given


def command_of(raw: Any, grant: Grant, key: str | None) -> TableCommand:
    """The domain command of a decoded body, its id scoped to the caller, its actor theirs."""
    if not isinstance(raw, dict):
        raise ApiProblem(422, "a command is a JSON object with a `kind`", rule="invalid-field")
    given = body_command_id(raw)
    if key is not None:
        if "command_id" in raw and not isinstance(given, str):
            raise ApiProblem(422, "a command id is a string", rule="invalid-field",
                             field="command_id")
        raw["command_id"] = key
    if isinstance(raw.get("command_id"), str):
        raw["command_id"] = auth.scope_command_id(grant, raw["command_id"])
    raw["actor"] = auth.actor_of(grant)
    try:
        command: TableCommand = msgspec.convert(raw, TableCommand)
    except msgspec.ValidationError as error:
        raise invalid(error) from None
    return command


Respond = Callable[[KeptAnswer[Recorded] | None], Recorded]
"""A request's answer, made with the way to keep it with its command (None: not kept so)."""


async def once(request: Request[Any, Any, State], grant: Grant, key: str | None, raw: Any,
               status: int, respond: Respond, *, applied_once: bool = False) -> Recorded:
    """`respond(None)` in a worker thread (it may block on the store), under the IETF
    `Idempotency-Key` rules when the request has a key, in the same thread (a replayed answer
    comes as a litestar `Response` holding the first answer's body), counted and timed by
    its kind (`api.metrics`); `applied_once`: the command log applies `respond`'s command once
    by the key, so the key is not claimed beforehand, and the answer is kept with the command
    (`Idempotency.run_applied_once`)."""
    kind = raw.get("kind") if isinstance(raw, dict) and status == 200 else "open"
    metrics: Metrics = request.app.state.metrics
    if key is None:
        return cast(Recorded, await metrics.timed(str(kind), lambda: blocking(respond, None)))
    keys: Idempotency = request.app.state.idempotency
    scoped, asked = auth.scope_key(grant, key), fingerprint(request.method, request.url.path, raw)
    if applied_once:
        answer = await metrics.timed(str(kind), lambda: blocking(
            lambda: keys.run_applied_once(scoped, asked, status, respond)))
    else:
        answer = await metrics.timed(str(kind), lambda: blocking(
            lambda: keys.run(scoped, asked, status, lambda: respond(None))))
    return cast(Recorded, answer)


class TablesController(Controller):
    path = "/tables"
    tags = ["tables"]  # noqa: RUF012 (litestar's own attribute)

    @post("/", status_code=201, summary="Open a table (organiser)", security=BEARER,
          operation_class=OpenTableOperation, responses=problems(400, 401, 403, 409, 413, 422))
    async def open_table(self, request: Request[Any, Any, State],
                         idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        auth.may_open_tables(grant)
        raw = await request.json()

        service = self._service(request)

        def open_it(_: KeptAnswer[Recorded] | None) -> Recorded:
            try:
                body = msgspec.convert(raw, OpenTable)
            except msgspec.ValidationError as error:
                raise invalid(error) from None
            settings = settings_of(body)
            command_id = auth.scope_command_id(grant, idempotency_key or f"open/{uuid.uuid4()}")
            recorded = service.open_table(body.name, settings, command_id=command_id,
                                          tournament=body.tournament, actor=auth.actor_of(grant))
            return Recorded(recorded.table_id, recorded.version, recorded.events,
                            recorded.position)

        return await once(request, grant, idempotency_key, raw, 201, open_it)

    @get("/{table:str}", summary="A table as the caller may see it",
         security=BEARER_OR_ANONYMOUS, responses=problems(400, 401, 404))
    async def show_table(self, request: Request[Any, Any, State], table: TableRef) -> TableView:
        tokens: TokenStore = request.app.state.tokens
        service = self._service(request)
        authorization = credentials_of(request)

        def show() -> TableView:  # the token and the table in one worker thread
            table_id = table_id_of(table)
            generation, head = freshness(service, table_id)
            grant = auth.authenticate(tokens, authorization, generation)
            seen = service.table_at(table_id, head)
            return table_view(seen, grant, service.room_of(seen))

        return await blocking(show)

    @post("/{table:str}/commands", status_code=200, summary="Send a table one command",
          operation_class=CommandOperation, security=BEARER,
          responses=problems(400, 401, 403, 404, 409, 413, 422))
    async def send_command(self, request: Request[Any, Any, State], table: TableRef,
                           idempotency_key: IdempotencyKey) -> Recorded:
        grant = await grant_of(request)
        auth.require_writer(grant)
        table_id = table_id_of(table)
        raw = await request.json()

        service = self._service(request)

        def answer_of(recorded: Recording) -> Recorded:
            events = recorded.events
            if any(e["type"] in _HIDDEN_CARDS for e in events):
                state = recorded.state
                if state is None:  # a command id sent again: its first answer, not the table
                    state = service.state(table_id)
                events = visible_events(state, grant, events)
            return Recorded(recorded.table_id, recorded.version, events, recorded.position)

        def send(answer: KeptAnswer[Recorded] | None) -> Recorded:
            command = command_of(raw, grant, idempotency_key)
            auth.may_send(grant, table_id, command)
            return answer_of(service.execute(
                table_id, command, answer=None if answer is None else answer.given(answer_of)))

        body_id = body_command_id(raw) if isinstance(raw, dict) else None
        key = idempotency_key or (body_id if isinstance(body_id, str) and body_id else None)
        return await once(request, grant, key, raw, 200, send, applied_once=True)

    @staticmethod
    def _service(request: Request[Any, Any, State]) -> TableService:
        service: TableService = request.app.state.service
        return service
