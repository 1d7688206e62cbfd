"""Bearer tokens: issued once, kept only as their SHA-256 in the `api_tokens` table.

A token is `sabot_` followed by 32 random bytes (URL-safe base64). It is printed once when
issued (`sabot token create`); the database keeps its SHA-256, the role it grants, the
player it speaks for (role `player`) and the tables it serves (role `croupier`), so a leaked
database or backup gives no usable token. A token is looked up by its hash, which is the
table's primary key.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from enum import StrEnum

import msgspec

from domain.actors import is_official
from infra.database import Database

PREFIX = "sabot_"

SCHEMA = {
    "sqlite": "CREATE TABLE IF NOT EXISTS {api_tokens} ("
    " token_hash TEXT PRIMARY KEY,"
    " role TEXT NOT NULL,"
    " player TEXT,"
    " tables TEXT NOT NULL DEFAULT '',"
    " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
    "postgres": "CREATE TABLE IF NOT EXISTS {api_tokens} ("
    " token_hash text PRIMARY KEY,"
    " role text NOT NULL,"
    " player text,"
    " tables text NOT NULL DEFAULT '',"
    " created_at timestamptz NOT NULL DEFAULT now())",
}


class Role(StrEnum):
    ORGANISER = "organiser"
    CROUPIER = "croupier"
    PLAYER = "player"
    AUDITOR = "auditor"
    ANONYMOUS = "anonymous"


class Grant(msgspec.Struct, frozen=True):
    """What a token allows: a role, the player it speaks for, the tables a croupier serves."""

    role: Role
    player: str | None = None
    tables: frozenset[uuid.UUID] = frozenset()

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


class TokenStore:
    """Issued tokens in the `api_tokens` table of one database."""

    def __init__(self, database: Database) -> None:
        self.database = database
        with database.transaction(write=True) as cursor:
            database.execute(cursor, SCHEMA[database.dialect])

    def issue(self, grant: Grant) -> str:
        """A new token for `grant`; the caller shows it once, only its hash is kept."""
        grant.check()
        token = PREFIX + secrets.token_urlsafe(32)
        tables = ",".join(sorted(str(t) for t in grant.tables))
        with self.database.transaction(write=True) as cursor:
            self.database.execute(
                cursor,
                "INSERT INTO {api_tokens} (token_hash, role, player, tables) VALUES (?, ?, ?, ?)",
                (digest(token), grant.role.value, grant.player, tables),
            )
        return token

    def grant(self, token: str) -> Grant | None:
        """What `token` allows, or None for a token never issued."""
        if not token.startswith(PREFIX):
            return None
        with self.database.transaction(write=False) as cursor:
            row = self.database.execute(
                cursor, "SELECT role, player, tables FROM {api_tokens} WHERE token_hash = ?",
                (digest(token),),
            ).fetchone()
        if row is None:
            return None
        tables = frozenset(uuid.UUID(t) for t in row["tables"].split(",") if t)
        return Grant(role=Role(row["role"]), player=row["player"], tables=tables)
