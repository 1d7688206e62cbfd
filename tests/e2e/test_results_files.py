"""A tournament's results and standings on paper and in files: the CSV (over HTTP with
`Accept: text/csv`, and `--csv` on the command line) holds the same positions and prizes as
the JSON, read back with Python's csv module; the printable results sheet, printed to PDF by
headless Chromium (`--print-to-pdf`), is one A4 page for 24 players and shows every player,
who published the results, and the fingerprint of the record's latest checkpoint; the
organiser's console links to it once the tournament is finished."""

from __future__ import annotations

import csv
import io
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pypdf
import pytest
from playwright.sync_api import Page, expect

from api.cli import main
from api.tokens import Role
from infra.store.checkpointer import write_checkpoint
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_page import (  # noqa: F401 - the browser fixtures
    ARGS,
    CHROMIUM,
    WAIT_MS,
    browser,
    open_page,
    shoot,
)
from tests.integration.test_tournament_run import run_tournament

pytestmark = pytest.mark.postgres

A4 = (595.3, 841.9)  # points


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def as_text(value: Any) -> str:
    """A JSON value as the CSV writes it."""
    if value is None:
        return ""
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


@pytest.fixture
def finished(api: Api, postgres_url: str) -> dict[str, Any]:  # noqa: F811
    """A 24-player tournament `cup`, finished and published, with a checkpoint after it."""
    run_tournament(postgres_url, b"paper", players=24)
    published = api.call("POST", "/tournaments/cup/results/publish", api.token(Role.ORGANISER))
    assert published.status_code == 200, published.text
    write_checkpoint(api.service)
    body: dict[str, Any] = published.json()
    return body


def test_the_csv_holds_what_the_json_holds(
        api: Api, postgres_url: str, finished: dict[str, Any],  # noqa: F811
        capsys: pytest.CaptureFixture[str]) -> None:
    answer = api.call("GET", "/tournaments/cup/results", headers={"Accept": "text/csv"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["vary"] == "Accept"
    assert api.call("GET", "/tournaments/cup/results").headers["vary"] == "Accept"
    rows = rows_of(answer.text)
    assert list(rows[0]) == ["position", "tied", "player", "prize"]
    positions = finished["positions"]
    assert len(positions) == 24 and sum(p["prize"] for p in positions) == finished["prize_pool"]
    assert [(int(r["position"]), int(r["tied"]), r["player"], int(r["prize"])) for r in rows] \
        == [(p["position"], p["tied"], p["player"], p["prize"]) for p in positions]
    # JSON stays the default, and what a browser asks for
    assert api.call("GET", "/tournaments/cup/results").json() == finished
    assert api.call("GET", "/tournaments/cup/results",
                    headers={"Accept": "text/html,application/json;q=0.9,*/*;q=0.8"}
                    ).json() == finished

    standings = api.call("GET", "/tournaments/cup/standings").json()
    as_csv = api.call("GET", "/tournaments/cup/standings", headers={"Accept": "text/csv"})
    assert as_csv.headers["content-type"].startswith("text/csv")
    assert rows_of(as_csv.text) == [{k: as_text(v) for k, v in s.items()} for s in standings]
    assert rows_of(api.call("GET", "/tournaments/nowhere/standings",
                            headers={"Accept": "text/csv"}).text) == []

    db = ["--database", postgres_url]
    assert main(["tournament", "results", "cup", "--csv", *db]) == 0
    assert capsys.readouterr().out == answer.text
    for command in (["tournament", "standings", "cup"], ["standings", "cup"]):
        assert main([*command, "--csv", *db]) == 0
        assert rows_of(capsys.readouterr().out) == rows_of(as_csv.text), command
    with pytest.raises(SystemExit):  # one or the other
        main(["tournament", "results", "cup", "--csv", "--json", *db])
    capsys.readouterr()

    document = api.call("GET", "/schema/openapi.json").json()["paths"]
    for path in ("/tournaments/{tournament}/results", "/tournaments/{tournament}/standings"):
        assert {"application/json", "text/csv"} <= set(
            document[path]["get"]["responses"]["200"]["content"]), path


def print_to_pdf(url: str, into: Path) -> Path:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing (`make browser` installs it as root)")
    pdf = into / "sheet.pdf"
    subprocess.run([str(CHROMIUM), "--headless", *ARGS, f"--user-data-dir={into / 'profile'}",
                    "--no-pdf-header-footer", f"--print-to-pdf={pdf}", url],
                   check=True, capture_output=True, timeout=60)
    return pdf


@pytest.mark.browser
def test_the_results_sheet_prints_on_one_a4_page_with_the_fingerprint(
        api: Api, finished: dict[str, Any]) -> None:  # noqa: F811
    fingerprint = api.call("GET", "/audit/checkpoints?last=1").json()["fingerprint"]
    assert fingerprint.startswith("#")
    page = api.call("GET", "/results?tournament=cup")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert fingerprint in page.text and "Published by @organiser" in page.text

    with tempfile.TemporaryDirectory() as folder:
        reader = pypdf.PdfReader(print_to_pdf(api.base_url + "/results?tournament=cup",
                                              Path(folder)))
        assert len(reader.pages) == 1
        sheet = reader.pages[0]
        size = (float(sheet.mediabox.width), float(sheet.mediabox.height))
        assert abs(size[0] - A4[0]) < 1 and abs(size[1] - A4[1]) < 1, size
        text = " ".join(sheet.extract_text().split())
    assert fingerprint in text
    assert "cup" in text and "Published by @organiser" in text
    for position in finished["positions"]:
        assert position["player"] in text
    winner = finished["positions"][0]
    assert f"{winner['position']} {winner['player']}" in text


@pytest.mark.browser
def test_the_organiser_s_console_links_to_the_sheet(
        api: Api, finished: dict[str, Any], open_page: Callable[..., Page]) -> None:  # noqa: F811
    console = open_page("/organiser?tournament=cup", api.token(Role.ORGANISER))
    expect(console.locator("#results-state")).to_contain_text("published by @organiser",
                                                              timeout=WAIT_MS)
    console.get_by_role("link", name="Printable results sheet").click()
    console.wait_for_url("**/results?tournament=cup")
    expect(console.locator("h1")).to_have_text("cup")
    fingerprint = api.call("GET", "/audit/checkpoints?last=1").json()["fingerprint"]
    expect(console.locator(".fingerprint")).to_have_text(fingerprint)
    expect(console.locator("tbody tr")).to_have_count(len(finished["positions"]))
    expect(console.locator("tbody tr").first).to_contain_text(finished["positions"][0]["player"])
    shoot(console, "results-sheet")


def test_an_unknown_tournament_s_sheet_says_so(api: Api) -> None:  # noqa: F811
    page = api.call("GET", "/results?tournament=nowhere")
    assert page.status_code == 404 and "no tournament named <strong>nowhere</strong>" in page.text
    hostile = api.call("GET", "/results?tournament=%3Cscript%3Ex%3C/script%3E")
    assert hostile.status_code == 404 and "<script>" not in hostile.text
