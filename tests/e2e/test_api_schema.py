"""schemathesis against the app's own OpenAPI schema, over real HTTP on PostgreSQL: no input
it generates, valid or not, may get a server error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error

from api.auth import Role
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture


@pytest.fixture
def schema(api: Api) -> Iterator[schemathesis.BaseSchema]:  # noqa: F811
    api.call("POST", "/tables", api.token(Role.ORGANISER),
             json={"name": "fuzzed", "variant": "chemin-de-fer"})
    yield schemathesis.openapi.from_url(f"{api.base_url}/schema/openapi.json")


def test_no_generated_request_gets_a_server_error(api: Api,  # noqa: F811
                                                  schema: schemathesis.BaseSchema) -> None:
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 5
    tokens = [None, api.token(Role.ORGANISER), api.token(Role.PLAYER, player="p1")]
    cases = st.one_of(*(op.as_strategy() for op in operations))
    statuses: list[int] = []

    @settings(max_examples=300, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=cases, token=st.sampled_from(tokens))
    def fuzz(case: schemathesis.Case, token: str | None) -> None:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = case.call(base_url=api.base_url, headers=headers, timeout=10)
        statuses.append(response.status_code)
        case.validate_response(response, checks=[not_a_server_error])

    fuzz()
    assert len(statuses) >= 100
    assert any(s < 300 for s in statuses) and any(400 <= s < 500 for s in statuses)
