"""Bearer tokens: issued once, kept only as their SHA-256 in the `api_tokens` table.

A token is `sabot_` followed by 32 random bytes (URL-safe base64). It is printed once when
issued (`sabot token create`); the database keeps its SHA-256, the role it grants, the
player it speaks for (role `player`), the tables it serves (role `croupier`), when it
expires and when it was revoked, so a leaked database or backup gives no usable token. A
token is looked up by its hash, the table's primary key; its public `id` (listed by `sabot
token list`, taken by `sabot token revoke`) is the first 12 hex digits of that hash.

Every token expires (`DEFAULT_LIFETIME`, 90 days, unless issued for another time, at most
`MAX_LIFETIME`). A `TokenStore` keeps the tokens it looked up in memory, tagged with the
tokens' generation (`api_token_generation`, one row that every issue and revocation moves on
in its own transaction) read before them. A lookup reads that one row first (one statement;
PostgreSQL: one round trip, no transaction) and forgets every cached token when it moved,
unless the store keeps the generation it read for `fresh_seconds` (the API:
`GENERATION_FRESH_SECONDS`, so that a request costs no round trip for its token). Such a store
does not wait that long for a revocation: every issue and revocation notifies the store's
`TOKENS` channel (`infra.store.notices`) and clears the caches of this process's stores at
once, and the API listens to that channel and forgets its cache on each notice; so a token
revoked through any process (another API replica, `sabot token revoke`) is refused by every
process at once, and at most `fresh_seconds` later should the notice be lost (SQLite, which
has no notices; a listener reconnecting). The tables are the migrations'
(`infra.store.migrations`).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
import uuid
import weakref
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import msgspec

from domain.actors import is_official
from infra.store.database import Database
from infra.store.notices import notify

PREFIX = "sabot_"
ID_DIGITS = 12
DEFAULT_LIFETIME = timedelta(days=90)
MAX_LIFETIME = timedelta(days=3650)
CACHE_SIZE = 10_000
GENERATION = "SELECT generation FROM {api_token_generation}"
NEXT_GENERATION = "UPDATE {api_token_generation} SET generation = generation + 1"
GENERATION_FRESH_SECONDS = 2.0
TOKENS = "tokens"
"""The notice channel of issues and revocations."""
_STORES: weakref.WeakSet[TokenStore] = weakref.WeakSet()


class Role(StrEnum):
    ORGANISER = "organiser"
    CROUPIER = "croupier"
    PLAYER = "player"
    AUDITOR = "auditor"
    FLOOR_MANAGER = "floor-manager"  # approves corrections with the organiser (disputes)
    ANONYMOUS = "anonymous"


class Grant(msgspec.Struct, frozen=True):
    """What a token allows: a role, the player it speaks for, the tables a croupier serves."""

    role: Role
    player: str | None = None
    tables: frozenset[uuid.UUID] = frozenset()
    token_id: str | None = None  # the listed id of the token that carries this grant

    def check(self) -> Grant:
        if self.role is Role.ANONYMOUS:
            raise ValueError("nobody needs a token to be anonymous")
        if (self.role is Role.PLAYER) != (self.player is not None):
            raise ValueError("a player token names its player (--player), and only it does")
        if self.player is not None and (not self.player or is_official(self.player)):
            raise ValueError("a player id is not empty and does not start with @ "
                             "(ids with @ are officials)")
        if (self.role is Role.CROUPIER) != bool(self.tables):
            raise ValueError("a croupier token names its tables (--table), and only it does")
        return self


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Issued(msgspec.Struct, frozen=True):
    """A token as `sabot token list` shows it: never the token itself."""

    id: str
    grant: Grant
    created_at: str
    expires_at: datetime
    revoked_at: datetime | None

    def refusal(self, now: datetime) -> str | None:
        """Why this token no longer opens anything (a problem rule), or None."""
        if self.revoked_at is not None:
            return "token-revoked"
        if self.expires_at <= now:
            return "token-expired"
        return None


class TokenStore:
    """Issued tokens in the `api_tokens` table of one database."""

    def __init__(self, database: Database, *, fresh_seconds: float = 0.0) -> None:
        self.database = database
        self._cache: dict[str, Issued | None] = {}
        self._generation: int | None = None  # the tokens' generation the cache holds
        self._fresh_seconds = fresh_seconds
        self._read_at = float("-inf")  # when that generation was last read (monotonic)
        self._forgotten = 0  # moved by each `forget`: a lookup under way then caches nothing
        self._lock = threading.Lock()
        _STORES.add(self)

    def forget(self) -> None:
        """Forget every cached token and the generation (a notice: something moved)."""
        with self._lock:
            self._cache.clear()
            self._generation = None
            self._forgotten += 1

    def _moved(self) -> None:
        """This process's stores of the same database forget at once (the others by notice)."""
        for store in list(_STORES):
            if store.database is self.database:
                store.forget()

    def issue(self, grant: Grant, lifetime: timedelta = DEFAULT_LIFETIME) -> str:
        """A new token for `grant`; the caller shows it once, only its hash is kept."""
        grant.check()
        if not timedelta(0) < lifetime <= MAX_LIFETIME:
            raise ValueError(f"a token lives more than 0 s and at most {MAX_LIFETIME.days} days")
        token = PREFIX + secrets.token_urlsafe(32)
        tables = ",".join(sorted(str(t) for t in grant.tables))
        expires = (_now() + lifetime).isoformat()
        with self.database.transaction(write=True) as cursor:
            self.database.execute(
                cursor,
                "INSERT INTO {api_tokens} (token_hash, role, player, tables, expires_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (digest(token), grant.role.value, grant.player, tables, expires),
            )
            self.database.execute(cursor, NEXT_GENERATION)  # a lookup may have cached "none"
            notify(self.database, cursor, TOKENS)
        self._moved()
        return token

    def grant(self, token: str) -> Grant | None:
        """What `token` allows, or None for a token never issued, expired or revoked."""
        issued = self.lookup(token)
        if issued is None or issued.refusal(_now()) is not None:
            return None
        return issued.grant

    def lookup(self, token: str, generation: int | None = None) -> Issued | None:
        """The issued token (valid or not), from the cache unless the tokens' generation
        (read now, unless the caller read it this request) moved since it was cached."""
        if not token.startswith(PREFIX):
            return None
        key = digest(token)
        read_at = None
        with self._lock:
            forgotten = self._forgotten
            if (generation is None and self._generation is not None
                    and time.monotonic() - self._read_at < self._fresh_seconds):
                generation = self._generation
        if generation is None:
            read_at = time.monotonic()
            generation = self._read_generation()  # before the token: a later change moves it
        with self._lock:
            if forgotten != self._forgotten:
                generation = -1  # read before a notice: neither cached nor kept
            elif self._generation is None or generation > self._generation:
                self._cache.clear()
                self._generation = generation
            if read_at is not None and generation == self._generation:
                self._read_at = max(self._read_at, read_at)  # fresh again, cache hit or not
            if generation == self._generation and key in self._cache:
                return self._cache[key]  # (a lookup that read an older one reads the row)
        found = self._select("token_hash = ?", key)
        issued = found[0] if found else None
        with self._lock:
            if self._generation == generation and self._forgotten == forgotten:
                if len(self._cache) >= CACHE_SIZE:
                    self._cache.clear()
                self._cache[key] = issued
        return issued

    def _read_generation(self) -> int:
        row: Any = self.database.read_one(GENERATION)
        return int(row["generation"])

    def issued(self) -> list[Issued]:
        return self._select("1 = 1")

    def revoke(self, token_or_id: str) -> Issued:
        """Revoke a token given itself or its listed id; KeyError when there is none."""
        text = token_or_id.strip()
        if text.startswith(PREFIX):
            where, value = "token_hash = ?", digest(text)
        else:
            if len(text) != ID_DIGITS or any(ch not in "0123456789abcdef" for ch in text):
                raise KeyError(f"{text!r} is neither a token nor a token id "
                               f"({ID_DIGITS} hex digits, see `sabot token list`)")
            where, value = "token_hash LIKE ?", text + "%"
        with self.database.transaction(write=True) as cursor:
            rows = self.database.execute(
                cursor, "UPDATE {api_tokens} SET revoked_at = COALESCE(revoked_at, ?)"
                f" WHERE {where} RETURNING token_hash", (_now().isoformat(), value)).fetchall()
            self.database.execute(cursor, NEXT_GENERATION)
            notify(self.database, cursor, TOKENS)
        self._moved()
        if not rows:
            raise KeyError(f"no token {text if not text.startswith(PREFIX) else '(given)'}")
        return self._select("token_hash = ?", rows[0]["token_hash"])[0]

    def _select(self, where: str, *params: str) -> list[Issued]:
        with self.database.transaction(write=False) as cursor:
            rows = self.database.execute(
                cursor, "SELECT token_hash, role, player, tables, created_at, expires_at,"
                f" revoked_at FROM {{api_tokens}} WHERE {where} ORDER BY created_at",
                params).fetchall()
        return [_issued(row) for row in rows]


def _issued(row: dict[str, object]) -> Issued:
    tables = frozenset(uuid.UUID(t) for t in str(row["tables"]).split(",") if t)
    grant = Grant(role=Role(str(row["role"])), player=row["player"],  # type: ignore[arg-type]
                  tables=tables, token_id=str(row["token_hash"])[:ID_DIGITS])
    expires = row["expires_at"]
    revoked = row["revoked_at"]
    return Issued(id=str(row["token_hash"])[:ID_DIGITS], grant=grant,
                  created_at=str(row["created_at"]),
                  expires_at=(datetime.fromisoformat(str(expires)) if expires
                              else datetime.fromisoformat(str(row["created_at"]))
                              .astimezone(UTC) + DEFAULT_LIFETIME),
                  revoked_at=datetime.fromisoformat(str(revoked)) if revoked else None)


def _now() -> datetime:
    return datetime.now(UTC)
