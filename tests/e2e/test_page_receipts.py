"""The player's "My coups" in headless Chromium, with real clicks: every receipt checks on the
phone (Ed25519 and SHA-256 through WebCrypto, the cards re-dealt from the seed) with the
network cut off once they are fetched; after a key holder rewrites one of the player's coups
and re-checkpoints, the next visit names that coup; receipts edited by hand say what does not
hold (the amount, a card, a proof)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from api.cli import main
from api.tokens import Role
from tests.e2e.test_api import Api, api
from tests.e2e.test_page import OVERFLOW
from tests.e2e.test_page_sign_in import PHONE, chromium  # noqa: F401 - the browser fixture
from tests.e2e.test_receipts_api import (
    BETS,
    anchored,
    cosign,
    edited,
    play_coups,
    rewrite_and_recheckpoint,
)

__all__ = ["api"]  # the fixture this module uses

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

KEPT = "() => (JSON.parse(localStorage.getItem('sabot.receipts.alice')) || {})"
CHECK_MS = 20000  # three receipts' proofs and shoes, checked by the phone's own WebCrypto


@pytest.fixture
def phone(chromium: Browser) -> Iterator[BrowserContext]:  # noqa: F811
    """A phone of its own: its local storage kept from one visit to the next."""
    context = chromium.new_context(**PHONE)
    try:
        yield context
    finally:
        context.close()


def visit(api: Api, phone: BrowserContext, token: str) -> Page:
    """The player's page, signed in (the tab's token, as the lobby keeps it)."""
    page = phone.new_page()
    page.goto(api.base_url + "/static/sabot.css")
    page.evaluate("token => sessionStorage.setItem('sabot.token', token)", token)
    page.goto(api.base_url + "/player?table=salon")
    expect(page.locator("#receipts-open")).to_be_visible(timeout=CHECK_MS)
    return page


def receipt(page: Page, coup: int) -> str:
    item = page.locator(f'#receipts-list li[data-coup="salon/{coup}"]')
    expect(item).not_to_contain_text("checking", timeout=CHECK_MS)
    return item.text_content() or ""


def test_every_receipt_checks_on_the_phone_offline_and_a_rewrite_is_named(
        api: Api, phone: BrowserContext, postgres_url: str, tmp_path: Path) -> None:
    play_coups(api)
    anchored(api.service)
    cosign(postgres_url, tmp_path)
    token = api.token(Role.PLAYER, player="alice")
    page = visit(api, phone, token)
    page.wait_for_function(KEPT + ".keys")  # the keys given as the page opens, signed in
    keys = page.evaluate(KEPT + ".keys")
    assert keys["operator"][0]["public_key"] == (
        api.service.chained_recorder.signer().public_key.hex())
    assert len(keys["witnesses"]) == 2 and all(w["name"] for w in keys["witnesses"]), keys
    page.get_by_role("button", name="My coups").click()
    expect(page.locator("#receipts-list li.ok")).to_have_count(3, timeout=CHECK_MS)
    found = page.evaluate(OVERFLOW)
    assert found["wide"] == [] and found["unlabelled"] == [], found

    phone.set_offline(True)  # from here the phone alone checks them
    try:
        page.get_by_role("button", name="Check again").click()
        expect(page.locator("#receipts-record")).to_contain_text(
            "could not be asked now", timeout=CHECK_MS)
        expect(page.locator("#receipts-list li.ok")).to_have_count(3, timeout=CHECK_MS)
        first = receipt(page, 1)
        assert re.fullmatch(r"your bet of 300 on the banker, coup 1 of table salon, is in the "
                            r"record at #\d+, co-signed by 2 witnesses; the cards follow from "
                            r"the seed", first), first
        assert receipt(page, 2).startswith("your bet of 120 on the punter, coup 2")
        assert page.locator("#receipts-state").text_content() == (
            "3 of 3 receipts hold, checked on this phone.")
    finally:
        phone.set_offline(False)
    page.close()

    rewrite_and_recheckpoint(postgres_url)  # coup 1's payout doubled, the witnesses left out
    later = visit(api, phone, token)  # the next visit watches the receipts kept, unasked
    for _ in range(2):  # and so does "My coups", its new receipts leaving the kept ones be
        expect(later.locator("#receipts-list li.bad")).to_have_count(1, timeout=CHECK_MS)
        flagged = receipt(later, 1)
        assert re.fullmatch(r"your receipt for coup 1 of table salon no longer matches the "
                            r"record: checkpoint #\d+ held it, checkpoint #\d+ does not",
                            flagged), flagged
        assert "your bet of 120 on the punter" in receipt(later, 2)  # its own events hold
        expect(later.locator("#receipts-record")).to_contain_text(
            "The record was rewritten: checkpoint #", timeout=CHECK_MS)
        later.get_by_role("button", name="My coups").click()


def test_a_receipt_edited_by_hand_says_what_does_not_hold_on_the_phone(
        api: Api, phone: BrowserContext, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    play_coups(api)
    page = visit(api, phone, api.token(Role.PLAYER, player="alice"))
    page.get_by_role("button", name="My coups").click()
    expect(page.locator("#receipts-list li.ok")).to_have_count(3, timeout=CHECK_MS)
    with page.expect_download() as download:  # the phone's file, for anyone to check
        page.get_by_role("button", name="Download my receipts").click()
    assert re.fullmatch(r"sabot-receipts-alice-\d{4}-\d\d-\d\d\.json",
                        download.value.suggested_filename)
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    capsys.readouterr()
    assert main(["audit", "check-receipts", str(saved), "--url", api.base_url]) == 0
    assert "3 of 3 receipts check and the record still holds them" in capsys.readouterr().out
    kept = page.evaluate(KEPT)
    for key, r in kept["receipts"].items():
        kept["receipts"][key] = edited(r, {1: "amount", 2: "card", 3: "proof"}[r["coup"]])
    page.evaluate("kept => localStorage.setItem('sabot.receipts.alice', kept)", json.dumps(kept))
    page.get_by_role("button", name="Check again").click()
    expect(page.locator("#receipts-list li.bad")).to_have_count(3, timeout=CHECK_MS)
    assert receipt(page, 1) == ("your receipt for coup 1 of table salon does not hold: the "
                                "amount: it says 1,300 on the banker, the record 300 on the "
                                "banker")
    assert re.fullmatch(r"your receipt for coup 2 of table salon does not hold: its CardDealt "
                        r"at #\d+ says other than its signed bytes \(card\)", receipt(page, 2))
    assert re.fullmatch(r"your receipt for coup 3 of table salon does not hold: the inclusion "
                        r"proof of its BetPlaced at #\d+ does not lead to the signed root",
                        receipt(page, 3))
    # the keys the phone was given are the ones it holds the receipts to
    kept = page.evaluate(KEPT)
    kept["keys"]["operator"][0]["public_key"] = bytes(range(32)).hex()
    page.evaluate("kept => localStorage.setItem('sabot.receipts.alice', kept)", json.dumps(kept))
    page.get_by_role("button", name="Check again").click()
    expect(page.locator("#receipts-list li.bad")).to_have_count(3, timeout=CHECK_MS)
    assert re.fullmatch(r"your receipt for coup 1 of table salon does not hold: checkpoint #\d+ "
                        r"is not signed by the operator's key this phone was given",
                        receipt(page, 1)), receipt(page, 1)


def test_a_phone_without_room_checks_the_receipts_and_says_to_download_them(
        api: Api, phone: BrowserContext) -> None:
    play_coups(api, bets=BETS[:1])
    page = visit(api, phone, api.token(Role.PLAYER, player="alice"))
    page.evaluate("() => { Storage.prototype.setItem = () => { "
                  "throw new DOMException('full', 'QuotaExceededError'); }; }")
    page.get_by_role("button", name="My coups").click()
    expect(page.locator("#receipts-list li.ok")).to_have_count(1, timeout=CHECK_MS)
    expect(page.locator("#receipts-state")).to_have_text(
        "1 of 1 receipts hold, checked on this phone. This phone's storage is full: the newest "
        "receipts are checked now but not kept; download them to keep them.")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download my receipts").click()
    assert len(json.loads(Path(download.value.path()).read_text())["receipts"]) == 1
