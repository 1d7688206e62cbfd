"""Sign-in slips in headless Chromium, with real clicks: the organiser makes and prints the
slips from the console (QR codes as SVG, PINs; the print stylesheet gives the slips alone on
an A4 page); a player opens their link in a fresh browser context on a phone (390x844) and
lands signed in on their page, a second tab too; a player types their name and PIN in the
lobby; a used, withdrawn or expired link shows a page that says so."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright
from pypdf import PdfReader

from api.sign_in import SignInCodes
from tests.conftest import IN_CI
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import ARGS, CHROMIUM, OVERFLOW, WAIT_MS
from tests.e2e.test_sign_in import PLAYERS, a_tournament

pytestmark = [pytest.mark.browser, pytest.mark.postgres]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
A4_INSIDE = {"width": 703, "height": 1032}  # 210 x 297 mm less the 12 mm margins, in CSS px


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """A browser whose contexts share nothing: each is a fresh phone or desk."""
    if not CHROMIUM.exists():
        message = f"{CHROMIUM} is missing (`make browser` installs it as root)"
        if IN_CI:
            pytest.fail(f"{message}, and CI=true forbids skipping")
        pytest.skip(message)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                             args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def fits(page: Page) -> None:
    found = page.evaluate(OVERFLOW)
    assert found["wide"] == [] and found["scrollWidth"] <= found["width"], found


def organiser_console(chromium: Browser, api: Api, token: str) -> tuple[BrowserContext, Page]:  # noqa: F811
    desk = chromium.new_context(viewport={"width": 1280, "height": 720})
    page = desk.new_page()
    page.goto(api.base_url + "/static/sabot.css")
    page.evaluate("token => sessionStorage.setItem('sabot.token', token)", token)
    page.goto(api.base_url + "/organiser?tournament=friday")
    return desk, page


def test_the_organiser_prints_slips_and_a_player_signs_in_by_link_on_a_phone(
        api: Api, chromium: Browser) -> None:  # noqa: F811
    desk, page = organiser_console(chromium, api, a_tournament(api))
    link = page.get_by_role("link", name=re.compile("Sign-in slips for every player"))
    expect(link).to_have_attribute("href", "/slips?tournament=friday", timeout=WAIT_MS)
    link.click()
    expect(page).to_have_url(re.compile(r"/slips\?tournament=friday$"))
    page.get_by_role("button", name="Make the slips").click()
    slips = page.locator("article.slip")
    expect(slips).to_have_count(len(PLAYERS), timeout=WAIT_MS)
    expect(page.locator(".slip-qr svg path")).to_have_count(len(PLAYERS))
    pins = page.locator(".slip-pin .pin").all_text_contents()
    assert len(pins) == len(PLAYERS) and all(re.fullmatch(r"\d{6}", p) for p in pins)
    expect(slips.first).to_contain_text("table ")  # seated: table and seat on the slip
    assert page.locator(".slip-qr svg").first.bounding_box()["width"] > 100  # type: ignore[index]
    page.emulate_media(media="print")
    expect(page.get_by_role("button", name="Make the slips")).to_be_hidden()  # paper: slips only
    expect(slips.first).to_be_visible()
    page.set_viewport_size(A4_INSIDE)  # the paper's width: each slip whole, black on white
    expect(slips.first).to_be_visible()
    cut = slips.evaluate_all("""slips => slips.filter(s => s.scrollHeight > s.clientHeight
        || s.scrollWidth > s.clientWidth || s.getBoundingClientRect().right > innerWidth)
        .map(s => [s.textContent.slice(0, 20), s.scrollHeight, s.clientHeight, s.scrollWidth,
                   s.clientWidth, s.getBoundingClientRect().right, innerWidth])""")
    assert cut == [], cut  # instructions and link inside their slip, the right column inside
    assert set(page.locator(".slip-name").evaluate_all(
        "names => names.map(n => getComputedStyle(n).color)")) == {"rgb(0, 0, 0)"}
    pdf = PdfReader(io.BytesIO(page.pdf(format="A4", print_background=True)))
    text = pdf.pages[0].extract_text()
    assert len(pdf.pages) == 1, text  # six slips: one A4 page
    assert len(re.findall(r"PIN \d", text)) == len(PLAYERS), text
    assert all(p.upper() in text.upper() for p in PLAYERS), text
    page.emulate_media(media="screen")
    ann = slips.filter(has_text="ann")
    address = ann.locator(".slip-link").text_content() or ""
    assert address.startswith(api.base_url + "/sign-in?code=")
    ben_old = slips.filter(has_text="ben").locator(".slip-link").text_content() or ""

    phone = chromium.new_context(**PHONE)  # a fresh browser: nothing typed, nothing stored
    mine = phone.new_page()
    mine.goto(address)
    expect(mine).to_have_url(re.compile(r"/player\?table="), timeout=WAIT_MS)
    expect(mine.locator("#name")).to_contain_text("· ann", timeout=WAIT_MS)
    expect(mine.locator("#chips")).not_to_have_text("–", timeout=WAIT_MS)
    fits(mine)
    second = phone.new_page()  # a second tab of the same phone is signed in too
    second.goto(mine.url)
    expect(second.locator("#name")).to_contain_text("· ann", timeout=WAIT_MS)
    lobby = phone.new_page()
    lobby.goto(api.base_url + "/")
    expect(lobby.locator("#who")).to_have_text("signed in as player ann", timeout=WAIT_MS)

    again = chromium.new_context(**PHONE).new_page()  # the slip was used: a page says so
    again.goto(address)
    expect(again.locator("#refusal")).to_contain_text("already been used")
    fits(again)

    page.get_by_role("button", name="Make the slips").click()  # new slips withdraw the old
    expect(page.locator("#status")).to_have_text(f"{len(PLAYERS)} slips made", timeout=WAIT_MS)
    expect(slips.filter(has_text="ben").locator(".slip-link")).not_to_have_text(
        ben_old, timeout=WAIT_MS)  # the status said so of the first slips already
    withdrawn = chromium.new_context(**PHONE).new_page()
    withdrawn.goto(ben_old)
    expect(withdrawn.locator("#refusal")).to_contain_text("withdrawn")
    expect(withdrawn.locator("#name")).to_have_count(0)  # not the player's page
    for context in (desk, phone, again.context, withdrawn.context):
        context.close()


def test_a_player_types_name_and_pin_in_the_lobby_and_an_expired_link_says_so(
        api: Api, chromium: Browser) -> None:  # noqa: F811
    organiser = a_tournament(api)
    made = api.call("POST", "/tournaments/friday/players/cat/sign-in", organiser).json()
    phone = chromium.new_context(**PHONE)
    lobby = phone.new_page()
    lobby.goto(api.base_url + "/")
    lobby.get_by_label("your name").fill("cat")
    lobby.get_by_label("PIN").fill("999999" if made["pin"] != "999999" else "111111")
    lobby.get_by_role("button", name="Enter with my PIN").click()
    expect(lobby.locator("#error")).to_contain_text("not known", timeout=WAIT_MS)
    lobby.get_by_label("PIN").fill(made["pin"])
    lobby.get_by_role("button", name="Enter with my PIN").click()
    expect(lobby).to_have_url(re.compile(r"/player\?table="), timeout=WAIT_MS)
    expect(lobby.locator("#name")).to_contain_text("· cat", timeout=WAIT_MS)

    codes = SignInCodes(api.service.database, api.store, api.service.secret_key)
    code, _, _ = codes.issue(api.call("GET", "/tournaments/friday").json()["id"], "dan",
                             timedelta(seconds=1))
    time.sleep(1.1)
    late = chromium.new_context(**PHONE).new_page()
    late.goto(f"{api.base_url}/sign-in?code={code}")
    expect(late.locator("#refusal")).to_contain_text("expired")
    fits(late)
    late.context.close()
    phone.close()
