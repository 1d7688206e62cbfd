"""Who is calling and what they may do: bearer tokens to grants, grants to permissions.

The token comes from the `Authorization: Bearer` header, else from the HttpOnly cookie
`sabot_session` that a sign-in slip sets (`api.sign_in`, `api.routes_sign_in`). A request
authenticated by the cookie that is not a read (GET, HEAD) must carry the header
`X-Requested-With` (the pages' scripts send it on every call): a page of another site can make
a browser send the cookie, but not that header without the CORS preflight this API never
grants (403 `cross-site-request` otherwise); the cookie is also `SameSite=Strict`.

No token at all: the caller is anonymous (may read what the public sees). A header
that is not `Bearer <token>`, a token never issued, expired or revoked: 401. Then, by role:

| role      | open tables | table commands                                   | reads        |
|-----------|-------------|--------------------------------------------------|--------------|
| organiser | yes         | every command, actor `@organiser`                | everything   |
| croupier  | no          | on their tables, all but seat, leave and chip    | public       |
|           |             | moves, actor `@croupier`                         |              |
| player    | no          | their own steps only (`PLAYER_STEPS`, `player`    | public + the |
|           |             | field = themselves), actor = their player id     | hand held    |
| auditor   | no          | none                                             | everything   |
| floor-    | no          | none (opens disputes and approves corrections:   | public       |
| manager   |             | `api.routes_disputes`)                           |              |
| anonymous | no          | none (401)                                       | public       |

The actor of a command always comes from the token, whatever the body says. Command ids
are scoped by who sends them (`scope_command_id`: a player, or an official's token), so
nobody can take a command id before its rightful sender and make the real command a no-op;
`Idempotency-Key`s belong to the token that sent them (`scope_key`, `api.idempotency`).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime

from api.problems import ApiProblem
from api.tokens import Grant, Role, TokenStore
from domain.commands import Command
from infra.store.senders import player_sender

ANONYMOUS = Grant(role=Role.ANONYMOUS)

ACTORS = {Role.ORGANISER: "@organiser", Role.CROUPIER: "@croupier",
          Role.AUDITOR: "@auditor", Role.FLOOR_MANAGER: "@floor-manager"}

PLAYER_STEPS = frozenset({
    "contribute", "cut", "award-bank", "decline-bank", "retire-bank", "bet", "pass-bet", "stake",
    "banco", "decide", "offer-card", "show-down",
})
"""What a player may ask for themselves (taking the bank offered to them is `award-bank`)."""

ORGANISER_STEPS = frozenset({"seat", "leave", "adjust-chips"})
"""Chips enter or leave a table only by the organiser."""

FULL_VIEW = frozenset({Role.ORGANISER, Role.AUDITOR})

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="sabot"'}

SESSION_COOKIE = "sabot_session"
CSRF_HEADER = "X-Requested-With"
READS = frozenset({"GET", "HEAD"})


def credentials(headers: Mapping[str, str], cookies: Mapping[str, str],
                method: str) -> str | None:
    """The `Authorization` header's value, else the sign-in cookie's token as a bearer one
    (a write by cookie without `X-Requested-With`: 403), else None."""
    authorization = headers.get("Authorization")
    if authorization is not None:
        return authorization
    token = cookies.get(SESSION_COOKIE)
    if not token:
        return None
    if method.upper() not in READS and not headers.get(CSRF_HEADER):
        raise ApiProblem(403, f"a request signed in by cookie that changes anything carries "
                         f"the {CSRF_HEADER} header (the pages send it)",
                         rule="cross-site-request")
    return f"Bearer {token}"


def authenticate(tokens: TokenStore, authorization: str | None,
                 generation: int | None = None) -> Grant:
    """The grant of an `Authorization` header's bearer token (anonymous without a header);
    `generation`: the tokens' generation, if the caller read it already this request."""
    if authorization is None:
        return ANONYMOUS
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiProblem(401, "the Authorization header must be `Bearer <token>`",
                         rule="bad-authorization", headers=_CHALLENGE)
    issued = tokens.lookup(token.strip(), generation)
    if issued is None:
        raise ApiProblem(401, "this token is not known", rule="unknown-token",
                         headers=_CHALLENGE)
    refusal = issued.refusal(datetime.now(UTC))
    if refusal is not None:
        raise ApiProblem(401, f"this token is {refusal.removeprefix('token-')}", rule=refusal,
                         headers=_CHALLENGE)
    return issued.grant


def actor_of(grant: Grant) -> str:
    """The actor commands sent with this grant are recorded under."""
    if grant.role is Role.PLAYER:
        assert grant.player is not None
        return grant.player
    return ACTORS[grant.role]


def sender_of(grant: Grant) -> str:
    """Who the command log records as the sender of this grant's commands
    (`infra.store.senders`): the player, whatever token they use, or the official's token."""
    if grant.role is Role.PLAYER:
        assert grant.player is not None
        return player_sender(grant.player)
    return f"{grant.role.value}:{grant.token_id or '-'}"


def require_writer(grant: Grant) -> None:
    """Anonymous callers must authenticate (401); auditors only read (403)."""
    if grant.role is Role.ANONYMOUS:
        raise ApiProblem(401, "this needs a bearer token", rule="unauthenticated",
                         headers=_CHALLENGE)
    if grant.role is Role.AUDITOR:
        raise ApiProblem(403, "an auditor reads, never writes", rule="read-only")
    if grant.role is Role.FLOOR_MANAGER:
        raise ApiProblem(403, "a floor manager sends no table or tournament commands",
                         rule="read-only")


def may_open_tables(grant: Grant) -> None:
    require_writer(grant)
    if grant.role is not Role.ORGANISER:
        raise ApiProblem(403, "only an organiser opens tables", rule="organiser-only")


def may_send(grant: Grant, table_id: uuid.UUID, command: Command) -> None:
    """Refuse (403) a command this grant may not send to this table."""
    require_writer(grant)
    kind = type(command).__struct_config__.tag
    match grant.role:
        case Role.CROUPIER:
            if table_id not in grant.tables:
                raise ApiProblem(403, "this croupier does not serve this table",
                                 rule="not-your-table")
            if kind in ORGANISER_STEPS:
                raise ApiProblem(403, f"{kind}: chips enter or leave a table only by the "
                                 "organiser", rule="organiser-only", field="kind")
        case Role.PLAYER:
            if kind not in PLAYER_STEPS:
                raise ApiProblem(403, f"{kind} is an official's step, not a player's",
                                 rule="official-step", field="kind")
            player = getattr(command, "player", grant.player)
            if player != grant.player:
                raise ApiProblem(403, f"{grant.player} may not act for {player}",
                                 rule="not-yourself", field="player")
            if getattr(command, "how", "taken") != "taken":
                raise ApiProblem(403, "a player takes the bank offered; auctions and lots are "
                                 "the officials'", rule="official-step", field="how")


def scope_command_id(grant: Grant, key: str) -> str:
    """The stored command id of a key sent by this grant: `api/<who>/<key>`, where `who` is
    the player (whatever token they use) or the official's token (two croupiers' same key
    are two commands)."""
    if grant.role is Role.PLAYER:
        who = f"player:{grant.player}"
    elif grant.token_id is not None:
        who = f"{grant.role.value}:{grant.token_id}"
    else:
        who = grant.role.value
    return f"api/{who}/{key}"


def scope_key(grant: Grant, key: str) -> str:
    """An `Idempotency-Key` as the token that sent it owns it."""
    return f"{grant.token_id or grant.role.value}/{key}"
