"""The pages in headless Chromium (Debian's `chromium`, driven by playwright), with real clicks
and typing: a table's big screen follows a coup and fits the screen; a croupier deals a coup
from a physical shoe, sees the draw the tableau forces and records it; a player bets, and
calls banco at chemin de fer; a banker says « je donne » or shows down à deux tableaux; a
player places a secret bet (its SHA-256 commitment computed in the page) and reveals it after
the deal; an organiser sees the disputes and publishes the results, the big screen showing the
payouts and *Provisional* until then; the lobby lists the tables and signs in with a token; a
page says when the server is gone and when it is back. Each page is photographed at 1920x1080 and
1280x720 into `screenshots/` (kept out of git) and checked for overflow: nothing wider than
the window, and the big screen never scrolls.

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import hashlib
import random
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import uvicorn
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from api.app import create_app
from api.tokens import Role
from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import secret_commitment
from infra.services.disputes import DisputeService
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.conftest import IN_CI
from tests.e2e.test_api import KEY, Api, api, free_port  # noqa: F401 - the server fixture
from tests.integration.test_corrections import until_a_misread
from tests.integration.test_projections import Game
from tests.integration.test_tournament_run import run_tournament

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

CHROMIUM = Path("/usr/bin/chromium")
# The machine's network is closed: without the background-networking flags Chromium's own
# connections (updates, sync, field trials) are refused, many at a time.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WAIT_MS = 5000
SUITS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
SHOTS = Path(__file__).resolve().parents[2] / "screenshots"
SIZES = ((1920, 1080), (1280, 720))
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll("body *")].filter(node => {
    const box = node.getBoundingClientRect();
    return box.width > 0 && (box.right > width + 1 || box.left < -1);
  }).map(node => `${node.tagName.toLowerCase()}#${node.id}.${node.className}`);
  const unlabelled = [...document.querySelectorAll("input, select, button, textarea")].filter(
    node => !(node.labels && node.labels.length) && !node.getAttribute("aria-label") &&
            !node.textContent.trim()).map(node => node.outerHTML);
  return { wide, unlabelled, scrollWidth: document.documentElement.scrollWidth, width,
           scrollHeight: document.documentElement.scrollHeight, height: innerHeight };
}"""


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing (`make browser` installs it as root)"
        if IN_CI:
            pytest.fail(f"{message}, and CI=true forbids skipping")
        pytest.skip(message)
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=ARGS,
            viewport={"width": 1280, "height": 720})
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def open_page(api: Api, browser: BrowserContext) -> Iterator[Callable[..., Page]]:  # noqa: F811
    """Opens a path of the server, signed in with `token` if given (the tab's session
    storage, as the lobby keeps it); each page is marked so that a reload (which would drop
    the mark) is noticed, and closed before the server stops (its live stream with it)."""
    pages: list[Page] = []

    def open_path(path: str, token: str | None = None) -> Page:
        page = browser.new_page()
        pages.append(page)
        if token is not None:
            page.goto(api.base_url + "/static/sabot.css")
            page.evaluate("token => sessionStorage.setItem('sabot.token', token)", token)
        page.goto(api.base_url + path)
        page.evaluate("window.notReloaded = true")
        return page

    yield open_path
    for page in pages:
        page.close()


def shoot(page: Page, name: str, sizes: tuple[tuple[int, int], ...] = SIZES, *,
          scrolls: bool = True) -> None:
    """Photograph the page at each size and check that nothing is wider than the window (and,
    for a big screen, `scrolls=False`, that nothing is below it), and that every control has a
    name (a label, an aria-label or its text)."""
    SHOTS.mkdir(exist_ok=True)
    for width, height in sizes:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(150)  # a frame for the roads to fit their columns
        page.screenshot(path=str(SHOTS / f"{name}-{width}x{height}.png"))
        if (width, height) == SIZES[-1]:  # a small copy, for the README (docs/pages/)
            page.screenshot(path=str(SHOTS / f"{name}.jpg"), type="jpeg", quality=50)
        found = page.evaluate(OVERFLOW)
        assert found["wide"] == [] and found["scrollWidth"] <= width, (name, width, found)
        assert found["unlabelled"] == [], (name, found["unlabelled"])  # every control named
        if not scrolls:
            assert found["scrollHeight"] <= height, (name, height, found)


def card_text(code: str) -> str:
    return ("10" if code[0] == "T" else code[0]) + SUITS[code[1]]


class Organiser:
    """Sends a table's commands as the organiser (for what a test does not do in a page)."""

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


def open_table(api: Api, name: str, variant: str, **settings: Any) -> Organiser:  # noqa: F811
    opened = api.call("POST", "/tables", api.token(Role.ORGANISER),
                      json={"name": name, "variant": variant, "settings": settings})
    assert opened.status_code == 201, opened.text
    return Organiser(api, name)


def test_the_pages_and_their_assets(api: Api) -> None:  # noqa: F811
    """Every page is HTML under this origin's policy; its scripts and styles are served from
    the package; no script writes HTML; nothing outside `api/static` is served."""
    pages = {"/": "lobby.js", "/?table=x": "screen.js", "/screen?table=x": "screen.js",
             "/croupier?table=x": "croupier.js", "/player?table=x": "player.js",
             "/organiser": "organiser.js", "/?tournament=x": "tournament.js"}
    for path, script in pages.items():
        page = api.call("GET", path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
        assert f"/static/{script}" in assets and "/static/sabot.css" in assets
        for asset in assets:
            served = api.call("GET", asset)
            assert served.status_code == 200, asset
            assert "innerHTML" not in served.text and "http" not in served.text.split("\n", 1)[1]
    common = api.call("GET", "/static/common.js").text
    assert "/events?after=" in common and "Authorization" in common  # the stream, with the token
    assert api.call("GET", "/static/../app.py").status_code == 404


def test_a_coup_played_through_the_api_appears_on_the_table_screen(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    croupier = open_table(api, "salon", "punto-banco")
    for player in ("alice", "bob"):
        croupier.send("seat", player=player, chips=1000)
    croupier.send("shuffle")
    croupier.send("cut", player="alice", position=100)
    croupier.play_while("burning")

    page = open_page("/?table=salon")
    expect(page.locator("#status")).to_have_text("live", timeout=WAIT_MS)
    expect(page.locator("#phase")).to_have_text("Place your bets")
    croupier.send("bet", player="bob", spot="punter", amount=50)
    expect(page.locator("#seats tbody tr").nth(1).locator("td")).to_have_text(
        ["bob", "1000", "50"], timeout=WAIT_MS)
    expect(page.locator("#bets li")).to_have_text(["bob · 50 on punter"])
    expect(page.locator("#log li").first).to_have_text("bob bets 50 on punter")
    croupier.send("close-betting")

    croupier.send("deal")
    expect(page.locator("#hands .card")).to_have_count(1, timeout=WAIT_MS)  # as the rail sees it
    croupier.play_while("playing")  # the cards turned over, the coup settled
    settled = croupier.view()["coup"]
    faces = [card_text(c) for hand in settled["hands"] for c in hand["cards"]]
    assert len(faces) >= 4
    expect(page.locator("#hands .card:not(.down)")).to_have_text(faces, timeout=WAIT_MS)
    expect(page.locator("#hands .outcome")).to_have_count(1, timeout=WAIT_MS)
    reds = [face for face in faces if face[-1] in "♥♦"]
    expect(page.locator("#hands .card.red")).to_have_text(reds)
    croupier.play_while("settled")  # paid and closed: the coup goes to the last coups
    [coup] = croupier.view("/recall?last=1")
    expected_cards = " | ".join(
        f"{side} " + " ".join(card_text(c["card"]) for c in coup["cards"] if c["side"] == side)
        for side in dict.fromkeys(c["side"] for c in coup["cards"]))
    row = page.locator("#coups tr.coup").first
    expect(row.locator("td.cards")).to_have_text(expected_cards, timeout=WAIT_MS)
    outcome = coup["outcomes"]["punter"]
    points = coup["points"]
    result = {"tie": f"tie at {points['punter']}",
              "banker": f"banker {points['banker']} beats punter {points['punter']}",
              "punter": f"punter {points['punter']} beats banker {points['banker']}"}[outcome]
    expect(row.locator("td.result")).to_have_text(result)
    # between coups the screen keeps the last coup's cards, and the bead road has its result
    expect(page.locator("#hands .caption")).to_have_text(f"last coup ({coup['coup']})")
    expect(page.locator("#roads .bead")).to_have_text([outcome[0].upper()], timeout=WAIT_MS)
    assert page.evaluate("window.notReloaded") is True


def test_big_screens_fit_the_projector_with_their_roads(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    for variant in (Variant.CHEMIN_DE_FER, Variant.DEUX_TABLEAUX):
        Game.open(api.service, variant.value, variant, players=5).coups(10)
    page = open_page("/screen?table=chemin-de-fer")
    roads = api.call("GET", "/tables/chemin-de-fer/roads").json()
    [board] = roads["boards"]
    expect(page.locator("#roads .bead")).to_have_count(len(board["bead"]), timeout=WAIT_MS)
    expect(page.locator("#rotation li.holder")).to_contain_text("holds the shoe")
    shoot(page, "screen-chemin-de-fer", scrolls=False)
    page = open_page("/screen?table=deux-tableaux")
    expect(page.locator("#roads .scoreboard h2")).to_have_text(["right tableau",
                                                                "left tableau"], timeout=WAIT_MS)
    expect(page.locator("#hands .hand")).to_have_count(3)
    shoot(page, "screen-deux-tableaux", ((1600, 900), *SIZES), scrolls=False)


def test_a_tournament_s_standings_appear_live_winner_first(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
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
    # finished: the winner, and the results with their prizes in the results' order
    results = api.call("GET", "/tournaments/cup/results").json()
    expect(page.locator("#winner")).to_have_text(f"Winner: {winner}")
    expect(page.locator("#standings-title")).to_have_text("Results")
    expect(rows.locator("td.player")).to_have_text([p["player"] for p in results["positions"]])
    expect(rows.first.locator("td").last).to_have_text(money(results["positions"][0]["prize"]))
    shoot(page, "tournament-finished", scrolls=False)
    assert page.evaluate("window.notReloaded") is True


def pick(page: Page, code: str) -> None:
    """Pick a card in the croupier's card entry: its rank, then its suit."""
    rank = "10" if code[0] == "T" else code[0]
    suit = {"s": "spades", "h": "hearts", "d": "diamonds", "c": "clubs"}[code[1]]
    page.get_by_title(f"rank {rank}", exact=True).click()
    page.get_by_title(suit, exact=True).click()


def test_a_croupier_deals_a_physical_shoe_and_records_the_forced_draw(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    organiser = open_table(api, "pit", "punto-banco", burn="none")
    for player in ("alice", "bob"):
        organiser.send("seat", player=player, chips=1000)
    bob = api.token(Role.PLAYER, player="bob")
    page = open_page("/croupier?table=pit", api.token(Role.CROUPIER, tables=("pit",)))
    expect(page.locator("#status")).to_have_text("live", timeout=WAIT_MS)

    expect(page.get_by_label("physical shoe")).to_be_checked()
    page.get_by_role("button", name="Shuffle a new shoe").click()
    page.get_by_label("cut at card").fill("60")
    page.get_by_role("button", name="Cut the shoe").click()
    expect(page.locator("#phase")).to_have_text("Bets are open", timeout=WAIT_MS)
    placed = api.call("POST", "/tables/pit/commands", bob,
                      json={"kind": "bet", "player": "bob", "spot": "punter", "amount": 50,
                            "command_id": "bob-bets"})
    assert placed.status_code == 200, placed.text
    expect(page.locator("#bets tbody tr td")).to_have_text(["bob", "punter", "50", "house"],
                                                           timeout=WAIT_MS)
    page.get_by_role("button", name="Close betting").focus()
    page.keyboard.press("Enter")  # the console works from the keyboard

    deal = page.get_by_role("button", name="Deal to the punter")
    expect(deal).to_be_disabled(timeout=WAIT_MS)  # a physical shoe's card is entered first
    for code, to in (("4h", "punter"), ("7s", "banker"), ("Tc", "punter")):
        if code == "Tc":  # by keyboard: a rank and a suit are radio buttons
            page.get_by_role("radio", name="10", exact=True).focus()
            page.keyboard.press("Space")
            page.get_by_role("radio", name="clubs").focus()
            page.keyboard.press("Space")
        else:
            pick(page, code)
        page.get_by_role("button", name=f"Deal {card_text(code)} to the {to}").click()
        expect(page.locator("#hands .card")).to_have_count(
            1 + ("4h", "7s", "Tc").index(code), timeout=WAIT_MS)
    pick(page, "Kd")
    expect(page.locator("#preview")).to_have_text(
        "K♦ goes to the banker (punter 4, banker 7); the tableau: the punter on 4 must draw",
        timeout=WAIT_MS)
    page.get_by_role("button", name="Deal K♦ to the banker").click()
    page.get_by_role("button", name="Turn over the naturals").click()
    expect(page.locator("#tableau")).to_have_text("the tableau: the punter on 4 must draw",
                                                  timeout=WAIT_MS)
    expect(page.get_by_role("button", name="Stand for the punter")).to_have_count(0)
    shoot(page, "croupier")
    page.get_by_role("button", name="Draw for the punter").click()
    pick(page, "5d")
    expect(page.locator("#preview")).to_have_text(
        "5♦ goes to the punter (punter 9, banker 7); the tableau: the banker on 7 must stand",
        timeout=WAIT_MS)
    page.get_by_role("button", name="Deal 5♦ to the punter").click()
    page.get_by_role("button", name="Stand for the banker").click()
    page.get_by_role("button", name="Settle the coup").click()
    expect(page.locator("#hands .outcome")).to_have_text("punter wins", timeout=WAIT_MS)
    page.get_by_role("button", name="Pay the coup").click()
    expect(page.locator("#error")).to_be_empty()
    [coup] = organiser.view("/recall?last=1")
    assert [(c["side"], c["card"], c["third"]) for c in coup["cards"]] == [
        ("punter", "4h", False), ("banker", "7s", False), ("punter", "Tc", False),
        ("banker", "Kd", False), ("punter", "5d", True)]
    decisions = [(type(e).__name__, e.side, e.actor)
                 for e in api.service.events_of(Table.create_id("pit"))
                 if type(e).__name__ in ("ThirdCardAsked", "HandStood")]
    assert decisions == [("ThirdCardAsked", "punter", "@croupier"),
                         ("HandStood", "banker", "@croupier")]
    assert coup["outcomes"] == {"punter": "punter"} and coup["points"] == {"punter": 9,
                                                                          "banker": 7}
    assert page.evaluate("window.notReloaded") is True


def test_a_player_bets_within_the_limits_and_calls_banco(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    house = open_table(api, "salle", "punto-banco", min_stake=10, max_stake=500)
    house.send("seat", player="dan", chips=1000)
    house.send("shuffle")
    house.send("cut", player="dan", position=100)
    house.play_while("burning")
    page = open_page("/player?table=salle", api.token(Role.PLAYER, player="dan"))
    expect(page.locator("#limits")).to_have_text("limits: 10 to 500 · you have 1,000",
                                                 timeout=WAIT_MS)
    page.get_by_label("on").select_option("banker")
    page.get_by_label("amount").fill("600")
    page.get_by_role("button", name="Place bet").click()  # over the maximum: the form says so
    assert page.get_by_label("amount").evaluate("input => input.validity.rangeOverflow")
    page.get_by_label("amount").fill("50")
    page.get_by_label("amount").press("Enter")  # the keyboard places it too
    expect(page.locator("#bets li")).to_have_text(["50 on the banker"], timeout=WAIT_MS)
    assert house.view()["bets"] == [{"player": "dan", "spot": "banker", "amount": 50}]  # once
    shoot(page, "player")

    cercle = open_table(api, "baccara", "chemin-de-fer", decision_seconds=30)
    for player in ("alice", "bob"):
        cercle.send("seat", player=player, chips=1000)
    cercle.send("shuffle")
    cercle.send("cut", player="alice", position=100)
    cercle.play_while("burning")
    cercle.send("award-bank", player="alice", amount=200, how="auction")
    page = open_page("/player?table=baccara", api.token(Role.PLAYER, player="bob"))
    page.get_by_role("button", name="Banco: cover the bank of 200").click()
    expect(page.locator("#log li").first).to_have_text("bob calls banco!", timeout=WAIT_MS)
    cercle.send("close-betting")
    expect(page.locator("#bets li .tag")).to_have_text(["covered"], timeout=WAIT_MS)
    expect(page.locator("#bets li")).to_have_text(["200 on the punter covered"])
    for _ in range(4):
        cercle.send("deal")
    # bob holds the punters' hand: he sees its two cards, face down to everyone else
    mine = page.locator("#mine .card:not(.down)")
    expect(mine).to_have_count(2, timeout=WAIT_MS)
    punter = next(h for h in cercle.view(token=cercle.token)["coup"]["hands"]
                  if h["side"] == "punter")
    expect(mine).to_have_text([card_text(c) for c in punter["cards"]])
    assert cercle.view()["coup"]["hands"][0]["cards"] == [None, None]
    cercle.send("show-naturals")  # no natural: bob's hand, on 6 or 7, must stand
    expect(page.locator("#clock")).to_have_text(re.compile(r"^(30|2\d) s to decide$"),
                                                timeout=WAIT_MS)
    expect(page.get_by_role("button", name="Draw")).to_have_count(0)
    page.get_by_role("button", name="Stand (the tableau says so)").click()
    expect(page.locator("#clock")).to_be_hidden(timeout=WAIT_MS)
    assert cercle.view(token=cercle.token)["legal_actions"][0]["side"] == "banker"
    assert page.evaluate("window.notReloaded") is True


def test_a_player_bets_or_passes_in_turn(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    house = open_table(api, "en-tour", "punto-banco", min_stake=10, betting_order="rotating")
    for player in ("dan", "eve"):
        house.send("seat", player=player, chips=1000)
    house.send("shuffle")
    house.send("cut", player="dan", position=100)
    house.play_while("burning")
    eve = open_page("/player?table=en-tour", api.token(Role.PLAYER, player="eve"))
    expect(eve.locator("#limits")).to_contain_text("bets are closed", timeout=WAIT_MS)
    expect(eve.get_by_role("button", name="Place bet")).to_be_disabled()  # dan's turn first
    expect(eve.get_by_role("button", name="Pass (no bet this coup)")).to_have_count(0)
    dan = open_page("/player?table=en-tour", api.token(Role.PLAYER, player="dan"))
    dan.get_by_role("button", name="Pass (no bet this coup)").click()
    expect(eve.get_by_role("button", name="Place bet")).to_be_enabled(timeout=WAIT_MS)
    expect(dan.get_by_role("button", name="Place bet")).to_be_disabled()
    assert [a["actor"] for a in house.view()["legal_actions"] if a["step"] == "bet"] == ["eve"]


def test_the_lobby_lists_tables_and_signs_in_with_a_token(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    for name in ("alpha", "beta"):
        open_table(api, name, "chemin-de-fer").send("seat", player="alice", chips=500)
    created = api.call("POST", "/tournaments", api.token(Role.ORGANISER),
                       json={"name": "open", "preset": "chemin-de-fer-freeze-out"})
    assert created.status_code == 201, created.text
    page = open_page("/")
    tables = page.locator("#tables > li")
    expect(tables).to_have_count(2, timeout=WAIT_MS)
    expect(page.locator("#tournaments > li")).to_have_text(["open registering · freeze-out"])
    expect(page.get_by_role("link", name="open")).to_have_attribute("href", "/?tournament=open")
    expect(tables.first).to_contain_text("alpha")
    expect(page.get_by_role("link", name="croupier console")).to_have_count(0)  # anonymous

    page.get_by_label("token").fill("sabot_not-a-token")
    page.get_by_label("token").press("Enter")
    expect(page.locator("#error")).to_have_text("this token is not known", timeout=WAIT_MS)
    page.get_by_label("token").fill(api.token(Role.CROUPIER, tables=("beta",)))
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#who")).to_have_text("signed in as croupier", timeout=WAIT_MS)
    consoles = page.get_by_role("link", name="croupier console")
    expect(consoles).to_have_count(1)  # only the table this croupier serves
    expect(tables.nth(1).get_by_role("link", name="croupier console")).to_be_visible()
    shoot(page, "lobby")
    consoles.click()
    expect(page).to_have_url(f"{api.base_url}/croupier?table=beta")
    expect(page.get_by_role("button", name="Shuffle a new shoe")).to_be_visible(timeout=WAIT_MS)


class Server:
    """A server on its own service (closed with it, as a process's would be)."""

    def __init__(self, postgres_url: str, port: int) -> None:
        self.service = TableService(url=postgres_url, secret_key=KEY)
        self.server = uvicorn.Server(uvicorn.Config(
            create_app(service=self.service), host="127.0.0.1", port=port, log_level="warning",
            timeout_graceful_shutdown=1))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()


def test_a_page_says_when_the_server_is_gone_and_when_it_is_back(
        postgres_url: str, browser: BrowserContext) -> None:
    port = free_port()
    running = Server(postgres_url, port)
    base = f"http://127.0.0.1:{port}"
    organiser = Api(base, running.service).token(Role.ORGANISER)
    auth = {"Authorization": f"Bearer {organiser}"}
    opened = httpx.post(f"{base}/tables", json={"name": "phoenix", "variant": "punto-banco"},
                        headers=auth, timeout=10)
    assert opened.status_code == 201, opened.text
    page = browser.new_page()
    try:
        page.goto(f"{base}/screen?table=phoenix")
        page.evaluate("window.notReloaded = true")
        status = page.locator("#status")
        expect(status).to_have_text("live", timeout=WAIT_MS)
        running.stop()
        expect(status).to_have_text("connection lost · reconnecting…", timeout=WAIT_MS)
        running = Server(postgres_url, port)
        expect(status).to_have_text("connection back · live", timeout=WAIT_MS)
        seated = httpx.post(f"{base}/tables/phoenix/commands", headers=auth, timeout=10,
                            json={"kind": "seat", "player": "zoe", "chips": 700,
                                  "command_id": "zoe"})
        assert seated.status_code == 200, seated.text
        expect(page.locator("#seats tbody td").first).to_have_text("zoe", timeout=WAIT_MS)
        assert page.evaluate("window.notReloaded") is True
    finally:
        page.close()
        running.stop()


def money(amount: int) -> str:
    return f"{amount:,}"


def test_an_organiser_runs_a_tournament_and_its_big_screen_follows(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    token = api.token(Role.ORGANISER)
    page = open_page("/organiser", token)
    page.get_by_label("name", exact=True).fill("spring")
    page.get_by_label("preset").select_option("punto-banco-heats")
    page.get_by_label("coups a round").fill("2")
    page.get_by_label("tables", exact=True).fill("2")
    page.get_by_label("starting chips").fill("2000")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#summary")).to_contain_text("registering", timeout=WAIT_MS)
    names = ["ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal", "ivy"]
    for n, player in enumerate(names, 1):
        page.get_by_label("player", exact=True).fill(player)
        page.get_by_label("player", exact=True).press("Enter")  # the keyboard registers
        expect(page.locator("#players tbody tr")).to_have_count(n, timeout=WAIT_MS)
    page.get_by_role("button", name="remove ivy").click()
    expect(page.locator("#players tbody tr")).to_have_count(8, timeout=WAIT_MS)
    shoot(page, "organiser")
    page.get_by_role("button", name="Start (seat the players)").click()
    expect(page.locator("#error")).to_be_empty()
    expect(page.locator("#summary")).to_contain_text("running", timeout=WAIT_MS)
    expect(page.locator("#director")).to_contain_text("no director yet")  # no worker here
    expect(page.locator("#tables > li")).to_have_count(2, timeout=WAIT_MS)

    page.get_by_label("what").select_option("correct-chips")
    page.get_by_label("player concerned").fill("ann")
    page.get_by_label("chips (+/−)").fill("100")
    before = api.events()
    page.get_by_role("button", name="Record the intervention").click()  # no reason: refused
    assert page.get_by_label("reason (required)").evaluate("f => f.validity.valueMissing")
    assert api.events() == before
    page.get_by_label("reason (required)").fill("miscounted at the draw")
    page.get_by_role("button", name="Record the intervention").click()
    expect(page.locator("#error")).to_be_empty()
    expect(page.get_by_label("reason (required)")).to_have_value("", timeout=WAIT_MS)

    screen = open_page("/?tournament=spring")
    view = api.call("GET", "/tournaments/spring").json()
    expect(screen.locator("#players")).to_have_text("8 of 8", timeout=WAIT_MS)
    expect(screen.locator("#average")).to_have_text(money(view["average_stack"]))
    assert view["average_stack"] == (2100 + 7 * 2000) // 8
    expect(screen.locator("#pool")).to_have_text(money(view["prize_pool"]))
    expect(screen.locator("#payouts li")).to_have_text(  # the prize table before the finish
        [f"{n}.{money(a)}" for n, a in enumerate(view["payouts"], 1)])
    assert sum(view["payouts"]) == view["prize_pool"] > 0
    expect(screen.locator("#round")).to_have_text(f"{view['stage']} · {view['round']}")
    standings = api.call("GET", "/tournaments/spring/standings").json()
    expect(screen.locator("#standings td.player")).to_have_text([s["player"] for s in standings])
    shoot(screen, "tournament", scrolls=False)

    table = view["tables"][0]["name"]
    Game(api.service, table, Table.create_id(table), random.Random(table)).coups(1)
    settled = api.call("GET", "/tournaments/spring/standings").json()
    assert settled != standings  # a coup settled moved chips
    expect(screen.locator("#standings td.chips")).to_have_text(
        [money(s["chips"]) for s in settled], timeout=2 * WAIT_MS)
    assert screen.evaluate("window.notReloaded") is True
    # a player of that table sees their place in the tournament
    seated = view["tables"][0]["players"][0]["player"]
    mine = open_page(f"/player?table={table}", api.token(Role.PLAYER, player=seated))
    rank = next(s["rank"] for s in settled if s["player"] == seated)
    expect(mine.locator("#position")).to_have_text(f"{rank} of 8 · spring", timeout=WAIT_MS)


def test_an_organiser_sees_the_disputes_and_publishes_the_results(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    _, tournament_id, _ = run_tournament(postgres_url, b"publish-page", players=8)
    table = next(e.table for e in api.service.events_of(tournament_id)
                 if isinstance(e, Tournament.PlayerSeatedAt))
    view = api.call("GET", "/tournaments/cup").json()
    with DisputeService(url=postgres_url) as disputes:
        dispute_id = disputes.open(Table.create_id(table), 1, reason="the third card",
                                   by="p03", command_id="dispute/p03/1")  # not replayed yet
        page = open_page("/organiser?tournament=cup", api.token(Role.ORGANISER))
        rows = page.locator("#disputes tbody tr")
        expect(rows).to_have_count(1, timeout=WAIT_MS)
        expect(rows.first.locator("td")).to_have_text(
            [table, "1", "p03", "the third card", "replaying", "open", ""])
        expect(page.locator("#payouts li")).to_have_text([money(a) for a in view["payouts"]])
        expect(page.locator("#results-state")).to_contain_text("provisional")
        screen = open_page("/?tournament=cup")
        expect(screen.locator("#provisional")).to_have_text("Provisional", timeout=WAIT_MS)
        expect(screen.locator("#payouts li")).to_have_count(len(view["payouts"]))
        shoot(screen, "tournament-provisional", scrolls=False)

        before = api.events()
        page.get_by_role("button", name="Publish results").click()  # a dispute is open
        expect(page.locator("#error")).to_contain_text(f"disputes are still open: coup 1 at "
                                                       f"{table}", timeout=WAIT_MS)
        assert api.events() == before
        disputes.replay(dispute_id)
    expect(rows.first.locator("td").nth(4)).to_have_text("decided", timeout=2 * WAIT_MS)
    expect(rows.first.locator("td").nth(5)).to_have_text("consistent")
    page.get_by_role("button", name="Publish results").click()
    expect(page.locator("#results-state")).to_contain_text("published by @organiser",
                                                           timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()
    expect(page.get_by_role("button", name="Publish results")).to_be_disabled()
    assert api.call("GET", "/tournaments/cup/results").json()["published"] is True
    shoot(page, "organiser-results")
    expect(screen.locator("#provisional")).to_have_text("Final", timeout=2 * WAIT_MS)
    assert screen.evaluate("window.notReloaded") is True


def test_the_page_s_sha256_is_hashlib_s(api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    """`api/static/sha256.js` (no crypto.subtle over plain HTTP) against hashlib: the empty
    string, the padding's edges (55, 56 and 64 bytes), many blocks, and UTF-8 beyond ASCII."""
    page = open_page("/player?table=nowhere")
    for text in ("", "abc", "a" * 55, "a" * 56, "a" * 64, "b" * 1000, "tie é ♥ 😀",
                 "sabot-secret-bet-v1/banker/50/" + "5e" * 16):
        assert page.evaluate("text => Sha256.hex(text)", text) == hashlib.sha256(
            text.encode()).hexdigest(), text


def test_a_player_places_a_secret_bet_and_reveals_it_after_the_deal(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    final = TournamentSettings(
        variant=Variant.PUNTO_BANCO, seats_per_table=6, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=3, prizes=(10000,), buy_in=10,
        stages=(Stage(name="final", rounds=2, secret_bet=True),))
    director = Director(TableService(url=postgres_url))
    tournaments = director.tournaments
    tournament_id = tournaments.create("secret", final, seed=b"secret", command_id="create")
    tournaments.register(tournament_id, "ann", command_id="reg-ann")
    for n in range(3):
        tournaments.register(tournament_id, f"bot-{n}", bot=True, command_id=f"reg-{n}")
    tournaments.start(tournament_id, command_id="start")
    director.tick(tournament_id)  # the first round starts
    table = tournaments.state(tournament_id).entrant("ann").table
    page = open_page(f"/player?table={table}", api.token(Role.PLAYER, player="ann"))
    expect(page.locator("#secret-panel")).to_be_visible(timeout=WAIT_MS)
    page.get_by_label("secret spot").select_option("banker")
    page.get_by_label("secret stake").fill("50")
    page.get_by_role("button", name="Place the secret bet").click()
    expect(page.locator("#secret-state")).to_contain_text("Placed on coup 1: 50 on the banker",
                                                          timeout=WAIT_MS)
    expect(page.locator("#secret-error")).to_be_empty()
    events = api.service.events_of(tournament_id)
    [placed] = [e for e in events if isinstance(e, Tournament.SecretBetPlaced)]
    assert placed.player == "ann" and placed.actor == "ann" and placed.coup == 1
    assert "banker" not in str(msgspec.to_builtins(vars(placed)))  # the commitment only

    page.get_by_role("button", name="Reveal the secret bet").click()  # before the deal
    expect(page.locator("#secret-error")).to_contain_text("not dealt yet", timeout=WAIT_MS)
    while tournaments.state(tournament_id).steps < 1 or tournaments.state(
            tournament_id).step is not None:
        director.tick(tournament_id)  # the coup is dealt
    before = api.service.state(Table.create_id(table)).holding("ann")
    page.get_by_role("button", name="Reveal the secret bet").click()
    expect(page.locator("#secret-state")).to_contain_text("Revealed: 50 on the banker",
                                                          timeout=WAIT_MS)
    expect(page.locator("#secret-error")).to_be_empty()
    [revealed] = [e for e in api.service.events_of(tournament_id)
                  if isinstance(e, Tournament.SecretBetRevealed)]
    assert (revealed.player, revealed.spot, revealed.amount) == ("ann", "banker", 50)
    assert secret_commitment("banker", 50, revealed.nonce) == placed.commitment
    assert len(bytes.fromhex(revealed.nonce)) == 16
    after = api.service.state(Table.create_id(table)).holding("ann")
    assert after == before + revealed.delta and revealed.delta in (-50, 47, 0)
    expect(page.locator("#secret-state")).to_contain_text(
        {-50: "lost 50", 47: "won 47", 0: "a push"}[revealed.delta])
    expect(page.locator("#chips")).to_have_text(money(after), timeout=WAIT_MS)
    expect(page.get_by_role("button", name="Reveal the secret bet")).to_be_hidden()
    shoot(page, "player-secret-bet")


def test_the_banker_gives_a_card_then_shows_down_at_deux_tableaux(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    """À deux tableaux the banker speaks first: « je donne » (OfferCard) or show down
    (ShowDown), two buttons of the banker's player view, clicked on two coups."""
    game = Game.open(api.service, "banque", Variant.DEUX_TABLEAUX, players=4, tournament=None)
    pages: dict[str, Page] = {}
    for button, recorded in (("Give a card (« je donne »)", Table.CardOffered),
                             ("Show down", Table.BankerShowedDown)):
        for _ in range(400):  # the bots play on to the banker's word
            coup = game.state.coup
            if coup is not None and coup.awaits_offer():
                break
            game.step()
        banker = game.state.banker
        assert banker is not None and game.state.coup is not None
        if banker not in pages:
            pages[banker] = open_page("/player?table=banque",
                                      api.token(Role.PLAYER, player=banker))
        page = pages[banker]
        offered = page.get_by_role("button", name="Give a card (« je donne »)")
        shown = page.get_by_role("button", name="Show down")
        expect(offered).to_be_visible(timeout=WAIT_MS)
        expect(shown).to_be_visible()
        coup_number = game.state.coup_number
        page.get_by_role("button", name=button).click()
        expect(offered).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator("#error")).to_be_empty()
        [event] = [e for e in api.service.events_of(game.table_id)
                   if isinstance(e, recorded) and e.coup == coup_number]
        assert event.actor == banker
        coup = game.state.coup
        assert coup is not None and not coup.awaits_offer()
        if recorded is Table.BankerShowedDown:  # no third card: settled as the cards lie
            assert [step.step.value for step in coup.legal_steps()] == ["settle"]
        game.coups(1)  # the croupier's steps to the coup's end
    shoot(next(iter(pages.values())), "player-deux-tableaux")


def test_the_organiser_approves_a_dispute_s_correction_from_the_console(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    service = TableService(url=postgres_url)
    _, tournament_id, (table_id, coup) = until_a_misread(service, "fix")  # coups to correct
    with DisputeService(url=postgres_url) as disputes:
        dispute = disputes.replay(disputes.open(table_id, coup, reason="a misread card",
                                                by="@croupier", command_id="misread"))
    assert dispute.corrections
    name = service.table(table_id).name
    page = open_page("/organiser?tournament=fix", api.token(Role.ORGANISER))
    approve = page.get_by_role("button", name=f"approve the correction of coup {coup} at {name}")
    player, delta = sorted(dispute.corrections.items())[0]
    expect(approve).to_contain_text(f"{player} {'+' if delta > 0 else ''}{money(delta)}",
                                    timeout=WAIT_MS)
    status = page.locator("#disputes tbody tr").first.locator("td").nth(4)
    expect(status).to_have_text("awaiting approvals")
    approve.click()
    expect(status).to_have_text("awaiting approvals · organiser @organiser", timeout=WAIT_MS)
    expect(approve).to_have_count(0)
    expect(page.locator("#error")).to_be_empty()
    second = api.call("POST", f"/disputes/{dispute.id}/approvals", api.token(Role.AUDITOR))
    assert second.status_code == 201, second.text
    expect(status).to_have_text("corrected · organiser @organiser · auditor @auditor",
                                timeout=2 * WAIT_MS)
    made = [e for e in api.service.events_of(tournament_id)
            if isinstance(e, Tournament.InterventionMade) and e.kind == "correct-chips"]
    assert {e.player: e.chips_after - e.chips_before for e in made} == dispute.corrections
    shoot(page, "organiser-correction")
