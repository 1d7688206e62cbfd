"""The evening in Chromium (issue 26): people, each in their own browser context, acting by
clicks on their player page; house bots; a croupier by clicks on their console; the organiser
by clicks.

`test_the_evening_in_chromium`: chemin de fer at two tables, the first croupier-dealt (its
croupier shuffles, cuts, burns, gives the bank, closes betting, deals, settles and pays by
clicks on the croupier's console), the second house-dealt (a real `sabot worker` directs it).
Six people (each with their own token) and four house bots; two rounds of two coups on short
clocks. The people stake, call banco, take the bank, retire it and draw or stand by clicks;
`fay` never acts: the bank is retired before her so that it is offered to her, and her clock
declines it. Mid-round (a croupier-dealt coup being dealt) the organiser clicks Pause: every
page (each person's, the croupier's console, each table's screen, the big screen, the
organiser's console) shows paused within 2 s; any table command (a person, the croupier, the
organiser) is 409 `tournament-paused` and nothing is written for longer than any clock, while
every page kind (a person's page, the table's screen, the croupier's console, the big screen,
the organiser's console) is opened afresh at a phone's and a big screen's size, in an English
and a French browser, and no text overflows its box (issue 37: "no page has overflowing text at
either size in either language"); Resume. Once finished the organiser publishes the results by
a click; then the whole record is checked: every event whose actor is a person carries a
command id that person's own token sent, every bot's event names the bot and came from the
house, fay's every turn was the clock's, and `sabot audit verify` (attribution included) finds
the store intact; and, read from the record, "no table waits longer than its clock + 2 s": each
clock a table started (a person's decision, the bank offered to fay) went on within its seconds
+ 2 of play.

The punto-banco-eight evening is in test_evening_punto_banco.py: a module of its own, so that
`--dist loadfile` plays the two evenings on two workers at once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from domain.game.coup import Side
from domain.table import commands as c
from tests.e2e.evening_pages import (
    CLICK_MS,
    Evening,
    OpenPage,
    api,  # noqa: F401 - the evening's server
    check_no_table_waits_past_its_clock,
    check_the_record,
    click,
    evening_worker,
    no_text_overflows,
    one_key,  # noqa: F401 - the shared keys
    open_page,  # noqa: F401 - the evening's pages
    page_kinds,
    pause_by_click,
    publish_by_click,
    record_of,
    start_evening,
    where_it_stands,
)
from tests.e2e.test_api import Api
from tests.e2e.test_evening_api import (
    BANK,
    BOT_THINK,
    CHEMIN_DE_FER,
    CLOCK,
    PEOPLE,
    SEED,
    SILENT,
    check_the_people_played_chemin_de_fer,
    croupier_dealt,
)
from tests.e2e.test_page import WAIT_MS
from tests.e2e.test_page_sign_in import chromium  # noqa: F401 - the browser

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

EVENING = 240.0  # a stalled evening fails by then (before pytest's 300 s, saying where
# it stands); it takes 40-100 s on two loaded cores


@dataclass
class Plan:
    """What the people mean to do: `retirer` gives up the bank the croupier gives them (the
    shoe then goes to fay), each of `banco` calls banco once, when first they may."""

    retirer: str
    banco: set[str]


LOOK = """() => ({steps: [...document.querySelectorAll('#actions button')].map(b => b.textContent),
                 place: !document.getElementById('place').disabled,
                 staked: document.querySelectorAll('#bets li').length})"""


def person_acts(page: Page, person: str, plan: Plan) -> None:
    """The click a person makes now, if any: take the bank offered, retire it (the retirer,
    once), draw or stand, call banco (once), else stake 10 (once a coup)."""
    seen = page.evaluate(LOOK)  # one look: the page re-renders as the table moves
    texts: list[str] = seen["steps"]
    wanted = next((t for t in texts if t.startswith("Take the bank")), None)
    if wanted is None and person == plan.retirer and "Retire the bank" in texts:
        wanted = "Retire the bank"
    wanted = wanted or next((t for t in texts if re.match(r"(Draw|Stand)\b", t)), None)
    if wanted is None and person in plan.banco:
        wanted = next((t for t in texts if t.startswith("Banco")), None)
    if wanted is not None:
        if click(page, wanted) and wanted == "Retire the bank":
            plan.retirer = ""
        elif wanted.startswith("Banco"):
            plan.banco.discard(person)
        return
    if seen["place"] and not seen["staked"]:
        try:
            page.get_by_label("amount").fill("10", timeout=CLICK_MS)
            page.locator("#place").click(timeout=CLICK_MS)
        except PlaywrightTimeout:
            pass  # betting closed meanwhile


def croupier_acts(page: Page, view_of: Callable[[], dict[str, Any]], people: list[str],
                  bank_to: str, hold: bool) -> str | None:
    """The croupier's clicks on the console while it offers a step to take: its steps in
    order, but the bank (given to `bank_to`, when the shoe is offered to nobody) and the
    close of betting (once every person here who may stake has: fay's bet clock is the
    croupier's patience; never if `hold`). The last step clicked, if any."""
    name = None
    for _ in range(8):  # then the people's turn
        view = view_of()
        steps = page.locator("#steps")
        shown = steps.get_attribute("data-shown")
        name = next((n for n in steps.locator("button:enabled").all_inner_texts()
                     if not (n == "Give the bank" and view["bank_offered_to"] is not None)
                     and not (n == "Close betting" and (hold or yet_to_stake(view, people)))),
                    None)
        try:
            if name == "Give the bank":
                page.locator("#bank-player").select_option(bank_to, timeout=CLICK_MS)
                page.locator("#bank-amount").fill(str(BANK), timeout=CLICK_MS)
            elif name is not None and name.startswith("Shuffle"):
                page.locator("#physical").set_checked(False, timeout=CLICK_MS)  # an RNG shoe
        except PlaywrightTimeout:
            return None
        if name is None or not click(page, name):
            return None
        try:  # the console shows the next step once the step is recorded
            expect(steps).not_to_have_attribute("data-shown", shown or "", timeout=CLICK_MS)
        except AssertionError:
            return name
        if name == "Give the bank":
            return name  # the banker's turn: to retire, before a bot stakes
    return name


def yet_to_stake(view: dict[str, Any], people: list[str]) -> list[str]:
    placed = {s["player"] for s in view["stakes"]} | set(view["banco_calls"])
    return [p for p in people if p != SILENT and p != view["banker"] and p not in placed]


def test_the_evening_in_chromium(api: Api, open_page: OpenPage, chromium: Browser,  # noqa: F811
                                 tmp_path: Path) -> None:
    evening = start_evening(api, open_page, CHEMIN_DE_FER, croupier_dealt,
                            seed=SEED, name="evening")
    [dealt] = evening.croupiers
    seated = [s["player"] for s in api.call("GET", f"/tables/{dealt}").json()["seats"]]
    assert SILENT in seated, seated  # the seed's draw
    before_fay = seated[seated.index(SILENT) - 1]
    assert before_fay in PEOPLE, seated
    plan = Plan(retirer=before_fay, banco=set(PEOPLE) - {SILENT})
    croupier = evening.croupiers[dealt]
    house = next(t for t in evening.tables if t != dealt)
    paused = round_over_shown = False
    with evening_worker(api, tmp_path):
        deadline = time.monotonic() + EVENING
        while (shown := api.call("GET", evening.path).json())["status"] != "finished":
            assert time.monotonic() < deadline, where_it_stands(api, evening,
                                                                tmp_path / "worker.log")
            for person in sorted(evening.pages, key=lambda p: p != plan.retirer):
                if person != SILENT:  # the retirer first: before a stake is placed
                    person_acts(evening.pages[person], person, plan)
            # round 1's last coup here waits till the house's table has played its own
            hold = not round_over_shown and shown["round"] == 1 and api.call(
                "GET", f"/tables/{dealt}").json()["coup_number"] >= 1
            step = croupier_acts(croupier, lambda: api.call("GET", f"/tables/{dealt}").json(),
                                 evening.at(dealt), before_fay, hold)
            if step == "Give the bank" and plan.retirer:  # at once: before a bot's stake
                retire = evening.pages[plan.retirer].get_by_role("button", name="Retire the bank")
                try:  # the page shows the bank given within the bots' think time, less a second
                    retire.click(timeout=(BOT_THINK - 1) * 1000)
                    plan.retirer = ""
                except PlaywrightTimeout:
                    pass
            if hold and api.call("GET", f"/tables/{house}").json()["round_over"]:
                round_over_by_page(evening, house)
                round_over_shown = True
            view = api.call("GET", f"/tables/{dealt}").json()
            if not paused and shown["round"] == 1 and view["phase"] == "playing":
                kinds = page_kinds(api, evening, plan_person(evening, dealt))
                pause_by_click(api, evening, paused_tries(api, evening, dealt), CLOCK + 0.5,
                               partial(no_text_overflows, api, chromium, kinds))
                paused = True
    assert paused and round_over_shown and shown["round"] >= 2  # a tie for first plays on
    publish_by_click(api, evening)
    events = check_the_record(api, evening)
    check_the_people_played_chemin_de_fer(events)
    check_no_table_waits_past_its_clock(*record_of(api, evening))
    turns = [e for e in events if getattr(e, "player", None) == SILENT
             and type(e).__name__ in ("BankDeclined", "BetTurnPassed")]
    assert turns and all(e.actor.startswith("@") for e in turns), turns


def round_over_by_page(evening: Evening, table: str) -> None:
    """A table that has played its round's last coup says so on its people's pages and its
    screen while its round waits for the other table (once the page has its last events)."""
    screen = evening.screens[evening.tables.index(table)]
    for page in [screen, *(evening.pages[p] for p in evening.at(table) if p in PEOPLE)]:
        expect(page.locator("#phase")).to_have_text(
            "Round over: no more coups until the next round", timeout=WAIT_MS)


def plan_person(evening: Evening, dealt: str) -> str:
    """A person at the croupier's table who acts (not fay)."""
    return next(p for p in evening.at(dealt) if p in PEOPLE and p != SILENT)


def paused_tries(api: Api, evening: Evening,  # noqa: F811
                 dealt: str) -> dict[str, tuple[str, c.TableCommand]]:
    """A command each of a person, the croupier and the organiser would send now."""
    person = plan_person(evening, dealt)
    house = next(t for t in evening.tables if t != dealt)
    return {evening.tokens[person]: (dealt, c.PlaceStake(
                command_id=f"paused-{person}", player=person, tableau=Side.PUNTER, amount=10)),
            evening.croupier_tokens[dealt]: (dealt, c.DealCard(command_id="paused-croupier")),
            evening.organiser: (house, c.CloseBetting(command_id="paused-organiser"))}
