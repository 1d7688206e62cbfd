"""`GET /audit/checkpoints`: the store's signed checkpoints and their fingerprint, public, and
the fingerprint on the tournament's big screen (headless Chromium, as `test_page`)."""

from __future__ import annotations

import msgspec
import pytest
from playwright.sync_api import BrowserContext, expect

from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import Checkpoint
from infra.store.notes import open_note, parse_vkey
from infra.store.tlog import parse_checkpoint_body
from tests.e2e.test_api import Api, Game, api, game
from tests.e2e.test_page import WAIT_MS, browser

__all__ = ["api", "browser", "game"]  # the fixtures this module uses


def test_checkpoints_are_served_with_the_key_and_a_fingerprint(api: Api, game: Game) -> None:
    game.to_betting()
    made = write_checkpoint(api.service)  # e.g. a round's end
    assert made is not None and made.size == api.events()
    response = api.call("GET", "/audit/checkpoints?last=5")
    assert response.status_code == 200, response.text
    body = response.json()
    signer = api.service.chained_recorder.signer()
    assert (body["key"], body["public_key"]) == (signer.key_id, signer.public_key.hex())
    latest = msgspec.convert(body["latest"], Checkpoint)  # its partitions' heads too
    assert latest.signed_by_its_key() and latest.size == made.size
    assert body["fingerprint"] == made.fingerprint()
    assert body["checkpoints"][-1]["root"] == made.root
    assert api.call("GET", "/audit/checkpoints?last=0").status_code == 400
    # the latest as the transparency logs write it: a C2SP note, and the vkey to check it
    opened = open_note(body["note"], [parse_vkey(body["vkey"])])
    checkpoint = parse_checkpoint_body(opened.text)
    assert (checkpoint.size, checkpoint.root.hex()) == (made.size, made.root)
    assert body["vkey"].startswith(checkpoint.origin + "+")


@pytest.mark.browser
def test_the_standings_screen_shows_the_record_s_fingerprint(
        api: Api, game: Game, browser: BrowserContext) -> None:
    made = write_checkpoint(api.service)
    assert made is not None
    page = browser.new_page()
    try:
        page.goto(api.base_url + "/?tournament=cup")
        expect(page.locator("#record")).to_have_text(
            f"record {made.fingerprint()} · key {made.key}", timeout=WAIT_MS)
    finally:
        page.close()
