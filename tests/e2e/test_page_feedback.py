"""The pages tell what is happening and send each request once, in headless Chromium with real
clicks (`test_page`'s browser and helpers): on a phone (390x844) the player reads whose turn it
is and sees their own bet clock count down, a bet or a banco confirmed on the page, a refusal
in words, and "paused" when the tournament is; a double click on an intervention records one
event, and a retry after a lost answer sends the same idempotency key; ending the shoe asks
first (dismissed: nothing recorded) and sits apart from giving the bank; the physical-shoe box
is remembered per table across a reload; an unknown table or tournament says so instead of
showing empty forms.

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, Route, expect

from api.tokens import Role
from domain.table.aggregate import Table
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import (  # noqa: F401 - the fixtures
    SHOTS,
    WAIT_MS,
    browser,
    open_page,
    open_table,
    shoot,
)

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PHONE = {"width": 390, "height": 844}


def on_phone(page: Page, name: str) -> None:
    """The page at a phone's size, photographed (`docs/pages/` keeps a copy) and checked for
    overflow and unnamed controls (`test_page.shoot`)."""
    page.set_viewport_size(PHONE)
    shoot(page, name, sizes=((PHONE["width"], PHONE["height"]),))
    page.screenshot(path=str(SHOTS / f"{name}.jpg"), type="jpeg", quality=50)


def seconds_left(page: Page) -> int:
    text = page.locator("#clock").text_content() or ""
    found = re.fullmatch(r"(\d+) s to bet", text)
    assert found, text
    return int(found.group(1))


def test_the_player_sees_their_turn_their_clock_and_each_answer_on_a_phone(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    house = open_table(api, "tour", "punto-banco", min_stake=10, betting_order="rotating",
                       bet_seconds=30)
    house.send("seat", player="dan", chips=1000)
    house.send("seat", player="eve", chips=100)
    house.send("shuffle")
    house.send("cut", player="dan", position=100)
    house.play_while("burning")
    dan = open_page("/player?table=tour", api.token(Role.PLAYER, player="dan"))
    dan.set_viewport_size(PHONE)
    expect(dan.locator("#phase")).to_have_text("Your turn: place your bet or pass",
                                               timeout=WAIT_MS)
    expect(dan.locator("#clock")).to_have_text(re.compile(r"^(30|2\d) s to bet$"),
                                               timeout=WAIT_MS)
    first = seconds_left(dan)
    expect(dan.locator("#clock")).not_to_have_text(f"{first} s to bet", timeout=WAIT_MS)
    assert seconds_left(dan) < first  # it counts down
    on_phone(dan, "player-phone")
    eve = open_page("/player?table=tour", api.token(Role.PLAYER, player="eve"))
    expect(eve.locator("#phase")).to_have_text("dan's turn to bet", timeout=WAIT_MS)
    expect(eve.locator("#limits")).to_contain_text("bets are closed")
    expect(eve.locator("#clock")).to_be_hidden()  # dan's clock, not hers

    dan.get_by_label("on").select_option("banker")
    dan.get_by_label("amount").fill("50")
    dan.get_by_role("button", name="Place bet").click()
    expect(dan.locator("#notice")).to_have_text("Bet placed: 50 on the banker.", timeout=WAIT_MS)
    expect(dan.locator("#staked")).to_have_text("50")
    expect(dan.locator("#error")).to_be_empty()

    expect(eve.locator("#phase")).to_have_text("Your turn: place your bet or pass",
                                               timeout=WAIT_MS)
    before = api.events()
    eve.get_by_label("amount").fill("300")
    eve.get_by_role("button", name="Place bet").click()  # beyond her chips: refused, in words
    expect(eve.locator("#error")).to_have_text("Refused: eve has 100 chips free, not 300",
                                               timeout=WAIT_MS)
    expect(eve.locator("#notice")).to_be_empty()
    assert api.events() == before
    assert house.view()["bets"] == [{"player": "dan", "spot": "banker", "amount": 50}]


def test_a_banco_called_is_confirmed_at_stake_and_not_offered_again(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    cercle = open_table(api, "cercle", "chemin-de-fer")
    for player in ("alice", "bob", "cat"):
        cercle.send("seat", player=player, chips=1000)
    cercle.send("shuffle")
    cercle.send("cut", player="alice", position=100)
    cercle.play_while("burning")
    cercle.send("award-bank", player="alice", amount=200, how="auction")
    bob = open_page("/player?table=cercle", api.token(Role.PLAYER, player="bob"))
    bob.set_viewport_size(PHONE)
    expect(bob.locator("#phase")).to_have_text("Place your bets", timeout=WAIT_MS)
    bob.get_by_role("button", name="Banco: cover the bank of 200").dblclick()
    expect(bob.locator("#notice")).to_have_text("Banco called: you cover the bank of 200.",
                                                timeout=WAIT_MS)
    expect(bob.locator("#staked")).to_have_text("200")
    expect(bob.locator("#bets li")).to_have_text(["banco: 200 against the bank called"])
    expect(bob.locator("#phase")).to_have_text("Banco called: waiting for the close of betting")
    expect(bob.get_by_role("button", name=re.compile("^Banco"))).to_have_count(0)
    expect(bob.get_by_role("button", name="Stake")).to_be_disabled()
    expect(bob.locator("#error")).to_be_empty()  # the double click sent one call
    called = [e for e in api.service.events_of(Table.create_id("cercle"))
              if isinstance(e, Table.BancoCalled)]
    assert [e.player for e in called] == ["bob"]
    on_phone(bob, "player-banco-phone")


def test_an_intervention_double_clicked_or_retried_is_recorded_once(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    made = api.call("POST", "/tournaments", organiser,
                    json={"name": "once", "preset": "punto-banco-heats", "tables": 2,
                          "coups_per_round": 2, "starting_chips": 2000})
    assert made.status_code == 201, made.text
    for player in ("ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal"):
        registered = api.call("POST", "/tournaments/once/players", organiser,
                              json={"player": player})
        assert registered.status_code == 201, registered.text
    started = api.call("POST", "/tournaments/once/start", organiser)
    assert started.status_code == 200, started.text
    table = next(line["name"] for line in api.call("GET", "/tournaments/once").json()["tables"]
                 if any(p["player"] == "ann" for p in line["players"]))

    def adjusted() -> list[int]:
        return [e.delta for e in api.service.events_of(Table.create_id(table))
                if isinstance(e, Table.ChipsAdjusted) and e.player == "ann"]

    page = open_page("/organiser?tournament=once", organiser)
    expect(page.locator("#summary")).to_contain_text("running", timeout=WAIT_MS)
    page.get_by_label("what").select_option("correct-chips")
    page.get_by_label("player concerned").fill("ann")
    page.get_by_label("chips (+/−)").fill("500")
    page.get_by_label("reason (required)").fill("a plaque miscounted")
    page.get_by_role("button", name="Record the intervention").dblclick()
    expect(page.get_by_label("reason (required)")).to_have_value("", timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()
    page.wait_for_timeout(500)  # a second request, were there one, would be in by now
    assert adjusted() == [500]

    # the answer is lost on the way back: the retry sends the same key, recorded once
    keys: list[str | None] = []

    def lose_the_first_answer(route: Route) -> None:
        keys.append(route.request.headers.get("idempotency-key"))
        if len(keys) == 1:
            route.fetch()  # the server records it ...
            route.abort()  # ... and the page never hears
        else:
            route.continue_()

    page.route("**/tournaments/once/interventions", lose_the_first_answer)
    page.get_by_label("chips (+/−)").fill("-200")
    page.get_by_label("reason (required)").fill("counted twice")
    page.get_by_role("button", name="Record the intervention").click()
    expect(page.locator("#error")).not_to_be_empty(timeout=WAIT_MS)
    expect(page.get_by_label("reason (required)")).to_have_value("counted twice")
    page.get_by_role("button", name="Record the intervention").click()
    expect(page.get_by_label("reason (required)")).to_have_value("", timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]
    assert adjusted() == [500, -200]

    # a disqualification asks first: dismissed, nothing is recorded
    before = api.events()
    page.get_by_label("what").select_option("disqualify")
    page.get_by_label("player concerned").fill("dan")
    page.get_by_label("reason (required)").fill("collusion")
    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Record the intervention").click()
    page.wait_for_timeout(300)
    assert asked == ["Disqualify dan? This cannot be undone."]
    assert api.events() == before
    expect(page.get_by_label("reason (required)")).to_have_value("collusion")

    # a player of the paused tournament reads that it is paused
    player = open_page(f"/player?table={table}", api.token(Role.PLAYER, player="ann"))
    expect(player.locator("#position")).to_contain_text("once", timeout=WAIT_MS)
    paused = api.call("POST", "/tournaments/once/pause", organiser)
    assert paused.status_code == 200, paused.text
    expect(player.locator("#phase")).to_have_text("The tournament is paused", timeout=2 * WAIT_MS)


def test_ending_the_shoe_asks_first_and_sits_apart_from_the_bank(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    cercle = open_table(api, "fin", "chemin-de-fer")
    for player in ("alice", "bob"):
        cercle.send("seat", player=player, chips=1000)
    cercle.send("shuffle")
    cercle.send("cut", player="alice", position=100)
    cercle.play_while("burning")
    page = open_page("/croupier?table=fin", api.token(Role.CROUPIER, tables=("fin",)))
    end = page.get_by_role("button", name="End the shoe now")
    expect(end).to_be_visible(timeout=WAIT_MS)
    expect(page.locator("#steps").get_by_role("button", name="Give the bank")).to_be_visible()
    expect(page.locator("#steps").get_by_role("button", name="End the shoe now")).to_have_count(0)
    expect(page.locator("#apart").get_by_role("button", name="End the shoe now")).to_have_count(1)

    def ended() -> int:
        return sum(isinstance(e, Table.TailleEnded)
                   for e in api.service.events_of(Table.create_id("fin")))

    asked: list[str] = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    end.click()
    page.wait_for_timeout(300)
    assert asked and asked[0].startswith("End the shoe now?")
    assert ended() == 0
    page.once("dialog", lambda dialog: dialog.accept())
    end.click()
    expect(page.locator("#phase")).to_have_text("The shoe is finished: reveal its seed",
                                                timeout=WAIT_MS)
    assert ended() == 1


def test_the_physical_shoe_box_is_remembered_per_table(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    for name in ("one", "two"):
        table = open_table(api, name, "punto-banco")
        table.send("seat", player="ann", chips=1000)
    token = api.token(Role.CROUPIER, tables=("one", "two"))
    page = open_page("/croupier?table=one", token)
    box = page.get_by_label("physical shoe")
    expect(box).to_be_checked(timeout=WAIT_MS)  # physical unless unticked
    box.uncheck()
    page.reload()
    expect(page.get_by_label("physical shoe")).not_to_be_checked(timeout=WAIT_MS)
    page.get_by_role("button", name="Shuffle a new shoe").click()
    expect(page.locator("#phase")).to_have_text("Shuffled: the shoe is to be cut",
                                                timeout=WAIT_MS)
    [shuffled] = [e for e in api.service.events_of(Table.create_id("one"))
                  if isinstance(e, Table.ShoeShuffled)]
    assert shuffled.physical is False
    other = open_page("/croupier?table=two", token)
    expect(other.get_by_label("physical shoe")).to_be_checked(timeout=WAIT_MS)


def test_an_unknown_table_or_tournament_says_so(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    player = open_page("/player?table=nowhere", api.token(Role.PLAYER, player="ann"))
    player.set_viewport_size(PHONE)
    expect(player.locator("#missing")).to_contain_text("There is no table “nowhere” here.",
                                                       timeout=WAIT_MS)
    expect(player.locator("form")).to_have_count(0)
    expect(player.get_by_role("link", name="the tables and tournaments")).to_have_attribute(
        "href", "/")
    croupier = open_page("/croupier?table=nowhere", api.token(Role.ORGANISER))
    expect(croupier.locator("#missing")).to_contain_text("There is no table “nowhere” here.",
                                                         timeout=WAIT_MS)
    expect(croupier.get_by_role("button")).to_have_count(0)
    console = open_page("/organiser?tournament=nowhere", api.token(Role.ORGANISER))
    expect(console.locator("#summary")).to_have_text(
        "There is no tournament “nowhere”: choose one or create it above.", timeout=WAIT_MS)
    expect(console.get_by_role("button", name="Record the intervention")).to_be_hidden()
    expect(console.get_by_role("button", name="Start (seat the players)")).to_be_hidden()
    expect(console.get_by_role("button", name="Create")).to_be_visible()

