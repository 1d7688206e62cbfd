"""The pages in headless Chromium (Debian's `chromium`, driven by playwright), with real clicks
and typing: a table's big screen follows a coup and fits the screen; an organiser sees the
disputes and publishes the results, the big screen showing the payouts and *Provisional* until
then; the lobby lists the tables and signs in with a token; a page says when the server is gone
and when it is back. The croupier's, the players' and the banker's pages are in
`test_page_table.py`, with this module's helpers (`browser`, `open_page`, `shoot`,
`open_table`). Each page is photographed at 1920x1080 and 1280x720 into `screenshots/` (kept
out of git) and checked for overflow: nothing wider than the window, and the big screen never
scrolls.

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import random
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from api.app import create_app
from api.tokens import Role
from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.services.disputes import DisputeService
from infra.services.tables import TableService
from projections.follower import Follower
from projections.registry import VIEWS
from projections.runner import Runner
from tests.client import CLIENT
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
             "/organiser": "organiser.js", "/?tournament=x": "tournament.js",
             "/slips?tournament=x": "slips.js"}
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
    final = {s["player"]: s["chips"] for s in api.call("GET", "/tournaments/cup/standings").json()}
    expect(rows.locator("td.chips")).to_have_text(  # each player's last stack, never empty
        [money(final[p["player"]]) for p in results["positions"]])
    shoot(page, "tournament-finished", scrolls=False)
    assert page.evaluate("window.notReloaded") is True


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
        self.views = Follower(Runner(self.service, VIEWS)).start()  # as its worker would
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
        self.views.stop()
        assert not self.thread.is_alive()


def test_a_page_says_when_the_server_is_gone_and_when_it_is_back(
        postgres_url: str, browser: BrowserContext) -> None:
    port = free_port()
    running = Server(postgres_url, port)
    base = f"http://127.0.0.1:{port}"
    organiser = Api(base, running.service).token(Role.ORGANISER)
    auth = {"Authorization": f"Bearer {organiser}"}
    opened = CLIENT.post(f"{base}/tables", json={"name": "phoenix", "variant": "punto-banco"},
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
        seated = CLIENT.post(f"{base}/tables/phoenix/commands", headers=auth, timeout=10,
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
    before = api.settled_events()  # the start's tables may still be opening
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
