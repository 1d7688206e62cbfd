"""The pages of a table's croupier, players and banker in headless Chromium (`test_page`'s
browser and helpers), with real clicks and typing: a croupier deals a coup from a physical
shoe, sees the draw the tableau forces and records it; a player bets, and calls banco at
chemin de fer; a banker says « je donne » or shows down à deux tableaux; a player places a
secret bet (its SHA-256 commitment computed in the page) and reveals it after the deal. Each
page is photographed and checked for overflow (`test_page.shoot`).

Chromium comes from `make browser` (root and apt-get); without it these tests skip, and under
CI=true they fail. Playwright's own browsers are never downloaded.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable

import msgspec
import pytest
from playwright.sync_api import Page, expect

from api.tokens import Role
from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import secret_commitment
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import (  # noqa: F401 - the fixtures
    WAIT_MS,
    browser,
    card_text,
    money,
    open_page,
    open_table,
    shoot,
)
from tests.integration.test_projections import Game

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


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
    deadline = time.monotonic() + WAIT_MS / 1000  # the page's payment, once it is recorded
    while not (recalled := organiser.view("/recall?last=1")) and time.monotonic() < deadline:
        time.sleep(0.05)
    [coup] = recalled
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
        people_bet_seconds=1,  # ann bets nothing at the table: betting closes on her clock
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
