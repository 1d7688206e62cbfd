"""The seating chart and the payout slips on paper, printed to PDF by headless Chromium
(`--print-to-pdf`, as the results sheet is) and read back with pypdf: the chart has a page for
each round of a 24-player tournament, each with its round and every player seated as it
started (table and seat as the tournament recorded them); the payout slips have one slip a
prize winner with their position, prize and the record's checkpoint fingerprint, three an A4
page; an unknown tournament's pages say so, escaped."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path
from typing import Any

import pypdf
import pytest

from domain.tournament.aggregate import Tournament
from domain.tournament.seating_chart import seating_by_round
from tests.e2e.test_api import Api, api  # noqa: F401 - the server fixture
from tests.e2e.test_results_files import A4, finished, print_to_pdf  # noqa: F401 - the fixture

pytestmark = pytest.mark.postgres


def pages_of(api: Api, path: str) -> list[str]:  # noqa: F811
    with tempfile.TemporaryDirectory() as folder:
        reader = pypdf.PdfReader(print_to_pdf(api.base_url + path, Path(folder)))
        for page in reader.pages:
            size = (float(page.mediabox.width), float(page.mediabox.height))
            assert abs(size[0] - A4[0]) < 1 and abs(size[1] - A4[1]) < 1, size
        return [" ".join(page.extract_text().split()) for page in reader.pages]


def test_the_seating_chart_prints_a_page_a_round(
        api: Api, finished: dict[str, Any]) -> None:  # noqa: F811
    events = api.service.events_of(Tournament.create_id("cup"))
    started = [e for e in events if isinstance(e, Tournament.RoundStarted)]
    drawn = {(e.table, e.seat, e.player) for e in events
             if isinstance(e, Tournament.PlayerSeatedAt)}
    charts = seating_by_round(events)
    assert [c.round for c in charts] == [e.round for e in started] and len(charts) > 1
    first = {(s.table, s.seat, s.player) for s in charts[0].seats}
    assert len(first) == 24 and first <= drawn  # round 1 sits as the draw seated them
    assert len(charts[-1].seats) < 24  # players went out: later rounds seat fewer

    page = api.call("GET", "/seating?tournament=cup")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "<script" not in page.text
    printed = pages_of(api, "/seating?tournament=cup")
    assert len(printed) == len(charts)
    for text, chart in zip(printed, charts, strict=True):
        assert f"Round {chart.round} " in text and f"{len(chart.seats)} players" in text
        for seat in chart.seats:
            assert seat.table in text and f"{seat.seat} {seat.player}" in text, (chart.round, seat)


def test_the_payout_slips_print_one_a_prize_winner_with_the_fingerprint(
        api: Api, finished: dict[str, Any]) -> None:  # noqa: F811
    fingerprint = api.call("GET", "/audit/checkpoints?last=1").json()["fingerprint"]
    winners = [p for p in finished["positions"] if p["prize"] > 0]
    assert winners
    page = api.call("GET", "/payouts?tournament=cup")
    assert page.status_code == 200 and page.text.count('class="payout"') == len(winners)
    assert "Provisional" not in page.text  # published
    printed = pages_of(api, "/payouts?tournament=cup")
    assert len(printed) == math.ceil(len(winners) / 3)
    text = " ".join(printed)
    assert text.count("Payout slip") == len(winners) == text.count(fingerprint)
    for p in winners:  # the labels in capitals (the stylesheet's), thousands narrowly spaced
        prize = f"{p['prize']:,}".replace(",", "\u202f")
        tie = "=" if p["tied"] > 1 else ""
        assert (f"position {p['position']}{tie} player {p['player']} prize {prize}"
                in text.lower()), p
        assert f"Received by {p['player']}" in text


def test_an_unknown_tournament_s_paper_says_so(api: Api) -> None:  # noqa: F811
    for path in ("/seating", "/payouts"):
        page = api.call("GET", f"{path}?tournament=%3Cscript%3Ex%3C/script%3E")
        assert page.status_code == 404, path
        assert "no tournament named" in page.text and "<script>" not in page.text
