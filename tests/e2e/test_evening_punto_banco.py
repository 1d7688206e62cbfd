"""The punto-banco-eight evening in Chromium (issues 26 and 37), a module of its own so that
`--dist loadfile` plays it beside the chemin de fer evening (tests/e2e/test_evening.py).

"A Chromium e2e of this evening (two humans acting, two idle, bots; ...; pause and resume by
CLI mid-clock; a balancing move; a final with a play-off)": the preset `punto-banco-eight`
(house-dealt No-Commission punto banco, bets in turn on a bet clock, "a turn the clock passes
costs the minimum stake", ties on a cut's line played off) at two tables on a short bet clock,
its stages made two: heats of one coup whose cut keeps seven of the eight players, and a final
of three coups (stacks reset, a secret bet each). `ann` and `bea` bet by clicks on their player
page, each in their own browser context; `cid` and `dan` never act; four house bots. Every bet
is the minimum (the minimum is the maximum), so nobody loses more a coup than an idle player's
charge: the two idle players end the heats tied at the bottom and the cut to seven falls
between them, a play-off the record shows (`PlayOffPlayed`); the seven then fit at one table,
so the other table breaks and its players move (`PlayerMoved`), each moved person's page
following them to their new table.

While an idle person's bet clock runs, `sabot tournament pause` runs as a process of its own on
the store: every page shows the pause, the room is held (409 `tournament-paused`, nothing
written); then `sabot tournament resume`. After the finish: the big screen and the organiser's
console, finished, fit their text at both sizes in both languages (the other pages are looked
at in play in test_evening.py); no table waited longer than its clock + 2 s (read from the
record: the CLI's resume re-armed the clock it stopped); neither idle person finished in the
prizes; the record's attribution and `sabot audit verify`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from domain.game.payouts import Spot
from domain.table import commands as c
from tests.e2e.evening_pages import (
    CLICK_MS,
    Cli,
    Evening,
    OpenPage,
    api,  # noqa: F401 - the evening's server
    check_no_table_waits_past_its_clock,
    check_the_record,
    evening_worker,
    no_text_overflows,
    one_key,  # noqa: F401 - the shared keys
    open_page,  # noqa: F401 - the evening's pages
    page_kinds,
    pause_by_cli,
    publish_by_click,
    record_of,
    seconds_of,
    start_evening,
)
from tests.e2e.test_api import Api
from tests.e2e.test_page_sign_in import chromium  # noqa: F401 - the browser

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

EVENING = 240.0  # a stalled evening fails by then (before pytest's 300 s)
ACTING = {"ann": Spot.BANKER, "bea": Spot.PUNTER}  # each bets on a side of their own
IDLE = ("cid", "dan")
PEOPLE = (*ACTING, *IDLE)
BOTS = ("bot-1", "bot-2", "bot-3", "bot-4")
MINIMUM = 100
BET_CLOCK = 3  # seconds: the idle people's turns are most of the evening's time; a click
# the clock beats passes that turn, and each acting person bets on most of their turns
EIGHT = {  # over the preset `punto-banco-eight`
    "tables": 2, "coups_per_round": 2, "bet_seconds": BET_CLOCK,
    "min_stake": MINIMUM, "max_stake": MINIMUM,
    "stages": [{"name": "heats", "rounds": 1, "coups": 1, "advance": {"overall": 7}},
               {"name": "final", "rounds": 1, "coups": 3, "chips": "reset", "secret_bet": True}],
}
SEED = "0037"
FOLLOW_S = 15.0  # a player's page reads the tournament every 5 s
TRIES = 3  # CLI pauses tried until one lands while an idle person's clock runs


def bet_if_my_turn(page: Page, amount: int, spot: Spot = Spot.BANKER) -> bool:
    """Click a bet of `amount` on `spot` if the page offers it now (past the round's last coup
    the table refuses it: `round-over`)."""
    place = page.get_by_role("button", name="Place bet")
    if not place.is_enabled():
        return False
    try:  # the turn may pass (its clock) between the look and the click
        page.get_by_label("on").select_option(spot.value, timeout=CLICK_MS)
        page.get_by_label("amount").fill(str(amount), timeout=CLICK_MS)
        place.click(timeout=CLICK_MS)
    except PlaywrightTimeout:
        return False
    return True


def idle_clock_running(api: Api, evening: Evening,  # noqa: F811
                       tables: list[str]) -> str | None:
    """A table whose turn to bet is an idle person's, with 1.5 s or more on its clock."""
    for table in tables:
        view = api.call("GET", f"/tables/{table}", evening.organiser).json()
        turn = next((a["actor"] for a in view["legal_actions"] if a["step"] == "pass-bet"),
                    None)
        if turn in IDLE and (view.get("clock_ms") or 0) >= 1500:
            return table
    return None


def paused_mid_clock(api: Api, evening: Evening) -> bool:  # noqa: F811
    """The record says a pause came while an idle person's bet clock ran: their turn began
    before it, and their table's next event came after the resume."""
    tournament, tables = record_of(api, evening)
    pauses = list(zip([e.at for e in tournament if type(e).__name__ == "TournamentPaused"],
                      [e.at for e in tournament if type(e).__name__ == "TournamentResumed"],
                      strict=False))
    for events in tables.values():
        for turn, after in pairwise(events):
            if type(turn).__name__ == "BetTurnBegan" and turn.player in IDLE and any(
                    seconds_of(turn) < paused and seconds_of(after) > resumed
                    for paused, resumed in pauses):
                return True
    return False


def seating(view: dict[str, Any]) -> dict[str, str]:
    return {p["player"]: t["name"] for t in view["tables"] for p in t["players"]}


def shows_table(page: Page, table: str) -> bool:
    """The player's page is the page of `table`, and names it."""
    if not re.search(rf"/player\?table={re.escape(table)}$", page.url):
        return False
    try:
        return table in page.locator("#name").inner_text(timeout=CLICK_MS)
    except PlaywrightTimeout:
        return False


def test_the_punto_banco_eight_evening_in_chromium(
        api: Api, open_page: OpenPage, chromium: Browser, tmp_path: Path) -> None:  # noqa: F811
    evening = start_evening(api, open_page, EIGHT, seed=SEED, name="eight", people=PEOPLE,
                            bots=BOTS, preset="punto-banco-eight")
    clicked: dict[str, int] = dict.fromkeys(ACTING, 0)
    sat = dict(evening.table_of)  # where each person's page last showed them
    followed: set[tuple[str, str]] = set()
    due: dict[str, tuple[str, float]] = {}  # a moved person's new table, and by when
    tries, landed = 0, False
    person = next(iter(ACTING))
    ready = ready_cli(api, evening, tmp_path)  # started now: it lands while a clock runs
    with evening_worker(api, tmp_path), closing(ready):
        deadline = time.monotonic() + EVENING
        while (view := api.call("GET", evening.path).json())["status"] != "finished":
            assert time.monotonic() < deadline, (tmp_path / "worker.log").read_text()[-3000:]
            for who, spot in ACTING.items():
                if bet_if_my_turn(evening.pages[who], MINIMUM, spot):
                    clicked[who] += 1
            for who, table in seating(view).items():
                if who in PEOPLE and table != sat.get(who):
                    sat[who] = table
                    due[who] = (table, time.monotonic() + FOLLOW_S)
            for who, (table, by) in list(due.items()):
                if shows_table(evening.pages[who], table):
                    followed.add((who, table))
                    del due[who]
                else:
                    assert time.monotonic() < by, (who, table, evening.pages[who].url)
            if not landed and tries < TRIES and view["status"] == "running":
                table = idle_clock_running(api, evening, evening.tables)
                if table is not None:
                    pause_by_cli(api, evening, *ready, paused_tries(evening, table),
                                 BET_CLOCK + 0.5)
                    tries += 1
                    landed = paused_mid_clock(api, evening)
                    if not landed:
                        ready[:] = ready_cli(api, evening, tmp_path)
            time.sleep(0.05)
    assert paused_mid_clock(api, evening), "no CLI pause came while an idle clock ran"
    assert view["round"] >= 2 and all(clicked.values()), clicked  # each bet by a click
    for who, (table, _) in due.items():  # moved late in the final: their page follows
        expect(evening.pages[who]).to_have_url(re.compile(rf"/player\?table={table}$"),
                                               timeout=FOLLOW_S * 1000)
        followed.add((who, table))
    no_text_overflows(api, chromium, [  # finished (test_evening.py: the rest, in play)
        kind for kind in page_kinds(api, evening, person)
        if kind.kind in ("big screen", "organiser console")])
    publish_by_click(api, evening)
    events = check_the_record(api, evening, idle=IDLE, people=PEOPLE, bots=BOTS)
    placed = {e.actor for e in events if type(e).__name__ == "BetPlaced"}
    assert placed >= set(ACTING) and placed & set(BOTS), placed
    passed = [e for e in events if type(e).__name__ == "BetTurnPassed" and e.player in IDLE]
    assert passed and all(e.reason == "clock" and e.actor.startswith("@") for e in passed)
    check_no_table_waits_past_its_clock(*record_of(api, evening), people=PEOPLE)
    tournament = record_of(api, evening)[0]
    played = [e for e in tournament if type(e).__name__ == "PlayOffPlayed"]
    assert played and set(IDLE) <= set(played[0].chips), played  # the heats' line
    moved = [(e.player, e.to_table) for e in tournament if type(e).__name__ == "PlayerMoved"]
    assert any(who in PEOPLE for who, _ in moved), moved
    assert {(who, table) for who, table in moved if who in PEOPLE} <= followed, (moved, followed)
    results = api.call("GET", f"{evening.path}/results").json()
    prizes = {line["player"]: line["prize"] for line in results["positions"]}
    assert all(prizes[who] == 0 for who in IDLE), results["positions"]  # sitting out: no win


def ready_cli(api: Api, evening: Evening, cwd: Path) -> list[Cli]:  # noqa: F811
    """`sabot tournament pause` and `resume` of the evening, ready to run."""
    return [Cli(api, command, evening.name, cwd) for command in ("pause", "resume")]


@contextmanager
def closing(ready: list[Cli]) -> Iterator[None]:
    """The CLI processes left unrun, stopped at the end (`ready` may be refilled meanwhile)."""
    try:
        yield
    finally:
        for cli in ready:
            cli.close()


def paused_tries(evening: Evening, table: str) -> dict[str, tuple[str, c.TableCommand]]:
    """A bet an acting person would place, and the organiser's close of betting, now."""
    person = next(iter(ACTING))
    return {evening.tokens[person]: (evening.table_of[person], c.PlaceBet(
                command_id=f"paused-{person}", player=person, spot=Spot.BANKER,
                amount=MINIMUM)),
            evening.organiser: (table, c.CloseBetting(command_id="paused-organiser"))}
