"""Croupiers signed in by a slip, one a table: only the organiser makes them (one table, by name
or number, or every table); the link signs a browser in with a croupier token for that table
only (another table's commands are refused) and lands on its console (the PIN with the
slip's name in the lobby too), where, in a fresh
headless Chromium context, a real click shuffles the shoe; the slips print from the page
`/slips?tournament=T&croupiers=1`, linked from the organiser console with the seating chart
and the payout slips; a used link says so."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from api.tokens import Role
from domain.table.aggregate import Table
from tests.client import CLIENT
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import WAIT_MS
from tests.e2e.test_page_sign_in import chromium, organiser_console  # noqa: F401 - the browser
from tests.e2e.test_sign_in import PLAYERS, as_browser, open_link

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def two_tables(api: Api, name: str = "friday") -> tuple[str, list[str]]:  # noqa: F811
    """A started tournament of two tables: the organiser's token and the tables' names."""
    organiser = api.token(Role.ORGANISER)
    made = api.call("POST", "/tournaments", organiser, json={
        "name": name, "preset": "punto-banco-heats", "tables": 2, "coups_per_round": 2})
    assert made.status_code == 201, made.text
    for player in (*PLAYERS, "gus", "hal"):  # eight: two tables
        assert api.call("POST", f"/tournaments/{name}/players", organiser,
                        json={"player": player}).status_code == 201
    assert api.call("POST", f"/tournaments/{name}/start", organiser).status_code == 200
    tables = [line["name"] for line in api.call("GET", f"/tournaments/{name}").json()["tables"]]
    assert len(tables) == 2
    return organiser, tables


def test_a_croupier_s_link_signs_in_for_that_table_only(api: Api) -> None:  # noqa: F811
    organiser, (first, second) = two_tables(api)
    path = "/tournaments/friday/tables/1/sign-in"
    player = api.call("POST", path, api.token(Role.PLAYER, player="ann"))
    assert (player.status_code, player.json()["rule"]) == (403, "organiser-only")
    assert api.call("POST", path).status_code == 401
    unknown = api.call("POST", "/tournaments/friday/tables/3/sign-in", organiser)
    assert (unknown.status_code, unknown.json()["rule"]) == (404, "unknown-table")
    made = api.call("POST", path, organiser)
    assert made.status_code == 201, made.text
    slip = made.json()
    assert (slip["table"], slip["name"]) == (first, f"@croupier/{first}")
    assert re.fullmatch(r"\d{6}", slip["pin"]) and slip["qr_svg"].startswith("<svg")
    by_name = api.call("POST", f"/tournaments/friday/tables/{second}/sign-in", organiser).json()
    assert by_name["table"] == second
    every = api.call("POST", "/tournaments/friday/tables/sign-in", organiser)
    assert every.status_code == 201
    assert [s["table"] for s in every.json()] == [first, second]
    link = every.json()[0]["link"]  # making them again withdrew the first ones
    assert open_link(slip["link"]).status_code == 410

    opened = open_link(link)
    assert opened.status_code == 303
    assert opened.headers["location"] == f"/croupier?table={first}"
    cookie = opened.cookies["sabot_session"]
    me = as_browser(api, "GET", "/me", cookie).json()
    assert me == {"role": "croupier", "player": None, "tables": [str(Table.create_id(first))]}
    sent = {"X-Requested-With": "sabot"}
    mine = as_browser(api, "POST", f"/tables/{first}/commands", cookie, headers=sent,
                      json={"kind": "shuffle", "command_id": "croupier-1"})
    assert mine.status_code == 200, mine.text
    other = as_browser(api, "POST", f"/tables/{second}/commands", cookie, headers=sent,
                       json={"kind": "shuffle", "command_id": "croupier-2"})
    assert other.status_code == 403, other.text
    again = open_link(link)
    assert again.status_code == 410 and "already been used" in again.text
    # the PIN, with the name the slip gives, in the lobby: the other table's console
    typed = {"player": f"@croupier/{second}", "pin": every.json()[1]["pin"]}
    pinned = CLIENT.post(api.base_url + "/sign-in/pin", json=typed, timeout=10)
    assert pinned.status_code == 200, pinned.text
    assert pinned.json() == {"player": f"@croupier/{second}", "page": f"/croupier?table={second}"}
    me = as_browser(api, "GET", "/me", pinned.cookies["sabot_session"]).json()
    assert me["role"] == "croupier" and me["tables"] == [str(Table.create_id(second))]


def test_a_croupier_opens_their_link_and_lands_on_their_table_s_console(
        api: Api, chromium: Browser) -> None:  # noqa: F811
    organiser, (first, _) = two_tables(api)
    desk, page = organiser_console(chromium, api, organiser)
    try:
        expect(page.get_by_role("link", name="Payout slips")).to_have_attribute(
            "href", "/payouts?tournament=friday", timeout=WAIT_MS)
        page.get_by_role("link", name="Seating chart").click()  # the draw, before round 1
        expect(page).to_have_url(re.compile(r"/seating\?tournament=friday$"))
        expect(page.locator(".meta")).to_contain_text("The draw")
        expect(page.locator(".chart tbody tr")).to_have_count(8)
        page.go_back()
        link = page.get_by_role("link", name=re.compile("Croupiers' sign-in slips"))
        expect(link).to_have_attribute("href", "/slips?tournament=friday&croupiers=1",
                                       timeout=WAIT_MS)
        link.click()
        page.get_by_role("button", name="Make the slips").click()
        slips = page.locator("article.slip")
        expect(slips).to_have_count(2, timeout=WAIT_MS)
        expect(slips.first.locator(".slip-name")).to_have_text(f"croupier · {first}")
        expect(page.locator(".slip-qr svg path")).to_have_count(2)
        url = slips.first.locator(".slip-link").text_content() or ""
    finally:
        desk.close()
    console = chromium.new_context(viewport={"width": 1280, "height": 720})  # the croupier's
    try:
        croupier = console.new_page()
        croupier.goto(url)
        expect(croupier).to_have_url(re.compile(rf"/croupier\?table={first}$"))
        expect(croupier.locator("#name")).to_have_text(f"{first} · croupier", timeout=WAIT_MS)
        croupier.get_by_role("button", name="Shuffle a new shoe").click()
        expect(croupier.locator("#log li").first).to_contain_text("shuffled", timeout=WAIT_MS)
        shuffled = [e for e in api.service.events_of(Table.create_id(first))
                    if isinstance(e, Table.ShoeShuffled)]
        assert len(shuffled) == 1
    finally:
        console.close()
