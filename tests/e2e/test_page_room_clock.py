"""The room's clock of a finished tournament on a 1920x1080 screen, in headless Chromium, in
English and French: the word it shows fits its board."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import WAIT_MS
from tests.e2e.test_page_sign_in import chromium  # noqa: F401 - the browser
from tests.integration.test_tournament_run import run_tournament

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def test_the_room_clock_of_a_finished_tournament_fits_in_both_languages(
        api: Api, chromium: Browser, postgres_url: str) -> None:  # noqa: F811
    """The word the big clock shows at the finish ("Finished", "Terminé") fits its box on a
    1920x1080 screen (it was clipped to "=inishec" at the digits' size)."""
    run_tournament(postgres_url, b"finished clock", players=8, name="over")
    for locale, word in (("en-GB", "Finished"), ("fr-FR", "Terminé")):
        context = chromium.new_context(locale=locale, viewport={"width": 1920, "height": 1080})
        try:
            screen = context.new_page()
            screen.goto(api.base_url + "/?tournament=over&view=clock")
            clock = screen.locator("#big-clock")
            expect(clock).to_have_text(word, timeout=WAIT_MS)
            assert clock.evaluate("e => e.scrollWidth <= e.clientWidth"), locale
            box, board = clock.bounding_box(), screen.locator("#clock-board").bounding_box()
            assert box is not None and board is not None
            assert board["x"] <= box["x"] and box["x"] + box["width"] <= board["x"] + board["width"]
        finally:
            context.close()
