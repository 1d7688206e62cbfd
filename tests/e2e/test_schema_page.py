"""The API's own documentation works without the internet: `/schema` is Swagger UI whose
script, style and icon the app serves itself (`api.openapi_page`), so its HTML names no other
host, each of its assets answers 200, and in Chromium, with every request to another host
refused, the page still lists the operations."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import BrowserContext, Route, expect

from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import WAIT_MS, browser  # noqa: F401 - the browser fixture

pytestmark = pytest.mark.postgres

ASSET = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")


def assets_of(html: str) -> list[str]:
    """The addresses the page's tags load (scripts, styles, icon)."""
    head, _, _ = html.partition("<body>")
    return ASSET.findall(head)


def test_the_schema_page_names_no_other_host_and_its_assets_are_served(
        api: Api) -> None:  # noqa: F811
    for path in ("/schema", "/schema/swagger"):
        page = api.call("GET", path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        head, _, _ = page.text.partition("<body>")
        assert "//" not in head  # no http(s)://host, no protocol-relative //host
        assets = assets_of(page.text)
        assert len(assets) == 4, assets  # the icon, the style, the bundle, its preset
        for asset in assets:
            assert urlsplit(asset).netloc == "" and asset.startswith("/static/swagger/")
            served = api.call("GET", asset)
            assert served.status_code == 200 and len(served.content) > 500, asset
    assert api.call("GET", "/schema/openapi.json").json()["info"]["title"] == "Sabot"


@pytest.mark.browser
def test_the_schema_page_renders_with_the_internet_cut_off(
        api: Api, browser: BrowserContext) -> None:  # noqa: F811
    elsewhere: list[str] = []

    def cut_off(route: Route) -> None:
        if route.request.url.startswith(api.base_url):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page = browser.new_page()
    try:
        page.route("**/*", cut_off)
        page.goto(api.base_url + "/schema")
        expect(page.locator(".opblock").first).to_be_visible(timeout=WAIT_MS)
        assert page.locator(".opblock").count() > 20
        expect(page.locator(".info .title")).to_contain_text("Sabot")
    finally:
        page.close()
    assert elsewhere == []
