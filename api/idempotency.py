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
from typing import Any

import msgspec
from litestar import Response

from api.problems import ApiProblem
from infra.store.database import Database

KEEP_SECONDS = 24 * 3600
STALE_SECONDS = 60
PURGE_SECONDS = 60
REPLAYED = "Idempotent-Replayed"

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
            code, body = stored
            return Response(content=body.encode(), status_code=code,
                            media_type="application/json", headers={REPLAYED: "true"})
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
            if now - self._purged_ms >= PURGE_SECONDS * 1000:  # two threads may both: harmless
                self._purged_ms = now
                self.database.execute(cursor, "DELETE FROM {api_idempotency}"
                                      " WHERE claimed_ms < ?", (now - KEEP_SECONDS * 1000,))
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
            self.database.execute(cursor, "UPDATE {api_idempotency} SET claimed_ms = ?"
                                  " WHERE scoped_key = ?", (now, key))
            return None

    def _keep(self, key: str, status: int, body: str) -> None:
        with self._writing() as cursor:
            self.database.execute(cursor, "UPDATE {api_idempotency} SET status = ?, body = ?"
                                  " WHERE scoped_key = ?", (status, body, key))

    def _release(self, key: str) -> None:
        with self._writing() as cursor:
            self.database.execute(cursor, "DELETE FROM {api_idempotency} WHERE scoped_key = ?"
                                  " AND status IS NULL", (key,))


def fingerprint(method: str, path: str, body: Any) -> str:
    """What a request asks, as a digest: its method, its path and its decoded body (so that
    spacing and the order of keys do not matter)."""
    text = msgspec.json.encode(body, order="sorted")
    return hashlib.sha256(b"\n".join([method.encode(), path.encode(), text])).hexdigest()


def _ms() -> int:
    return int(time.time() * 1000)
