"""Database URLs, and the eventsourcing environment each one stands for.

* `sqlite:///relative/path.db`, `sqlite:////absolute/path.db` (the parent folder is created);
  `sqlite:///:memory:` is a private in-memory database shared by the connections of one
  application (for tests);
* `postgresql://user[:password]@host[:port]/dbname[?schema=name]` (also `postgres://`);
  other query options: `pool_size`, `max_overflow`, `connect_timeout` (seconds to get a
  connection, default 10), `lock_timeout`. A pool keeps `pool_size` connections open (default
  `$POSTGRES_POOL_SIZE`, else 1) and opens up to `max_overflow` more under load (default
  `$POSTGRES_MAX_OVERFLOW`, else 7): an idle process holds one connection a pool, not
  eventsourcing's five, so that PostgreSQL's 100 connections go round many processes.
  Every session ends when left idle inside a transaction for
  `SABOT_IDLE_IN_TRANSACTION_SECONDS` (`infra.settings.idle_in_transaction`).

Anything else raises `UnsupportedDatabaseURL` with a one-line message (passwords redacted).
"""

from __future__ import annotations

import math
import os
import uuid
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from infra.errors import NotAStore, UnsupportedDatabaseURL
from infra.settings import idle_in_transaction, redact_url

MAPPER_TOPIC = "infra.store.mapper:MsgspecMapper"
TRANSCODER_TOPIC = "infra.store.mapper:MsgpackTranscoder"
SQLITE_FACTORY_TOPIC = "infra.store.factories:SabotSQLiteFactory"
POSTGRES_FACTORY_TOPIC = "infra.store.factories:SabotPostgresFactory"

_POSTGRES_OPTIONS = {
    "schema": "POSTGRES_SCHEMA",
    "pool_size": "POSTGRES_POOL_SIZE",
    "max_overflow": "POSTGRES_MAX_OVERFLOW",
    "connect_timeout": "POSTGRES_CONNECT_TIMEOUT",
    "lock_timeout": "POSTGRES_LOCK_TIMEOUT",
}
CONNECT_TIMEOUT = 10  # seconds to get a connection (eventsourcing's default is 30)
POOL_SIZE = 1  # connections a pool keeps open (eventsourcing's default is 5)
MAX_OVERFLOW = 7  # connections it may open beyond those under load (eventsourcing's: 10)
_EXAMPLES = "use sqlite:///PATH or postgresql://USER@HOST:PORT/DBNAME?schema=NAME"


def store_env(url: str, *, create: bool = True) -> dict[str, str]:
    """The eventsourcing environment of an `Application` (or a factory) on this database."""
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme == "sqlite":
        env = _sqlite_env(url, create=create)
    elif scheme in ("postgresql", "postgres"):
        env = _postgres_env(url)
    else:
        shown = scheme or url
        raise UnsupportedDatabaseURL(
            f"unsupported database URL {redact_url(url)!r} ({shown!r}): {_EXAMPLES}"
        )
    env.update(
        MAPPER_TOPIC=MAPPER_TOPIC,
        TRANSCODER_TOPIC=TRANSCODER_TOPIC,
        CREATE_TABLE="yes" if create else "no",
    )
    return env


def sqlite_path(url: str) -> str:
    """The file (or `:memory:`) a `sqlite:///` URL names."""
    rest = url[len("sqlite://") :]
    if not rest.startswith("/") or len(rest) == 1:
        raise UnsupportedDatabaseURL(f"a SQLite URL needs a path after sqlite:///: {url!r}")
    path, _, query = rest[1:].partition("?")
    if query:
        raise UnsupportedDatabaseURL(f"a SQLite URL takes no options: {url!r}")
    return path


def _sqlite_env(url: str, *, create: bool) -> dict[str, str]:
    path = sqlite_path(url)
    if path == ":memory:":
        name = f"file:sabot-{uuid.uuid4().hex}?mode=memory&cache=shared"
    else:
        file = Path(path)
        if create:
            file.parent.mkdir(parents=True, exist_ok=True)
        elif not file.is_file():
            raise NotAStore(f"no SQLite database at {path}")
        name = str(file)
    return {"PERSISTENCE_MODULE": SQLITE_FACTORY_TOPIC, "SQLITE_DBNAME": name}


def _postgres_env(url: str) -> dict[str, str]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        message = f"malformed PostgreSQL URL {redact_url(url)!r}: {error}"
        raise UnsupportedDatabaseURL(message) from None
    dbname = unquote(parts.path.lstrip("/"))
    if not dbname or "/" in dbname:
        raise UnsupportedDatabaseURL(
            f"a PostgreSQL URL needs one database name: {redact_url(url)!r} ({_EXAMPLES})"
        )
    env = {
        "PERSISTENCE_MODULE": POSTGRES_FACTORY_TOPIC,
        "POSTGRES_DBNAME": dbname,
        "POSTGRES_HOST": parts.hostname or "localhost",
        "POSTGRES_PORT": str(port or 5432),
        "POSTGRES_USER": unquote(parts.username or "postgres"),
        "POSTGRES_PASSWORD": unquote(parts.password or ""),
        "POSTGRES_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT),
        "POSTGRES_POOL_SIZE": os.environ.get("POSTGRES_POOL_SIZE") or str(POOL_SIZE),
        "POSTGRES_MAX_OVERFLOW": os.environ.get("POSTGRES_MAX_OVERFLOW") or str(MAX_OVERFLOW),
        # every pooled session: `SET idle_in_transaction_session_timeout` (whole seconds)
        "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": str(math.ceil(idle_in_transaction())),
    }
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in _POSTGRES_OPTIONS:
            known = ", ".join(sorted(_POSTGRES_OPTIONS))
            raise UnsupportedDatabaseURL(
                f"unknown option {key!r} in PostgreSQL URL {redact_url(url)!r} (known: {known})"
            )
        env[_POSTGRES_OPTIONS[key]] = value
    return env
