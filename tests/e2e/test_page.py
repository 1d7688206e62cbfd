"""The live page in headless Chromium (Debian's `chromium`, driven by playwright): a coup
played through the HTTP API appears on the table display, and a tournament's standings appear
on the standings display, both without a reload.

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from api.tokens import Role
from tests.conftest import IN_CI
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.integration.test_tournament_run import run_tournament

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

CHROMIUM = Path("/usr/bin/chromium")
# The machine's network is closed: without the background-networking flags Chromium's own
# connections (updates, sync, field trials) are refused, many at a time.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 5000
SUITS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing (`make browser` installs it as root)"
        if IN_CI:
            pytest.fail(f"{message}, and CI=true forbids skipping")
        pytest.skip(message)
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def open_page(api: Api, browser: BrowserContext) -> Iterator[Callable[[str], Page]]:  # noqa: F811
    """Opens a path of the server; each page is marked so that a reload (which would drop the
    mark) is noticed, and closed before the server stops (its live stream with it)."""
    pages: list[Page] = []

    def open_path(path: str) -> Page:
        page = browser.new_page()
        pages.append(page)
        page.goto(api.base_url + path)
        page.evaluate("window.notReloaded = true")
        return page

    yield open_path
    for page in pages:
        page.close()


def card_text(code: str) -> str:
    return ("10" if code[0] == "T" else code[0]) + SUITS[code[1]]


class Croupier:
    """Sends a table's commands as the organiser."""

    def __init__(self, api: Api, table: str) -> None:  # noqa: F811
        self.api = api
        self.table = table
        self.token = api.token(Role.ORGANISER)

    def send(self, kind: str, **fields: Any) -> dict[str, Any]:
        response = self.api.call("POST", f"/tables/{self.table}/commands", self.token,
                                 json={"kind": kind, "command_id": uuid.uuid4().hex, **fields})
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    def play_while(self, phase: str) -> None:
        """Take the table's first legal step (draw or stand as the rules say) while in `phase`."""
        while self.view()["phase"] == phase:
            action = self.view(token=self.token)["legal_actions"][0]  # the rail sees no points
            if action["step"] in ("draw", "stand"):
                self.send("decide", side=action["side"], draw=action["step"] == "draw")
            else:
                self.send(action["step"])

    def view(self, path: str = "", token: str | None = None) -> Any:
        response = self.api.call("GET", f"/tables/{self.table}{path}", token)
        assert response.status_code == 200, response.text
        return response.json()


def test_a_coup_played_through_the_api_appears_on_the_table_page(
        api: Api, open_page: Callable[[str], Page]) -> None:  # noqa: F811
    opened = api.call("POST", "/tables", api.token(Role.ORGANISER),
                      json={"name": "salon", "variant": "punto-banco"})
    assert opened.status_code == 201, opened.text
    croupier = Croupier(api, "salon")
    for player in ("alice", "bob"):
        croupier.send("seat", player=player, chips=1000)
    croupier.send("shuffle")
    croupier.send("cut", player="alice", position=100)
    croupier.play_while("burning")

    page = open_page("/?table=salon")
    expect(page.locator("#status")).to_have_text("live", timeout=WAIT_MS)
    expect(page.locator("#rotation li")).to_have_text(["alice", "bob"])
    croupier.send("bet", player="bob", spot="punter", amount=50)
    expect(page.locator("#seats tbody tr").nth(1).locator("td")).to_have_text(
        ["bob", "1000", "50"], timeout=WAIT_MS)
    croupier.send("close-betting")

    croupier.send("deal")
    expect(page.locator("#hands .card")).to_have_count(1, timeout=WAIT_MS)  # as the rail sees it
    croupier.play_while("playing")  # the cards turned over, the coup settled
    settled = croupier.view()["coup"]
    faces = [card_text(c) for hand in settled["hands"] for c in hand["cards"]]
    assert len(faces) >= 4
    expect(page.locator("#hands .card:not(.down)")).to_have_text(faces, timeout=WAIT_MS)
    expect(page.locator("#hands .outcome")).to_have_count(1, timeout=WAIT_MS)
    croupier.play_while("settled")  # paid and closed: the coup goes to the last coups
    [coup] = croupier.view("/recall?last=1")
    expected_cards = " | ".join(
        f"{side} " + " ".join(card_text(c["card"]) for c in coup["cards"] if c["side"] == side)
        for side in dict.fromkeys(c["side"] for c in coup["cards"]))
    row = page.locator("#coups tr.coup").first
    expect(row.locator("td.cards")).to_have_text(expected_cards, timeout=WAIT_MS)
    outcome = coup["outcomes"]["punter"]
    winner = "tie" if outcome == "tie" else f"{outcome} wins"
    expect(row.locator("td.result")).to_contain_text(winner)
    assert page.evaluate("window.notReloaded") is True


def test_a_tournament_s_standings_appear_live_winner_first(
        api: Api, open_page: Callable[[str], Page], postgres_url: str) -> None:  # noqa: F811
    page = open_page("/?tournament=cup")
    expect(page.locator("#empty")).to_be_visible(timeout=WAIT_MS)  # nothing played yet

    director, tournament_id, _ = run_tournament(postgres_url, b"page", players=8)
    winner = next(r.player for r in director.state(tournament_id).results() if r.position == 1)
    rows = page.locator("#standings tbody tr")
    expect(rows).to_have_count(8, timeout=WAIT_MS)
    expect(rows.first.locator("td.player")).to_have_text(winner, timeout=WAIT_MS)
    expect(rows.first.locator("td.rank")).to_have_text("1")
    standings = api.call("GET", "/tournaments/cup/standings").json()
    assert standings[0]["player"] == winner and standings[0]["rank"] == 1
    expect(rows.locator("td.player")).to_have_text([s["player"] for s in standings])
    assert page.evaluate("window.notReloaded") is True
