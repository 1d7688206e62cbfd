"""The turn's clocks count down from the time the server says is left (`clock_ms` in a table's
view), on the page's own clock: a phone whose wall clock is 30 s ahead or behind the server's
still reads the right count, from its first showing on (never "0 s" first, then a jump), in
headless Chromium (`test_page`'s browser and helpers).

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from api.tokens import Role
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_api_deadlines import deal_to_the_naturals
from tests.e2e.test_page import WAIT_MS, browser, open_table  # noqa: F401 - the fixtures

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

# The page's wall clock (`Date`) set `skew` ms off the server's, and every text its #clock
# shows, in order, kept in `window.clockSeen`.
SKEWED = """skew => {
  const Real = Date;
  class Skewed extends Real {
    constructor(...args) { if (args.length) super(...args); else super(Real.now() + skew); }
    static now() { return Real.now() + skew; }
  }
  window.Date = Skewed;
  window.clockSeen = [];
  document.addEventListener("DOMContentLoaded", () => {
    const node = document.getElementById("clock");
    new MutationObserver(() => {
      const text = node.hidden ? "" : node.textContent;
      const seen = window.clockSeen;
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }).observe(node, { childList: true, characterData: true, subtree: true, attributes: true });
  });
}"""


@pytest.fixture
def skewed(api: Api, browser: BrowserContext) -> Iterator[Callable[[str, str, int], Page]]:  # noqa: F811
    pages: list[Page] = []

    def open_skewed(path: str, token: str, skew_ms: int) -> Page:
        page = browser.new_page()
        pages.append(page)
        page.add_init_script(f"({SKEWED})({skew_ms})")
        page.goto(api.base_url + "/static/sabot.css")
        page.evaluate("token => sessionStorage.setItem('sabot.token', token)", token)
        page.goto(api.base_url + path)
        return page

    yield open_skewed
    for page in pages:
        page.close()


def counts(page: Page, what: str) -> list[int]:
    """The seconds the page's clock showed, in order (each text `N s to <what>`)."""
    seen: list[str] = page.evaluate("window.clockSeen")
    found = [re.fullmatch(rf"(\d+) s to {what}", text) for text in seen]
    assert seen and all(found), seen
    return [int(f.group(1)) for f in found if f]


def assert_counts_down_from(page: Page, what: str, limit: int) -> None:
    """The clock opened at the turn's full time (give or take the moments a page takes to
    load) and only went down."""
    shown = counts(page, what)
    assert limit - 5 <= shown[0] <= limit, shown
    assert shown == sorted(shown, reverse=True), shown


def test_a_bet_clock_reads_the_servers_time_left_whatever_the_phones_clock(
        api: Api, skewed: Callable[[str, str, int], Page]) -> None:  # noqa: F811
    house = open_table(api, "skew", "punto-banco", min_stake=10, betting_order="rotating",
                       bet_seconds=30)
    house.send("seat", player="dan", chips=1000)
    house.send("seat", player="eve", chips=1000)
    house.send("shuffle")
    house.send("cut", player="dan", position=100)
    house.play_while("burning")
    ahead = skewed("/player?table=skew", api.token(Role.PLAYER, player="dan"), 30_000)
    behind = skewed("/screen?table=skew", api.token(Role.PLAYER, player="eve"), -30_000)
    for page in (ahead, behind):
        expect(page.locator("#clock")).to_have_text(re.compile(r"^(30|2\d) s to bet$"),
                                                    timeout=WAIT_MS)
    first = counts(ahead, "bet")[-1]
    expect(ahead.locator("#clock")).not_to_have_text(f"{first} s to bet", timeout=WAIT_MS)
    for page in (ahead, behind):
        assert_counts_down_from(page, "bet", 30)

    house.send("pass-bet", player="dan")  # eve's turn: a new clock, read from the server again
    expect(behind.locator("#clock")).to_have_text(re.compile(r"^(30|2\d) s to bet$"),
                                                  timeout=WAIT_MS)
    shown = counts(behind, "bet")
    assert shown[-1] >= 25, shown
    assert 25_000 <= house.view()["clock_ms"] <= 30_000  # the view says eve's time left


def test_a_decision_clock_reads_the_servers_time_left_whatever_the_phones_clock(
        api: Api, skewed: Callable[[str, str, int], Page]) -> None:  # noqa: F811
    timed = open_table(api, "timed", "punto-banco", decision_seconds=20)
    deal_to_the_naturals(timed.send)
    timed.send("show-naturals")  # the punter's hand must now draw: the croupier's, on a clock
    croupier = skewed("/croupier?table=timed", api.token(Role.CROUPIER, tables=("timed",)),
                      45_000)
    expect(croupier.locator("#clock")).to_have_text(re.compile(r"^(20|1\d) s to decide$"),
                                                    timeout=WAIT_MS)
    assert_counts_down_from(croupier, "decide", 20)
