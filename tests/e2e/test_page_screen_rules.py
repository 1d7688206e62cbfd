"""The big screen says the format's rules of sitting out and ties (issue 37), in headless
Chromium (`test_page`'s browser and helpers): what a turn the clock passes costs, the minimum of
bets a round, how a tie on the line is played off; who is short of the minimum since the last
cut; and what settled the latest play-off, in English, and in French once switched.

Chromium comes from `make browser`; without it these tests skip, and under CI=true they fail.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from domain.game.settings import BettingOrder, SittingOut, Variant
from domain.tournament.formats import Advance, Stage, TieBreak
from domain.tournament.settings import TournamentSettings
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import WAIT_MS, browser, open_page, shoot  # noqa: F401 - fixtures
from tests.integration.test_director import tie_on_the_line

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

RULES = TournamentSettings(
    variant=Variant.PUNTO_BANCO, seats_per_table=6, starting_chips=1000, min_stake=10,
    max_stake=100, coups_per_round=3, prizes=(10000,), buy_in=10,
    betting_order=BettingOrder.ROTATING, bet_seconds=30, sitting_out=SittingOut.MIN_STAKE,
    min_bets=2, tie_break=TieBreak.PLAY_OFF,
    stages=(Stage(name="heats", rounds=1, advance=Advance(overall=2)),
            Stage(name="final", rounds=1)))


def test_the_big_screen_says_the_rules_and_what_settled_the_play_off(
        api: Api, open_page: Callable[..., Page], postgres_url: str) -> None:  # noqa: F811
    director = Director(TableService(url=postgres_url))
    tournaments = director.tournaments
    tournament_id = tournaments.create("rules", RULES, seed=b"rules", command_id="create")
    for n in range(5):
        tournaments.register(tournament_id, f"bot-{n}", bot=True, command_id=f"bot-{n}")
    tournaments.start(tournament_id, command_id="start")
    screen = open_page("/?tournament=rules")
    expect(screen.locator("#rules")).to_have_text(
        "A turn to bet the clock passes costs the round's minimum stake. "
        "Fewer than 2 bets in a round: ranked after every player who made them at the cut. "
        "A tie on the line is played off: who bets goes first, then the chips; tied after "
        "three play-offs, the seating draw's order.", timeout=WAIT_MS)
    expect(screen.locator("#playoff-line")).to_be_hidden()
    while not tournaments.state(tournament_id).round_over(0.0):
        director.tick(tournament_id)
    _, second, third = tie_on_the_line(tournaments, tournament_id)
    while tournaments.state(tournament_id).stage == 0:
        director.tick(tournament_id)
    tied = ", ".join(sorted((second, third), key=lambda p: tournaments.state(
        tournament_id).entrants[p].draw_rank or 0))
    line = screen.locator("#playoff-line")
    expect(line).to_have_text(re.compile(
        rf"^Play-off of round 1 \(({tied}|{', '.join(reversed(tied.split(', ')))})\): "
        r"(settled by its chips|tied again, another play-off)$"), timeout=3 * WAIT_MS)
    shoot(screen, "screen-rules")
    screen.get_by_role("button", name="FR").click()  # the switch: the page again, in French
    try:
        expect(screen.locator("#rules")).to_contain_text(
            "Moins de 2 mises dans une manche : classé à la coupe après tous ceux qui les ont "
            "faites.", timeout=WAIT_MS)
        expect(screen.locator("#playoff-line")).to_have_text(re.compile(
            r"^Barrage de la manche 1 \(.+\) : (départagé par ses jetons|nouvelle égalité, un "
            r"autre barrage)$"), timeout=WAIT_MS)
    finally:
        screen.get_by_role("button", name="EN").click()  # the browser keeps the choice

