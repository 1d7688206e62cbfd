"""Notices between the processes of one store on PostgreSQL: `notify` in a transaction (sent
at its commit, dropped with its rollback) and a `Listener` thread that LISTENs on the same
channel on its own connection and calls back for each notice (and after each reconnection,
since a notice sent meanwhile is lost). On SQLite both do nothing: a process acts on its own
writes itself, and other processes' caches are bounded by their own staleness.

`positions(database, name)`: the positions published on one channel of one store (`COMMITS`:
the last notification id of each committed insert; `VIEWS`: where each batch of the views'
runner left them), kept in this process and woken at once by a publication of this process or,
on PostgreSQL, by another process's (`NOTIFY` with the position as payload). The writer
publishes after its commit, from a thread of its own that sends the highest position pending
(one `pg_notify` for many commits under load): a `NOTIFY` inside the writers' transactions
would take, at their commit, a lock every notifying transaction of the database shares, held
through the commit's WAL flush (the writers of different partitions committed one at a time).
A notice lost (a process killed between its commit and its notice, a listener reconnecting) is
made up by the readers' fallback look (`Positions.wait`'s timeout).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.sql import SQL, Identifier

from infra.store.database import Database, PostgresDatabase, SQLiteDatabase

COMMITS = "commits"
VIEWS = "views"
log = logging.getLogger("sabot.store")

WAKE_SECONDS = 0.5
"""How often the listener looks whether it was closed (`close` also wakes it at once)."""
RECONNECT_SECONDS = 1.0
SEND_IDLE_SECONDS = 2.0


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

    def __init__(self, database: Database, name: str, on_notice: Callable[[], None],
                 on_payload: Callable[[str], None] | None = None) -> None:
        self._database = database
        self._name = name
        self._on_notice = on_notice
        self._on_payload = on_payload  # each notice's payload, if given (else `on_notice()`)
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._stop = f"sabot_stop_{uuid.uuid4().hex}"  # this listener's own: `close` wakes it

    def start(self) -> None:
        if isinstance(self._database, PostgresDatabase) and self._thread is None:
            self._thread = threading.Thread(target=self._listen, args=(self._database,),
                                            name=f"listen-{self._name}", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._closed.set()
        if self._thread is not None:
            self._wake()
            self._thread.join(timeout=WAKE_SECONDS + 5)
            self._thread = None

    def _wake(self) -> None:
        """A notice on this listener's own channel: its wait ends now, not at `WAKE_SECONDS`
        (a server's shutdown waited on each of its listeners)."""
        assert isinstance(self._database, PostgresDatabase)
        try:
            with psycopg.connect(autocommit=True, **_params(self._database)) as connection:
                connection.execute("SELECT pg_notify(%s, '')", (self._stop,))
        except psycopg.Error:
            pass  # the server away: the wait ends at its timeout

    def _listen(self, database: PostgresDatabase) -> None:
        params = _params(database)
        while not self._closed.is_set():
            try:
                with psycopg.connect(autocommit=True, **params) as connection:
                    connection.execute(SQL("LISTEN {}").format(
                        Identifier(channel(database, self._name))))
                    connection.execute(SQL("LISTEN {}").format(Identifier(self._stop)))
                    self._on_notice()  # whatever was sent before this LISTEN
                    while not self._closed.is_set():
                        for notice in connection.notifies(timeout=WAKE_SECONDS):
                            if notice.channel == self._stop:
                                break
                            if self._on_payload is not None:
                                self._on_payload(notice.payload)
                            else:
                                self._on_notice()
            except psycopg.Error:
                time.sleep(RECONNECT_SECONDS)


def _params(database: PostgresDatabase) -> dict[str, Any]:
    """The store's connection parameters, for a connection of our own outside its pool."""
    kwargs = database.datastore.pool.kwargs
    given = kwargs() if callable(kwargs) else kwargs or {}
    return {k: v for k, v in given.items() if k != "row_factory"}


class Positions:
    """The highest position published on one channel of one store that this process knows
    of, and the callbacks and waiters woken when it moves (see the module's docstring)."""

    def __init__(self, database: Database, name: str) -> None:
        self.database = database
        self.name = name
        self.position = 0
        self.heard = 0
        """Positions heard from the database (another process's `NOTIFY`, or this one's)."""
        self._changed = threading.Condition()
        self._subscribers: list[Callable[[], None]] = []
        self._listener: Listener | None = None
        self._listening = 0
        self._pending = 0
        self._sending = threading.Event()
        self._sender: threading.Thread | None = None

    def publish(self, position: int) -> None:
        """`position` reached by this process (after its commit): woken here at once, and
        in the other processes through the database (PostgreSQL)."""
        self._moved(position)
        if isinstance(self.database, PostgresDatabase):
            with self._changed:
                self._pending = max(self._pending, position)
                if self._sender is None:
                    self._sender = threading.Thread(target=self._send, daemon=True,
                                                    name=f"notify-{self.name}")
                    self._sender.start()
            self._sending.set()

    def subscribe(self, callback: Callable[[], None]) -> None:
        """Call `callback()` (quickly: it runs in the publisher's or the listener's thread)
        each time the position may have moved, and hear the other processes' positions
        until `unsubscribe`."""
        with self._changed:
            self._subscribers.append(callback)
        self.listen()

    def unsubscribe(self, callback: Callable[[], None]) -> None:
        with self._changed:
            self._subscribers.remove(callback)
        self.unlisten()

    def listen(self) -> None:
        """Hear the other processes' positions too (PostgreSQL), until as many `unlisten`."""
        with self._changed:
            self._listening += 1
            if self._listener is None:
                self._listener = Listener(self.database, self.name, self._reconnected,
                                          self._heard)
                self._listener.start()

    def unlisten(self) -> None:
        with self._changed:
            self._listening -= 1
            listener = self._listener if self._listening <= 0 else None
            if listener is not None:
                self._listener = None
        if listener is not None:
            listener.close()

    def wait(self, past: int, timeout: float) -> bool:
        """Wait until the position is `past` or later, at most `timeout` seconds: whether
        it is (positions of other processes heard while someone `listen`s)."""
        with self._changed:
            return self._changed.wait_for(lambda: self.position >= past, timeout)

    def _heard(self, payload: str) -> None:
        self.heard += 1
        self._moved(int(payload) if payload.isdigit() else 0)

    def _reconnected(self) -> None:
        self._moved(0)  # a notice may have been missed: let the subscribers look

    def _moved(self, position: int) -> None:
        with self._changed:
            self.position = max(self.position, position)
            subscribers = list(self._subscribers)
            self._changed.notify_all()
        for callback in subscribers:
            callback()

    def _send(self) -> None:
        """Send the highest pending position, on a connection of its own (closed when idle
        for `SEND_IDLE_SECONDS`)."""
        assert isinstance(self.database, PostgresDatabase)
        target, params = channel(self.database, self.name), _params(self.database)
        connection: psycopg.Connection[Any] | None = None
        while True:
            if not self._sending.wait(SEND_IDLE_SECONDS) and connection is not None:
                connection.close()
                connection = None
                continue
            self._sending.clear()
            with self._changed:
                position, self._pending = self._pending, 0
            if not position:
                continue
            try:
                if connection is None or connection.closed:
                    connection = psycopg.connect(autocommit=True, **params)
                connection.execute("SELECT pg_notify(%s, %s)", (target, str(position)))
            except psycopg.Error:  # the readers' fallback look makes up for it
                log.warning("notice of position %d on %s not sent", position, self.name,
                            exc_info=True)
                connection = None


_POSITIONS: dict[tuple[str, str], Positions] = {}
_REGISTRY = threading.Lock()


def positions(database: Database, name: str) -> Positions:
    """The positions of channel `name` of the store `database` is in, one for the process."""
    if isinstance(database, SQLiteDatabase):
        store = f"sqlite:{database.datastore.pool.db_name}"
    else:
        assert isinstance(database, PostgresDatabase)
        store = f"postgres:{_params(database).get('dbname')}/{database.datastore.schema}"
    with _REGISTRY:
        found = _POSITIONS.get((store, name))
        if found is None:
            found = _POSITIONS[(store, name)] = Positions(database, name)
        return found
