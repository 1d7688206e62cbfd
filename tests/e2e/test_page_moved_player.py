"""A player's page takes them to their table, on a phone, in headless Chromium: moved to
another table (the organiser balancing the tables), the page of the table they left does not
stay on "not seated"; signed in before their seat, the page waits for it (issue 37)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from api.tokens import Role
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page_i18n import signed_in
from tests.e2e.test_page_sign_in import PHONE, chromium, fits  # noqa: F401 - the browser
from tests.e2e.test_sign_in import a_tournament, slip

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

FOLLOW_MS = 15_000  # the page reads the tournament every 5 s


@pytest.mark.parametrize("locale", ["en-GB", "fr-FR"])
def test_a_moved_player_s_page_follows_them_to_their_new_table(
        api: Api, chromium: Browser, locale: str) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    name = f"moves-{locale[:2]}"
    made = api.call("POST", "/tournaments", organiser, json={
        "name": name, "preset": "punto-banco-heats", "tables": 2, "coups_per_round": 2})
    assert made.status_code == 201, made.text
    for n in range(8):
        assert api.call("POST", f"/tournaments/{name}/players", organiser,
                        json={"player": f"p{n}"}).status_code == 201
    started = api.call("POST", f"/tournaments/{name}/start", organiser)
    assert started.status_code == 200, started.text
    first, second = started.json()["tables"]
    mover = first["players"][0]["player"]

    phone = chromium.new_context(locale=locale, **PHONE)
    try:
        page = signed_in(phone, api, f"/player?table={first['name']}", mover)
        expect(page.locator("#chips")).to_have_text(re.compile(r"^\d"), timeout=FOLLOW_MS)
        moved = api.call("POST", f"/tournaments/{name}/interventions", organiser, json={
            "kind": "move", "player": mover, "table": second["name"],
            "reason": "balancing the tables"})
        assert moved.status_code == 201, moved.text
        expect(page).to_have_url(re.compile(rf"/player\?table={second['name']}$"),
                                 timeout=FOLLOW_MS)
        expect(page.locator("#chips")).to_have_text(re.compile(r"^\d"), timeout=FOLLOW_MS)
        fits(page)
    finally:
        phone.close()


def test_a_player_signed_in_before_their_seat_lands_on_their_table_once_seated(
        api: Api, chromium: Browser) -> None:  # noqa: F811
    """A slip made before the draw (or for a play-off's table yet to open) opens a page that
    says so and takes the player to their table once they have one (it landed on the lobby)."""
    organiser = a_tournament(api, "waiting", start=False)
    made = slip(api, organiser, "ann", "waiting")
    assert made["table"] is None
    phone = chromium.new_context(locale="fr-FR", **PHONE)
    try:
        page = phone.new_page()
        page.goto(made["link"])
        expect(page).to_have_url(re.compile(r"/player\?tournament=waiting$"), timeout=FOLLOW_MS)
        expect(page.locator("#status")).to_have_text(
            "pas encore de place : votre table s'ouvrira ici dès que vous en aurez une",
            timeout=FOLLOW_MS)
        started = api.call("POST", "/tournaments/waiting/start", organiser)
        assert started.status_code == 200, started.text
        table = next(line["name"] for line in started.json()["tables"]
                     if any(seat["player"] == "ann" for seat in line["players"]))
        expect(page).to_have_url(re.compile(rf"/player\?table={table}$"), timeout=FOLLOW_MS)
        expect(page.locator("#chips")).to_have_text(re.compile(r"^\d"), timeout=FOLLOW_MS)
        fits(page)
    finally:
        phone.close()
