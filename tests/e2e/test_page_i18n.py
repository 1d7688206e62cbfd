"""The player's page, the table screen and the tournament screen in French and English, in
headless Chromium with real clicks: a browser whose language is French (locale fr-FR) reads
them in French, in the seeds' words ("Faites vos jeux", "ponte", "banquier"); the EN/FR switch
changes the language and the browser remembers it for every page. On a phone (390x844) the
player reads the round, the coups left in it and the table's limits.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from api.tokens import Role
from domain.tournament.aggregate import Tournament
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.e2e.test_api import KEY, Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import SHOTS, WAIT_MS, Organiser
from tests.e2e.test_page_sign_in import PHONE, chromium, fits  # noqa: F401 - the browser
from tests.e2e.test_sign_in import a_tournament

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def betting_table(api: Api, name: str, director: Director | None = None,  # noqa: F811
                  ) -> tuple[str, str, dict[str, Any]]:
    """A started tournament whose table is open for bets in turn (its first round started by
    `director`, if given): the table's name, whose turn it is, and the tournament's view."""
    a_tournament(api, name)
    if director is not None:
        director.tick(Tournament.create_id(name))  # the first round starts
    shown: dict[str, Any] = api.call("GET", f"/tournaments/{name}").json()
    table = shown["tables"][0]["name"]
    house = Organiser(api, table)
    house.send("shuffle")
    house.send("cut", player="ann", position=100)
    house.play_while("burning")
    while (turn := next(a["actor"] for a in house.view(token=house.token)["legal_actions"]
                        if a["step"] == "pass-bet")) == "robo":
        house.send("pass-bet", player="robo")  # the house bot's turn: passed here
    return table, turn, shown


def signed_in(context: BrowserContext, api: Api, path: str, player: str) -> Page:  # noqa: F811
    page = context.new_page()
    page.goto(api.base_url + "/static/sabot.css")
    page.evaluate("token => sessionStorage.setItem('sabot.token', token)",
                  api.token(Role.PLAYER, player=player))
    page.goto(api.base_url + path)
    return page


def test_a_french_browser_reads_french_and_the_switch_changes_it(
        api: Api, chromium: Browser) -> None:  # noqa: F811
    table, turn, _ = betting_table(api, "soir")
    phone = chromium.new_context(locale="fr-FR", **PHONE)
    try:
        page = signed_in(phone, api, f"/player?table={table}", turn)
        expect(page.locator("#phase")).to_have_text("À vous : misez ou passez", timeout=WAIT_MS)
        expect(page.locator("html")).to_have_attribute("lang", "fr")
        expect(page.locator("#seat-title")).to_have_text("Votre place")
        expect(page.locator("#spot option")).to_have_text(["ponte", "banquier", "égalité"])
        page.get_by_label("sur").select_option("banker")
        page.get_by_label("montant").fill("100")
        page.get_by_role("button", name="Miser").click()
        expect(page.locator("#notice")).to_have_text("Mise placée : 100 sur le banquier.",
                                                     timeout=WAIT_MS)
        expect(page.locator("#log")).to_contain_text(f"{turn} mise 100 sur le banquier",
                                                           timeout=WAIT_MS)
        fits(page)
        SHOTS.mkdir(exist_ok=True)  # docs/pages/ keeps a copy
        page.screenshot(path=str(SHOTS / "player-fr-phone.jpg"), type="jpeg", quality=50)

        screen = phone.new_page()
        screen.goto(api.base_url + f"/screen?table={table}")
        expect(screen.locator("#phase")).to_have_text("Faites vos jeux", timeout=WAIT_MS)
        expect(screen.locator("#bets li")).to_have_text([f"{turn} · 100 sur banquier"],
                                                        timeout=WAIT_MS)
        expect(screen.locator("#seats th")).to_have_text(["joueur", "jetons", "en jeu"])
        big = phone.new_page()
        big.goto(api.base_url + "/?tournament=soir")
        expect(big.locator("#state")).to_have_text("en cours", timeout=WAIT_MS)
        expect(big.locator("#standings-title")).to_have_text("Classement")

        page.get_by_role("button", name="EN").click()  # the switch: the page again, in English
        expect(page.locator("#log")).to_contain_text(f"{turn} bets 100 on banker",
                                                           timeout=WAIT_MS)
        expect(page.locator("#seat-title")).to_have_text("Your seat")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        expect(page.get_by_role("button", name="EN")).to_have_attribute("aria-pressed", "true")
        screen.reload()  # the choice is the browser's, for every page
        expect(screen.locator("#phase")).to_have_text("Place your bets", timeout=WAIT_MS)
        expect(screen.locator("#bets li")).to_have_text([f"{turn} · 100 on banker"])
        page.get_by_role("button", name="FR").click()
        expect(page.locator("#seat-title")).to_have_text("Votre place", timeout=WAIT_MS)
    finally:
        phone.close()
    desk = chromium.new_context(locale="en-GB")  # an English browser: English, and the switch
    try:
        page = signed_in(desk, api, f"/player?table={table}", turn)
        expect(page.locator("#log")).to_contain_text(f"{turn} bets 100 on banker",
                                                           timeout=WAIT_MS)
        expect(page.get_by_role("button", name="FR")).to_have_attribute("aria-pressed", "false")
    finally:
        desk.close()


def test_the_player_reads_the_round_the_coups_left_and_the_limits_on_a_phone(
        api: Api, chromium: Browser, postgres_url: str) -> None:  # noqa: F811
    director = Director(TableService(url=postgres_url, secret_key=KEY))
    table, _, shown = betting_table(api, "limites", director)
    assert (shown["round"], shown["coups_left"]) == (1, 2)
    settings = api.call("GET", f"/tables/{table}").json()["settings"]
    phone = chromium.new_context(locale="en-US", **PHONE)
    try:
        page = signed_in(phone, api, f"/player?table={table}", "cat")
        expect(page.locator("#round")).to_have_text(f"{shown['stage']} · {shown['round']}",
                                                    timeout=WAIT_MS)
        expect(page.locator("#coups-left")).to_have_text(str(shown["coups_left"]))
        expect(page.locator("#table-limits")).to_have_text(
            f"{settings['min_stake']:,} to {settings['max_stake']:,}")
        expect(page.locator("#position")).to_contain_text("limites")
        fits(page)
    finally:
        phone.close()


@pytest.mark.parametrize(("locale", "words"), [
    ("fr-FR", {"top-1": "le premier", "top-3": "les 3 premiers", "9472": "9\u202f472",
               "10000": "10\u202f000", "clock": "cy : temps de mise écoulé, pas de mise",
               "pass": "cy passe", "coups-1": "1 coup restant", "coups-0": "0 coup restant"}),
    ("en-GB", {"top-1": "the top player", "top-3": "top 3", "9472": "9,472", "10000": "10,000",
               "clock": "cy: time to bet ran out, no bet", "pass": "cy passes",
               "coups-1": "1 coup left", "coups-0": "0 coups left"}),
])
def test_the_pages_words_follow_the_language_s_numbers_and_plurals(
        api: Api, chromium: Browser, locale: str, words: dict[str, str]) -> None:  # noqa: F811
    """A pass by the clock is not worded as the player's own pass; the singular is the
    language's (French: 0 and 1); chips are grouped from the thousands in both languages
    (French leaves four digits whole by default: "9472" beside "10 000")."""
    context = chromium.new_context(locale=locale, **PHONE)
    try:
        page = context.new_page()
        page.goto(api.base_url + "/screen?table=none")
        said = page.evaluate("""() => ({
            "top-1": Sabot.t("tournament.top", {count: 1}),
            "top-3": Sabot.t("tournament.top", {count: 3}),
            "9472": Sabot.money(9472), "10000": Sabot.money(10000),
            "clock": Sabot.words({type: "BetTurnPassed", player: "cy", coup: 1, reason: "clock"}),
            "pass": Sabot.words({type: "BetTurnPassed", player: "cy", coup: 1, reason: "pass"}),
            "coups-1": Sabot.coupsLeft(1), "coups-0": Sabot.coupsLeft(0)})""")
        assert said == words
    finally:
        context.close()


@pytest.mark.parametrize("locale", ["en-GB", "fr-FR"])
def test_on_a_phone_the_header_shows_the_whole_name_and_the_coup_on_one_line(
        api: Api, chromium: Browser, locale: str) -> None:  # noqa: F811
    """The player's header on a 390x844 phone: the table's name whole (not "fri…"), and
    "punto-banco · coup 1" on one line (not one word a line beside the name)."""
    table, turn, _ = betting_table(api, f"friday-{locale[:2]}")
    phone = chromium.new_context(locale=locale, **PHONE)
    try:
        page = signed_in(phone, api, f"/player?table={table}", turn)
        expect(page.locator("#name")).to_contain_text(table, timeout=WAIT_MS)
        expect(page.locator("#who")).to_contain_text("punto-banco", timeout=WAIT_MS)
        assert page.locator("#name").evaluate("e => e.scrollWidth <= e.clientWidth"), table
        lines = page.locator("#who").evaluate(
            "e => Math.round(e.getBoundingClientRect().height"
            " / parseFloat(getComputedStyle(e).lineHeight))")
        assert lines == 1, lines
        fits(page)
    finally:
        phone.close()
