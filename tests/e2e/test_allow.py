"""`OPTIONS` over real HTTP: `Allow` lists every method of the path, also where two routers
(or two handlers of one controller) serve it, as the OpenAPI document declares them."""

from __future__ import annotations

import pytest

from tests.e2e.test_api import Api

pytestmark = pytest.mark.postgres


@pytest.mark.parametrize(("path", "allowed"), [
    ("/tables", "GET, OPTIONS, POST"),
    ("/tournaments", "GET, OPTIONS, POST"),
    ("/disputes", "GET, OPTIONS, POST"),
    ("/tables/t1", "GET, OPTIONS"),
    ("/tables/t1/commands", "OPTIONS, POST"),
])
def test_options_allows_every_method_of_the_path(api: Api, path: str, allowed: str) -> None:
    answer = api.call("OPTIONS", path)
    assert answer.status_code == 204
    assert answer.headers["allow"] == allowed
    document = api.call("GET", "/schema/openapi.json").json()["paths"]
    declared = {m.upper() for m in document[path.replace("t1", "{table}")]} | {"OPTIONS"}
    assert set(allowed.split(", ")) == declared
