"""The organiser console in headless Chromium, by real clicks: a tournament created from a
preset with the dealing and the clocks the organiser picks (read back from the API), its
Start and Pause sent once however fast they are clicked, and Cancel asking first."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from playwright.sync_api import Dialog, Page, expect

from api.tokens import Role
from domain.tournament.aggregate import Tournament
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import WAIT_MS, browser, open_page, shoot  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.postgres]


def recorded(api: Api, name: str, kind: type) -> int:  # noqa: F811
    """How many `kind` events the tournament `name` has recorded."""
    tournament_id = uuid.UUID(api.call("GET", f"/tournaments/{name}").json()["id"])
    return sum(isinstance(e, kind) for e in api.service.events_of(tournament_id))


def test_the_organiser_picks_the_preset_the_dealing_and_the_clocks(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    page = open_page("/organiser", organiser)
    page.get_by_label("preset").select_option("punto-banco-eight")
    expect(page.locator("#preset-line")).to_contain_text(
        "punto-banco (no-commission) · automatic dealing · rotating betting · "
        "a turn the clock passes costs the minimum stake · "
        "ties played off: who bets goes first, then the chips · "
        "heats → wildcard → final · from 7 players")  # the fewest its draw takes
    expect(page.get_by_label("bet seconds")).to_have_attribute("placeholder", "preset's: 60")
    expect(page.get_by_label("minutes a round")).to_have_attribute("placeholder",
                                                                   "preset's: none")
    page.get_by_label("name", exact=True).fill("evening")
    page.get_by_label("dealing").select_option("croupier")
    page.get_by_label("minutes a round").fill("30")
    page.get_by_label("bet seconds").fill("45")
    page.get_by_label("coups a round").fill("4")
    page.get_by_label("croupier-dealt tables").fill("1")
    shoot(page, "organiser-new-format")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#summary")).to_contain_text("registering", timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()
    shown = api.call("GET", "/tournaments/evening/format").json()
    assert (shown["dealing"], shown["minutes_per_round"], shown["bet_seconds"],
            shown["coups_per_round"], shown["house_rules"], shown["croupier_tables"]) == (
        "croupier", 30, 45, 4, "no-commission", 1)

    page.get_by_label("preset").select_option("chemin-de-fer-croupier")  # a refused clock
    page.get_by_label("name", exact=True).fill("refused")
    page.get_by_label("bet seconds").fill("20")  # no turns against a player's bank
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#error")).to_contain_text("bet clock", timeout=WAIT_MS)
    assert api.call("GET", "/tournaments/refused").status_code == 404


def test_start_and_pause_are_sent_once_and_cancel_asks_first(
        api: Api, open_page: Callable[..., Page]) -> None:  # noqa: F811
    organiser = api.token(Role.ORGANISER)
    for name in ("club", "spare"):
        made = api.call("POST", "/tournaments", organiser, json={
            "name": name, "preset": "chemin-de-fer-croupier", "tables": 1})
        assert made.status_code == 201, made.text
    for player in ("ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal"):
        assert api.call("POST", "/tournaments/club/players", organiser,
                        json={"player": player}).status_code == 201
    page = open_page("/organiser?tournament=club", organiser)
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url.rsplit("/", 1)[-1])
            if request.method == "POST" else None)
    expect(page.locator("#summary")).to_contain_text("registering", timeout=WAIT_MS)
    page.get_by_role("button", name="Start (seat the players)").dblclick()
    expect(page.locator("#summary")).to_contain_text("running", timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()
    page.get_by_role("button", name="Pause").dblclick()
    expect(page.locator("#summary")).to_contain_text("paused", timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()  # no second submission refused
    assert sent == ["start", "pause"]  # a double click sends once
    assert recorded(api, "club", Tournament.SeatingDrawn) == 1
    assert recorded(api, "club", Tournament.TournamentPaused) == 1
    expect(page.get_by_role("button", name="Cancel the tournament")).to_be_disabled()

    page.locator("#tournament").select_option("spare")
    expect(page.locator("#summary")).to_contain_text("registering", timeout=WAIT_MS)
    cancel = page.get_by_role("button", name="Cancel the tournament")
    asked: list[str] = []

    def answer(accept: bool) -> Callable[[Dialog], None]:
        def on_dialog(dialog: Dialog) -> None:
            asked.append(dialog.message)
            if accept:
                dialog.accept()
            else:
                dialog.dismiss()
        return on_dialog

    page.once("dialog", answer(False))
    cancel.click()
    expect(page.locator("#summary")).to_contain_text("registering")
    assert asked and "spare" in asked[0]
    assert recorded(api, "spare", Tournament.TournamentCancelled) == 0
    page.once("dialog", answer(True))
    cancel.click()
    expect(page.locator("#summary")).to_contain_text("cancelled", timeout=WAIT_MS)
    expect(page.locator("#error")).to_be_empty()
    assert api.call("GET", "/tournaments/spare").json()["status"] == "cancelled"
    assert recorded(api, "spare", Tournament.TournamentCancelled) == 1
    assert len(asked) == 2
