"""Notices between the processes of one store on PostgreSQL: `notify` in a transaction (sent
at its commit, dropped with its rollback) and a `Listener` thread that LISTENs on the same
channel on its own connection and calls back for each notice (and after each reconnection,
since a notice sent meanwhile is lost). On SQLite both do nothing: a process acts on its own
writes itself, and other processes' caches are bounded by their own staleness."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.sql import SQL, Identifier

from infra.store.database import Database, PostgresDatabase

WAKE_SECONDS = 0.5
"""How often the listener looks whether it was closed."""
RECONNECT_SECONDS = 1.0


def channel(database: PostgresDatabase, name: str) -> str:
    """`name`'s channel for this store's schema (short: a channel is at most 63 bytes)."""
    schema = hashlib.sha256(database.datastore.schema.encode()).hexdigest()[:16]
    return f"sabot_{name}_{schema}"


def notify(database: Database, cursor: Any, name: str) -> None:
    """Notify `name`'s listeners when the transaction of `cursor` commits."""
    if isinstance(database, PostgresDatabase):
        cursor.execute("SELECT pg_notify(%s, '')", (channel(database, name),))


class Listener:
    """A daemon thread calling `on_notice()` for each notice on `name` (PostgreSQL only)."""

    def __init__(self, database: Database, name: str, on_notice: Callable[[], None]) -> None:
        self._database = database
        self._name = name
        self._on_notice = on_notice
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if isinstance(self._database, PostgresDatabase) and self._thread is None:
            self._thread = threading.Thread(target=self._listen, args=(self._database,),
                                            name=f"listen-{self._name}", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._closed.set()
        if self._thread is not None:
            self._thread.join(timeout=WAKE_SECONDS + 5)
            self._thread = None

    def _listen(self, database: PostgresDatabase) -> None:
        kwargs = database.datastore.pool.kwargs
        given = kwargs() if callable(kwargs) else kwargs or {}
        params = {k: v for k, v in given.items() if k != "row_factory"}
        while not self._closed.is_set():
            try:
                with psycopg.connect(autocommit=True, **params) as connection:
                    connection.execute(SQL("LISTEN {}").format(
                        Identifier(channel(database, self._name))))
                    self._on_notice()  # whatever was sent before this LISTEN
                    while not self._closed.is_set():
                        for _ in connection.notifies(timeout=WAKE_SECONDS):
                            self._on_notice()
            except psycopg.Error:
                time.sleep(RECONNECT_SECONDS)
