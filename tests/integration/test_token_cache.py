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
