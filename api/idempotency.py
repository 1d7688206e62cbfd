"""The `Idempotency-Key` header as the IETF draft (draft-ietf-httpapi-idempotency-key-header)
describes it, kept in the `api_idempotency` table of the store's database.

A key belongs to the token that sent it (another token's same key is another key). The first
request with a key claims it, with the fingerprint of what it asks (method, path, body):

* the same key again, once answered: the first answer, status and body, again (with the
  header `Idempotent-Replayed: true`), nothing recorded;
* the same key with another fingerprint: 422 `command-id-reused` (the key is the command id);
* the same key while its first request still runs: 409 `idempotency-key-in-use` (retry
  later); a claim older than `STALE_SECONDS` is a dead process's and is taken over;
* a request that fails (a refusal or an error) frees its key, so a corrected retry runs.

Answers are kept `KEEP_SECONDS` (24 hours), then forgotten (purged at most every
`PURGE_SECONDS` by each process); the command log still applies a command id once, for
ever. Without the header a body's own `command_id` keeps its older meaning: the command is
applied once, and a retry answers what it recorded.

The tournaments' routes take the key as their command's id and answer the command log's
`Recorded`: `replayed_header` (the application's `after_request`) marks with
`Idempotent-Replayed: true` such an answer given again for an id seen before.

A request whose command the command log applies once by its id (a table command: its id is
the key, `infra.store.command_log.claim_commands`) is not claimed beforehand (`run_applied_once`):
the key's row is read (one statement), the command runs, and its answer is kept as the key's
first claim in the command's own transaction (`infra.store.answers`: on PostgreSQL in the
insert's pipeline, no round trip of its own). A concurrent duplicate waits on the command
log's row inside the command's transaction and then answers what the first recorded; whichever
answer is kept first is the key's answer, and a duplicate that finds it kept replays it
(another request under the same key: 422). A command that records nothing (a command id seen
before, a command that changes nothing) keeps its answer in a statement of its own, as
before.

`run` claims, answers and keeps in the calling (worker) thread, one hop for the request. On
PostgreSQL the claim, the answer kept and a release commit without waiting for the disk
(`synchronous_commit` off): the command's own commit, which waits, flushes the claim before
it; an answer lost with the server's last moments leaves its claim, which turns stale and is
taken over, and the command, applied once by the command log, answers again.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import msgspec
from litestar import Response

from api.problems import ApiProblem
from infra.services.tables import Recorded
from infra.store.answers import KeptAnswer
from infra.store.database import Database

KEEP_SECONDS = 24 * 3600
STALE_SECONDS = 60
PURGE_SECONDS = 60
T = TypeVar("T")
REPLAYED = "Idempotent-Replayed"
UNFLUSHED = {"postgres": "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS off",
             "sqlite": "WHERE true"}
"""The source of an answer kept in one statement: on PostgreSQL it commits without waiting
for the disk (the setting lasts the statement's own transaction); SQLite's parser needs the
WHERE before ON CONFLICT."""
KEEP = ("INSERT INTO {api_idempotency} AS kept (scoped_key, fingerprint, claimed_ms, status,"
        " body) %s ON CONFLICT (scoped_key) DO UPDATE SET fingerprint = excluded.fingerprint,"
        " status = excluded.status, body = excluded.body, claimed_ms = excluded.claimed_ms"
        " WHERE kept.status IS NULL OR kept.claimed_ms < ? RETURNING scoped_key")
"""An answer kept as the key's first (over a claim, or an expired answer): a row if it was."""

class Idempotency:
    """Claims, answers and expiry of idempotency keys in one database."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self._purged_ms = 0

    def run(self, scoped_key: str, fingerprint: str, status: int,
            respond: Callable[[], Any]) -> Any:
        """`respond()`'s answer, once per key: replayed, refused, or computed and kept."""
        stored = self._claim(scoped_key, fingerprint)
        if stored is not None:
            return _replayed(stored)
        try:
            answer = respond()
        except BaseException:
            self._release(scoped_key)
            raise
        self._keep(scoped_key, status, msgspec.json.encode(answer).decode())
        return answer

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """A write transaction that commits without waiting for the disk (see above)."""
        with self.database.transaction(write=True) as cursor:
            if self.database.dialect == "postgres":
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
            yield cursor

    def _claim(self, key: str, fingerprint: str) -> tuple[int, str] | None:
        """Claim `key` (None), or the answer kept for it; refuse a reuse or a running claim."""
        now = _ms()
        with self._writing() as cursor:
            self._purge(cursor, now)
            claimed = self.database.execute(
                cursor, "INSERT INTO {api_idempotency} (scoped_key, fingerprint, claimed_ms)"
                " VALUES (?, ?, ?) ON CONFLICT (scoped_key) DO NOTHING RETURNING scoped_key",
                (key, fingerprint, now)).fetchone()
            if claimed is not None:
                return None
            row = self.database.execute(
                cursor, "SELECT fingerprint, status, body, claimed_ms FROM {api_idempotency}"
                " WHERE scoped_key = ?", (key,)).fetchone()
            if row is None or int(row["claimed_ms"]) < now - KEEP_SECONDS * 1000:
                self.database.execute(  # gone between the two statements, or expired
                    cursor, "INSERT INTO {api_idempotency} (scoped_key, fingerprint, claimed_ms)"
                    " VALUES (?, ?, ?) ON CONFLICT (scoped_key) DO UPDATE SET"
                    " fingerprint = excluded.fingerprint, status = NULL, body = NULL,"
                    " claimed_ms = excluded.claimed_ms", (key, fingerprint, now))
                return None
            answered = _answered(row, fingerprint, now)
            if answered is None:  # a dead process's claim: taken over
                self.database.execute(cursor, "UPDATE {api_idempotency} SET claimed_ms = ?"
                                      " WHERE scoped_key = ?", (now, key))
            return answered

    def _purge(self, cursor: Any, now: int) -> None:
        if now - self._purged_ms >= PURGE_SECONDS * 1000:  # two threads may both: harmless
            self._purged_ms = now
            self.database.execute(cursor, "DELETE FROM {api_idempotency}"
                                  " WHERE claimed_ms < ?", (now - KEEP_SECONDS * 1000,))

    def run_applied_once(self, key: str, fingerprint: str, status: int,
                         respond: Callable[[KeptAnswer[Any]], Any]) -> Any:
        """`respond(answer)`'s answer, once per key, where `respond` applies its command once
        by its id, whatever the races, and keeps its answer with it by `answer`."""
        now = _ms()
        row = self.database.read_one(
            "SELECT fingerprint, status, body, claimed_ms FROM {api_idempotency}"
            " WHERE scoped_key = ?", (key,))
        if row is not None and int(row["claimed_ms"]) >= now - KEEP_SECONDS * 1000:
            stored = _answered(row, fingerprint, now)
            if stored is not None:
                return _replayed(stored)
        expired = now - KEEP_SECONDS * 1000
        kept_with_command: list[bool] = []
        answer = respond(KeptAnswer(  # a refusal keeps nothing: the key stays free
            lambda given: (KEEP % "VALUES (?, ?, ?, ?, ?)",
                           (key, fingerprint, _ms(), status,
                            msgspec.json.encode(given).decode(), expired)),
            kept_with_command.append))
        if now - self._purged_ms >= PURGE_SECONDS * 1000:
            with self._writing() as cursor:
                self._purge(cursor, now)
        if kept_with_command == [True]:
            return answer
        kept = None if kept_with_command else self.database.write_one(
            KEEP % f"SELECT ?, ?, ?, ?, ? {UNFLUSHED[self.database.dialect]}",
            (key, fingerprint, _ms(), status, msgspec.json.encode(answer).decode(), expired))
        if kept is not None:
            return answer
        row = self.database.read_one(  # a duplicate's answer, kept first
            "SELECT fingerprint, status, body, claimed_ms FROM {api_idempotency}"
            " WHERE scoped_key = ?", (key,))
        stored = _answered(row, fingerprint, now)
        return answer if stored is None else _replayed(stored)

    def _keep(self, key: str, status: int, body: str) -> None:
        with self._writing() as cursor:
            self.database.execute(cursor, "UPDATE {api_idempotency} SET status = ?, body = ?"
                                  " WHERE scoped_key = ?", (status, body, key))

    def _release(self, key: str) -> None:
        with self._writing() as cursor:
            self.database.execute(cursor, "DELETE FROM {api_idempotency} WHERE scoped_key = ?"
                                  " AND status IS NULL", (key,))


def _answered(row: Any, fingerprint: str, now: int) -> tuple[int, str] | None:
    """The answer kept in the key's `row` (status, body); None for a dead process's claim;
    refused when it is another request's or still running."""
    if row["fingerprint"] != fingerprint:
        raise ApiProblem(422, "this Idempotency-Key was sent with another request; "
                         "use a new key for a new request",
                         rule="command-id-reused", field="Idempotency-Key")
    if row["status"] is not None:
        return int(row["status"]), str(row["body"])
    if now - int(row["claimed_ms"]) < STALE_SECONDS * 1000:
        raise ApiProblem(409, "a request with this Idempotency-Key is still running; "
                         "retry shortly", rule="idempotency-key-in-use",
                         field="Idempotency-Key", headers={"Retry-After": "1"})
    return None


def replayed_header(response: Response[Any]) -> Response[Any]:
    """A command log's answer for a command id seen before (no aggregate saved) says so."""
    answer = getattr(response, "content", None)  # a file's response has none
    if isinstance(answer, Recorded) and answer.aggregate is None:
        response.headers[REPLAYED] = "true"
    return response


def replayed_if(again: bool, content: T, status_code: int) -> Response[T]:
    """An answer that is not the command log's `Recorded` (a tournament's view), marked
    `Idempotent-Replayed: true` when its command id was seen before (`again`)."""
    return Response(content, status_code=status_code, headers={REPLAYED: "true"} if again else {})


def _replayed(stored: tuple[int, str]) -> Response[bytes]:
    code, body = stored
    return Response(content=body.encode(), status_code=code, media_type="application/json",
                    headers={REPLAYED: "true"})


def fingerprint(method: str, path: str, body: Any) -> str:
    """What a request asks, as a digest: its method, its path and its decoded body (so that
    spacing and the order of keys do not matter)."""
    text = msgspec.json.encode(body, order="sorted")
    return hashlib.sha256(b"\n".join([method.encode(), path.encode(), text])).hexdigest()


def _ms() -> int:
    return int(time.time() * 1000)
