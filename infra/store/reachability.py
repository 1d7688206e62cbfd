"""Whether the servers a process needs answer, said in one line that names them.

`check_database(url)` opens (and closes) one connection to the PostgreSQL a URL names, within
the connect timeout (`SABOT_CONNECT_TIMEOUT`, default 3 s), before any pool is built: a pool
only says "couldn't get a connection after N sec", the driver says why (refused, no such
database, authentication failed). `check_broker(url)` pings a Redis broker the same way.
Either raises `ServiceUnavailable`, whose message names the service and its URL without the
password; SQLite and the embedded broker need no server and always pass.
"""

from __future__ import annotations

from infra.errors import ServiceUnavailable
from infra.settings import connect_timeout, redact_url
from infra.store.urls import store_env


def check_database(url: str, timeout: float | None = None) -> None:
    """Refuse (`ServiceUnavailable`) a PostgreSQL URL whose server does not let us in."""
    env = store_env(url, create=False) if url.startswith("postgres") else {}
    if "POSTGRES_HOST" not in env:
        return
    import psycopg

    try:
        psycopg.connect(host=env["POSTGRES_HOST"], port=int(env["POSTGRES_PORT"]),
                        dbname=env["POSTGRES_DBNAME"], user=env["POSTGRES_USER"],
                        password=env["POSTGRES_PASSWORD"] or None,
                        connect_timeout=max(1, round(timeout or connect_timeout()))).close()
    except psycopg.Error as error:
        raise ServiceUnavailable("PostgreSQL", redact_url(url), _cause(error)) from None


def check_broker(url: str, timeout: float | None = None) -> None:
    """Refuse (`ServiceUnavailable`) a Redis broker URL whose server does not answer a ping."""
    if not url.startswith(("redis://", "rediss://")):
        return
    import redis

    seconds = timeout or connect_timeout()
    try:
        with redis.Redis.from_url(url, socket_connect_timeout=seconds,
                                  socket_timeout=seconds) as client:
            client.ping()
    except (redis.RedisError, ValueError) as error:
        raise ServiceUnavailable("Redis", redact_url(url), _cause(error)) from None


def _cause(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0].removeprefix("connection failed: ") if lines else type(error).__name__
