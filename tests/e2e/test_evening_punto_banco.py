"""The punto banco evening in Chromium (issue 26), a module of its own so that `--dist
loadfile` plays it beside the chemin de fer evening (tests/e2e/test_evening.py): people, each
in their own browser context, bet by clicks on their player page; house bots; the organiser
pauses and publishes by clicks.

`test_the_punto_banco_evening_in_chromium`: the house-dealt punto banco evening, bets in a
rotating order on a bet clock (fay's every turn passed by the clock).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from domain.game.payouts import Spot
from domain.table import commands as c
from tests.e2e.evening_pages import (
    CLICK_MS,
    OpenPage,
    api,  # noqa: F401 - the evening's server
    check_the_record,
    evening_worker,
    one_key,  # noqa: F401 - the shared keys
    open_page,  # noqa: F401 - the evening's pages
    pause_by_click,
    publish_by_click,
    start_evening,
)
from tests.e2e.test_api import Api
from tests.e2e.test_evening_api import BOTS, CLOCK, FORMAT, PEOPLE, SILENT
from tests.e2e.test_page_sign_in import chromium  # noqa: F401 - the browser

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

EVENING = 240.0  # a stalled evening fails by then (before pytest's 300 s)


def bet_if_my_turn(page: Page, amount: int) -> bool:
    """Click a bet of `amount` on the banker if the page offers it now (past the round's last
    coup the table refuses it: `round-over`). Each person bets their own amount: people who
    all bet alike at one table would stay tied for first, and a tie plays on (`share`)."""
    place = page.get_by_role("button", name="Place bet")
    if not place.is_enabled():
        return False
    try:  # the turn may pass (its clock) between the look and the click
        page.get_by_label("on").select_option("banker", timeout=CLICK_MS)
        page.get_by_label("amount").fill(str(amount), timeout=CLICK_MS)
        place.click(timeout=CLICK_MS)
    except PlaywrightTimeout:
        return False
    return True


def test_the_punto_banco_evening_in_chromium(api: Api, open_page: OpenPage,  # noqa: F811
                                             tmp_path: Path) -> None:
    evening = start_evening(api, open_page, {**FORMAT, "people_bet_seconds": CLOCK})
    clicked: dict[str, int] = dict.fromkeys(PEOPLE, 0)
    paused = False
    with evening_worker(api, tmp_path):
        deadline = time.monotonic() + EVENING
        while (view := api.call("GET", evening.path).json())["status"] != "finished":
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            for number, (person, page) in enumerate(evening.pages.items()):
                if person != SILENT and bet_if_my_turn(page, 10 + 5 * number):
                    clicked[person] += 1
            if not paused and view["round"] == 1 and sum(clicked.values()) >= 3:
                person = next(p for p in PEOPLE if p != SILENT)
                table = evening.table_of[person]
                tries: dict[str, tuple[str, c.TableCommand]] = {
                    evening.tokens[person]: (table, c.PlaceBet(
                        command_id=f"paused-{person}", player=person, spot=Spot.BANKER,
                        amount=10)),
                    evening.organiser: (table, c.CloseBetting(command_id="paused-organiser"))}
                pause_by_click(api, evening, tries, CLOCK + 0.5)
                paused = True
            time.sleep(0.05)
    assert paused and view["round"] >= 2  # a tie for first after two rounds plays on
    publish_by_click(api, evening)
    events = check_the_record(api, evening)
    placed = {e.actor for e in events if type(e).__name__ == "BetPlaced"}
    assert placed >= set(PEOPLE) - {SILENT} and placed & set(BOTS), placed
    passed = [e for e in events if type(e).__name__ == "BetTurnPassed" and e.player == SILENT]
    assert passed and all(e.reason == "clock" and e.actor.startswith("@") for e in passed)
