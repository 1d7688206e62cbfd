"""No page's text is cut or spills out of its box at a phone's or a big screen's size, in
English or French (issue 37: "Finished" clipped to "=inishec"): the player's page, the table's
screen, the croupier's console, the big screen, the organiser's console, the lobby, the slips,
the seating chart and the results sheet of a started tournament, each opened afresh at 390x844
and 1920x1080 in an English and in a French browser
(`evening_pages.no_text_overflows`). On a phone the table's screen and the big screen were a
projector's three columns (the numbers, the standings and the roads' captions wider than their
boxes), the croupier's header ran past the phone's edge and the organiser's tables past their
panels. The evenings (test_evening.py, test_evening_punto_banco.py) look at the same pages in
play, paused and finished."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from api.tokens import Role
from tests.e2e.evening_pages import PageKind, no_text_overflows
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page_sign_in import chromium  # noqa: F401 - the browser
from tests.e2e.test_sign_in import PLAYERS, a_tournament

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def test_no_page_s_text_overflows_at_either_size_in_either_language(
        api: Api, chromium: Browser) -> None:  # noqa: F811
    organiser = a_tournament(api, "fits")
    table = api.call("GET", "/tournaments/fits").json()["tables"][0]["name"]
    no_text_overflows(api, chromium, [
        PageKind("player", f"/player?table={table}",
                 api.token(Role.PLAYER, player=PLAYERS[0]), "#chips"),
        PageKind("table screen", f"/screen?table={table}", None, "#phase"),
        PageKind("croupier console", f"/croupier?table={table}",
                 api.token(Role.CROUPIER, tables=(table,)), "#phase"),
        PageKind("big screen", "/?tournament=fits", None, "#state"),
        PageKind("organiser console", "/organiser?tournament=fits", organiser, "#summary"),
        PageKind("lobby", "/", None, "#tournaments"),
        PageKind("slips", "/slips?tournament=fits", organiser, "#name"),
        PageKind("seating chart", "/seating?tournament=fits", None, ".sheet"),
        PageKind("results sheet", "/results?tournament=fits", None, ".sheet")])
