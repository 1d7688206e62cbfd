"""Idempotency keys in the store's database (SQLite and PostgreSQL): an answer is replayed
while it is kept, and a key whose answer expired is claimed afresh even before the
once-a-minute purge has deleted it."""

from __future__ import annotations

from litestar import Response

from api.idempotency import KEEP_SECONDS, REPLAYED, Idempotency
from infra.store.opening import open_store


def test_an_expired_key_is_claimed_afresh_before_it_is_purged(database_url: str) -> None:
    with open_store(database_url) as store:
        keys = Idempotency(store.database)
        assert keys.run("org/k", "first", 200, lambda: {"n": 1}) == {"n": 1}
        replayed = keys.run("org/k", "first", 200, lambda: {"n": 2})
        assert isinstance(replayed, Response) and replayed.headers[REPLAYED] == "true"
        assert replayed.content == b'{"n":1}'
        with store.database.transaction(write=True) as cursor:
            store.database.execute(cursor, "UPDATE {api_idempotency}"
                                   " SET claimed_ms = claimed_ms - ?", (KEEP_SECONDS * 1001,))
        assert keys.run("org/k", "second", 200, lambda: {"n": 3}) == {"n": 3}
        again = keys.run("org/k", "second", 200, lambda: {"n": 4})
        assert isinstance(again, Response) and again.content == b'{"n":3}'
