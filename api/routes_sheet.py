"""The printable results sheet: `/results?tournament=NAME`, a page made on the server.

The tournament's name, variant and date, its positions (ties marked `=`) and prizes, who
published the results and when (or that they are provisional), and the fingerprint of the
record's latest signed checkpoint with its key, for anyone to hold the record to later
(`sabot audit verify`). Plain HTML (`api/static/results-sheet.html`, its fields escaped here)
and a stylesheet with its print rules (`api/static/sheet.css`): the browser's Print, or Save
as PDF, gives one A4 page for a tournament of up to 33 players (36 take two); no script, so
`chromium --print-to-pdf URL` prints it too. An unknown tournament is a 404 page saying so.
"""

from __future__ import annotations

import datetime
import html
from string import Template
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from api.routes_audit import read_checkpoints
from api.routes_page import POLICY, STATIC
from api.routes_tables import blocking
from api.routes_tournaments import _service
from domain.errors import NotFound
from infra.services.tournament_view import Position
from infra.services.tournaments import Tournaments, tournament_id_of

Tournament = Annotated[str, QueryParameter(description="the tournament's name or UUID")]

SHEET = Template((STATIC / "results-sheet.html").read_text())


@get("/results", include_in_schema=False)
async def results_sheet(request: Request[Any, Any, State],
                        tournament: Tournament) -> Response[str]:
    try:
        page = await blocking(sheet, _service(request), tournament)
    except NotFound:
        return unknown_tournament(tournament)
    return html_page(page, 200)


def unknown_tournament(tournament: str) -> Response[str]:
    """The page of a printed sheet for a tournament that does not exist (404)."""
    return html_page(f"<!DOCTYPE html><html lang='en'><meta charset='utf-8'><title>Unknown "
                     f"tournament</title><p>There is no tournament named "
                     f"<strong>{html.escape(tournament)}</strong>.</p></html>", 404)


def sheet(service: Tournaments, tournament: str) -> str:
    """The sheet of `tournament` (a name or UUID), as HTML."""
    tournament_id = tournament_id_of(tournament)
    aggregate = service.tournament(tournament_id)
    results = service.results(tournament_id)
    state = aggregate.state
    record = read_checkpoints(service.service, 1)
    finished = results.status == "finished"
    if results.published and results.published_at is not None:
        published = (f"Published by {results.published_by} on "
                     f"{when(results.published_at)}.")
        status, status_class = "Final results", "final"
    else:
        published = "Not published yet: a dispute may still change these results."
        status, status_class = (("Provisional results", "provisional") if finished
                                else (f"In play ({results.status}): the places given so far",
                                      "provisional"))
    fields = {
        "name": results.name, "variant": state.settings.variant.value.replace("-", " "),
        "date": aggregate.created_on.astimezone().strftime("%-d %B %Y"),
        "entrants": str(state.entries), "pool": chips(results.prize_pool),
        "state": status, "published": published,
        "fingerprint": record.fingerprint or "none yet", "key": record.key,
        "checkpoint_time": f" at {record.latest.time}" if record.latest else "",
    }
    escaped = {name: html.escape(value) for name, value in fields.items()}
    escaped["state_class"] = status_class
    escaped["rows"] = "\n".join(_row(p, results.winners) for p in results.positions)
    return SHEET.substitute(escaped)


def _row(position: Position, winners: list[str]) -> str:
    tie = "=" if position.tied > 1 else ""
    winner = ' class="winner"' if position.player in winners else ""
    return (f'        <tr{winner}><td class="num">{position.position}{tie}</td>'
            f"<td>{html.escape(position.player)}</td>"
            f'<td class="num">{chips(position.prize) if position.prize else ""}</td></tr>')


def chips(amount: int) -> str:
    return f"{amount:,}".replace(",", "\u202f")  # a narrow space between thousands


def when(seconds: float) -> str:
    moment = datetime.datetime.fromtimestamp(seconds).astimezone()
    return moment.strftime("%-d %B %Y, %H:%M %Z")


def html_page(text: str, status: int) -> Response[str]:
    return Response(text, status_code=status, media_type="text/html", headers=POLICY)
