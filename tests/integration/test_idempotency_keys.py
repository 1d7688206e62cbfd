"""Idempotency keys in the store's database (SQLite and PostgreSQL): an answer is replayed
while it is kept, and a key whose answer expired is claimed afresh even before the
once-a-minute purge has deleted it."""

from __future__ import annotations

import msgspec
import pytest
from litestar import Response

from api.idempotency import KEEP_SECONDS, REPLAYED, Idempotency
from api.problems import ApiProblem
from domain.table import commands as c
from infra.services.tables import Recorded
from infra.store.answers import KeptAnswer
from infra.store.opening import open_store
from tests.integration.test_outbox import a_service, a_table


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


def test_an_applied_once_answer_is_kept_replayed_and_refused_for_another_request(
        database_url: str) -> None:
    """A command the command log applies once is not claimed first: its answer is kept in one
    statement, replayed, refused for another request under the key, and kept afresh once
    expired; a refusal keeps nothing."""
    with open_store(database_url) as store:
        keys = Idempotency(store.database)

        def refused(_: object) -> dict[str, int]:
            raise ValueError("refused")

        with pytest.raises(ValueError, match="refused"):
            keys.run_applied_once("org/k", "first", 200, refused)
        assert keys.run_applied_once("org/k", "first", 200, lambda _: {"n": 1}) == {"n": 1}
        replayed = keys.run_applied_once("org/k", "first", 200, lambda _: {"n": 2})
        assert isinstance(replayed, Response) and replayed.content == b'{"n":1}'
        with pytest.raises(ApiProblem) as other:
            keys.run_applied_once("org/k", "second", 200, lambda _: {"n": 2})
        assert other.value.rule == "command-id-reused"
        with store.database.transaction(write=True) as cursor:
            store.database.execute(cursor, "UPDATE {api_idempotency}"
                                   " SET claimed_ms = claimed_ms - ?", (KEEP_SECONDS * 1001,))
        assert keys.run_applied_once("org/k", "second", 200, lambda _: {"n": 3}) == {"n": 3}
        again = keys.run_applied_once("org/k", "second", 200, lambda _: {"n": 4})
        assert isinstance(again, Response) and again.content == b'{"n":3}'


def test_a_table_command_s_answer_is_kept_in_its_transaction(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The answer is written with the command's events (`infra.store.answers`), on both
    databases: no statement of its own, replayed from the key's row."""
    with a_service(database_url) as service:
        table_id = a_table(service, "kept")
        keys = Idempotency(service.database)
        monkeypatch.setattr(service.database, "write_one", None)  # a statement of its own fails

        def seat(answer: KeptAnswer[Recorded]) -> dict[str, int | None]:
            recorded = service.execute(
                table_id, c.SeatPlayer(command_id="kept:seat-2", player="p2", chips=100),
                answer=answer.given(lambda r: {"version": r.version, "position": r.position}))
            return {"version": recorded.version, "position": recorded.position}

        first = keys.run_applied_once("org/seat", "fp", 200, seat)
        assert first["version"] == service.table(table_id).version
        replayed = keys.run_applied_once("org/seat", "fp", 200, seat)
        assert isinstance(replayed, Response) and replayed.content == msgspec.json.encode(first)
