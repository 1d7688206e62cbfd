"""The token cache of one process against another's writes, on both databases: a token it
cached as valid is refused once another process revoked it, and one it cached as unknown
opens once issued elsewhere (every issue and revocation moves the tokens' generation)."""

from __future__ import annotations

import pytest

from api import tokens
from api.tokens import Grant, Role, TokenStore
from infra.services.tables import TableService


def test_a_cached_token_follows_what_another_process_did(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with TableService(url=database_url) as one, TableService(url=database_url) as other:
        here, there = TokenStore(one.database), TokenStore(other.database)
        token = there.issue(Grant(role=Role.AUDITOR))
        assert here.grant(token) is not None
        assert here.grant(token) is not None  # from the cache now
        there.revoke(token)
        issued = here.lookup(token)
        assert issued is not None and issued.refusal(issued.expires_at) == "token-revoked"
        assert here.grant(token) is None

        unknown = tokens.PREFIX + "x" * 43
        assert here.lookup(unknown) is None  # cached as unknown
        monkeypatch.setattr(tokens.secrets, "token_urlsafe", lambda size: "x" * 43)
        assert there.issue(Grant(role=Role.ORGANISER)) == unknown
        assert here.grant(unknown) == Grant(role=Role.ORGANISER,
                                            token_id=tokens.digest(unknown)[:tokens.ID_DIGITS])


def test_the_generation_read_again_stays_fresh_for_its_seconds(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once its freshness ran out, a lookup of a cached token reads the generation again, and
    the lookups after it take it from the cache for another `fresh_seconds` (a request costs
    no round trip for its token: it read it on every request, once the first ran out)."""
    with TableService(url=database_url) as service:
        store = TokenStore(service.database, fresh_seconds=60.0)
        token = store.issue(Grant(role=Role.AUDITOR))
        clock = [1000.0]
        monkeypatch.setattr(tokens.time, "monotonic", lambda: clock[0])
        reads = []
        read_generation = store._read_generation

        def counted() -> int:
            reads.append(clock[0])
            return read_generation()

        monkeypatch.setattr(store, "_read_generation", counted)
        for _ in range(3):
            assert store.grant(token) is not None
        assert reads == [1000.0]
        clock[0] += 61  # stale: read again, once
        for _ in range(3):
            assert store.grant(token) is not None
        assert reads == [1000.0, 1061.0]
