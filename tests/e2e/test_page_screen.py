"""The room's pages in headless Chromium with real clicks (`test_page`'s browser and helpers):
the tournament's big screen in full screen counts down a round's coups, announces its last
coup (seen and, once switched on, heard), counts a break down and says when the next round
begins; an announcement typed in the organiser's console appears on the big screen's ticker;
a pause shows "Paused" on every page of the tournament (player, croupier, table screen, big
screen, organiser) within 2 s, and the resume takes it away.

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from api.tokens import Role
from domain.game.settings import Variant
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Limits, RoundBreak, Stage
from domain.tournament.settings import TournamentSettings
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import (  # noqa: F401 - the fixtures
    SHOTS,
    WAIT_MS,
    browser,
    open_page,
    shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PAUSE_MS = 2000  # every page of the tournament says "Paused" within this
BREAK = RoundBreak(after_round=1, minutes=0.15)  # 9 s: fractions of a minute, for a test
ROOM = TournamentSettings(
    variant=Variant.PUNTO_BANCO, seats_per_table=6, starting_chips=1000, min_stake=10,
    max_stake=100, coups_per_round=2, prizes=(10000,), buy_in=10, breaks=(BREAK,),
    stages=(Stage(name="heats", rounds=2, minutes=30, limits=(Limits(min_stake=10, max_stake=100),
                                                  Limits(min_stake=20, max_stake=200))),))


def room(postgres_url: str, name: str, people: tuple[str, ...] = (),
         players: int = 4) -> tuple[Director, uuid.UUID]:
    """A started tournament of `people` and house bots (`players` in all), its director run by
    the test one step at a time."""
    director = Director(TableService(url=postgres_url))
    tournaments = director.tournaments
    tournament_id = tournaments.create(name, ROOM, seed=name.encode(), command_id="create")
    for n, player in enumerate(people):
        tournaments.register(tournament_id, player, command_id=f"reg-{n}")
    for n in range(players - len(people)):
        tournaments.register(tournament_id, f"bot-{n}", bot=True, command_id=f"bot-{n}")
    tournaments.start(tournament_id, command_id="start")
    return director, tournament_id


def test_the_full_screen_clock_announces_the_last_coup_and_counts_the_break_down(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    director, tournament_id = room(postgres_url, "evening")
    state = lambda: director.tournaments.state(tournament_id)  # noqa: E731
    screen = open_page("/?tournament=evening")
    expect(screen.locator("#status")).to_have_text("live", timeout=WAIT_MS)
    screen.get_by_role("button", name="Full screen").click()
    expect(screen.locator("#clock-board")).to_be_visible()
    expect(screen.locator("#numbers")).to_be_hidden()
    screen.get_by_role("button", name="Sound off").click()  # the click browsers require
    expect(screen.get_by_role("button", name="Sound on")).to_have_attribute("aria-pressed", "true")

    director.tick(tournament_id)  # round 1 starts: 2 coups
    expect(screen.locator("#big-round")).to_have_text("heats · round 1", timeout=WAIT_MS)
    expect(screen.locator("#big-clock")).to_have_text(re.compile(r"^(30:00|29:5\d)$"),
                                                      timeout=WAIT_MS)
    expect(screen.locator("#big-caption")).to_have_text("left in round 1 · 2 coups left")
    expect(screen.locator("#next-limits")).to_have_text("Next round: 20 to 200")
    expect(screen.locator("#alert")).to_have_text("Round 1 begins")
    while state().steps < 1 or state().step is not None:
        director.tick(tournament_id)  # the first coup is played: the next is the last
    expect(screen.locator("#alert")).to_have_text("Last coup of round 1", timeout=WAIT_MS)
    expect(screen.locator("#big-caption")).to_have_text("left in round 1 · 1 coup left")
    board = screen.locator("#clock-board")
    expect(board).to_have_attribute("data-beeps", "4")  # the switch's, round 1's, then two
    screen.wait_for_timeout(2500)  # the alert's flash over, for the photograph
    shoot(screen, "screen-clock", scrolls=False)

    while state().break_clock is None:
        director.tick(tournament_id)  # the last coup, the round's end, the break
    expect(screen.locator("#big-caption")).to_have_text("Break · round 2 next", timeout=WAIT_MS)
    expect(screen.locator("#alert")).to_have_text("End of round 1")
    # the break is named, and what follows it (not the next stage beside the round played)
    expect(screen.locator("#round")).to_have_text("Break · round 2 next")
    expect(screen.locator("#big-round")).to_have_text("heats · round 2")
    expect(screen.locator("#big-clock")).to_have_text(re.compile(r"^0:0[6-9]$"))
    expect(screen.locator("#big-clock")).to_have_text(re.compile(r"^0:0[0-4]$"),
                                                      timeout=2 * WAIT_MS)  # counting down
    [started] = [e for e in api.service.events_of(tournament_id)
                 if isinstance(e, Tournament.BreakStarted)]
    assert (started.round, started.seconds) == (1, 9.0)
    while state().round < 2:  # the director holds round 2 until the break is over
        director.tick(tournament_id)
        time.sleep(0.1)
    assert time.time() >= started.at + started.seconds
    expect(screen.locator("#alert")).to_have_text("Round 2 begins", timeout=WAIT_MS)
    expect(screen.locator("#big-round")).to_have_text("heats · round 2")
    expect(screen.locator("#big-caption")).to_have_text("left in round 2 · 2 coups left")
    expect(board).to_have_attribute("data-beeps", "8")  # then 3 at the end, 1 at round 2


def test_an_announcement_typed_in_the_console_runs_on_the_big_screen(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    room(postgres_url, "told")
    screen = open_page("/?tournament=told")
    expect(screen.locator("#status")).to_have_text("live", timeout=WAIT_MS)
    expect(screen.locator("#ticker")).to_be_hidden()
    console = open_page("/organiser?tournament=told", api.token(Role.ORGANISER))
    typed = console.get_by_label("announcement to the room (big screen)")
    typed.fill("The bar closes at midnight")
    console.get_by_role("button", name="Announce").click()
    expect(typed).to_have_value("", timeout=WAIT_MS)
    expect(console.locator("#error")).to_be_empty()
    expect(screen.locator("#ticker-text")).to_have_text("The bar closes at midnight",
                                                        timeout=WAIT_MS)
    typed.fill("Round 2 starts after a short break")
    typed.press("Enter")
    expect(screen.locator("#ticker-text")).to_have_text("Round 2 starts after a short break",
                                                        timeout=WAIT_MS)
    expect(console.locator("#announced li")).to_have_text(
        ["Round 2 starts after a short break", "The bar closes at midnight"])
    made = [e.text for e in api.service.events_of(Tournament.create_id("told"))
            if isinstance(e, Tournament.AnnouncementMade)]
    assert made == ["The bar closes at midnight", "Round 2 starts after a short break"]


def test_standings_that_do_not_fit_page_through_by_themselves(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    room(postgres_url, "crowd", players=17)
    screen = open_page("/?tournament=crowd")
    rows = screen.locator("#standings tbody tr")
    expect(screen.locator("#standings-page")).to_have_text("page 1 of 2", timeout=WAIT_MS)
    expect(rows).to_have_count(14)
    first = rows.first.locator("td.player").text_content()
    shoot(screen, "screen-standings-paged", scrolls=False)  # 14 rows and the page fit
    expect(screen.locator("#standings-page")).to_have_text("page 2 of 2", timeout=3 * WAIT_MS)
    expect(rows).to_have_count(3)
    expect(rows.first.locator("td.player")).not_to_have_text(first or "")  # the rows after
    expect(screen.locator("#standings-page")).to_have_text("page 1 of 2", timeout=3 * WAIT_MS)
    expect(rows.first.locator("td.player")).to_have_text(first or "")


def test_a_pause_shows_on_every_page_of_the_tournament_within_two_seconds(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    director, tournament_id = room(postgres_url, "halt", people=("ann",))
    director.tick(tournament_id)  # round 1 starts
    table = director.tournaments.state(tournament_id).entrant("ann").table
    pages = {
        "player": open_page(f"/player?table={table}", api.token(Role.PLAYER, player="ann")),
        "croupier": open_page(f"/croupier?table={table}",
                              api.token(Role.CROUPIER, tables=(table,))),
        "table screen": open_page(f"/screen?table={table}"),
        "big screen": open_page("/?tournament=halt"),
    }
    console = open_page("/organiser?tournament=halt", api.token(Role.ORGANISER))
    pages["organiser"] = console
    for page in pages.values():
        expect(page.locator("#status")).to_have_text(re.compile("live"), timeout=WAIT_MS)
        expect(page.locator("#paused-banner")).to_be_hidden()
    expect(pages["table screen"].locator("#round-clock")).to_have_text(
        re.compile(r"^heats 1 · (30:00|29:[0-5]\d) · 2 coups left$"), timeout=WAIT_MS)
    pages["croupier"].get_by_role("link", name="the table's screen").click()
    expect(pages["croupier"]).to_have_url(re.compile(rf"/screen\?table={table}$"))
    pages["croupier"].go_back()
    console.get_by_role("button", name="Pause").click()
    for name, page in pages.items():
        expect(page.locator("#paused-banner"), name).to_have_text("Paused", timeout=PAUSE_MS)
        expect(page.locator("#paused-banner"), name).to_be_visible()
    clocks = [pages["big screen"].locator("#clock-left"),
              pages["table screen"].locator("#round-clock")]
    pages["big screen"].wait_for_timeout(1000)  # the last count before the pause was read
    frozen = [clock.text_content() for clock in clocks]
    shoot(pages["croupier"], "croupier-paused")
    pages["big screen"].wait_for_timeout(1500)
    assert [clock.text_content() for clock in clocks] == frozen  # the clocks stand still
    console.get_by_role("button", name="Resume").click()
    for name, page in pages.items():
        expect(page.locator("#paused-banner"), name).to_be_hidden(timeout=PAUSE_MS)
    expect(clocks[1]).not_to_have_text(frozen[1], timeout=WAIT_MS)  # and run again

