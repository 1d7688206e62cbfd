"""The seating chart and the payout slips, printed: pages made on the server, as the results
sheet is (`api.routes_sheet`), with its stylesheet (`api/static/sheet.css`) and no script.

    /seating?tournament=NAME    each round's seating as the round started: table, seat and
                                player, a round a page (before the first round, the draw)
    /payouts?tournament=NAME    one slip a prize winner: tournament, date, position, player,
                                prize, the record's checkpoint fingerprint and two signature
                                lines (the player's and the organiser's), three an A4 page

An unknown tournament is a 404 page saying so. The charts are replayed from the tournament's
events (`domain.tournament.seating_chart`); the slips hold what the results hold
(`GET /tournaments/{t}/results`), marked *Provisional* until the organiser publishes them.
"""

from __future__ import annotations

import html
from itertools import groupby
from string import Template
from typing import Annotated, Any

from litestar import Request, Response, get
from litestar.datastructures import State
from litestar.params import QueryParameter

from api.routes_audit import read_checkpoints
from api.routes_page import STATIC
from api.routes_sheet import chips, html_page, unknown_tournament
from api.routes_tables import blocking
from api.routes_tournaments import _service
from domain.errors import NotFound
from domain.tournament.seating_chart import RoundSeating, seating_by_round
from infra.services.tournaments import Tournaments, tournament_id_of

TournamentName = Annotated[str, QueryParameter(description="the tournament's name or UUID")]

SEATING = Template((STATIC / "seating-sheet.html").read_text())
PAYOUTS = Template((STATIC / "payout-slips.html").read_text())
DATE = "%-d %B %Y"


@get("/seating", include_in_schema=False)
async def seating_chart(request: Request[Any, Any, State],
                        tournament: TournamentName) -> Response[str]:
    try:
        return html_page(await blocking(seating, _service(request), tournament), 200)
    except NotFound:
        return unknown_tournament(tournament)


@get("/payouts", include_in_schema=False)
async def payout_slips(request: Request[Any, Any, State],
                       tournament: TournamentName) -> Response[str]:
    try:
        return html_page(await blocking(payouts, _service(request), tournament), 200)
    except NotFound:
        return unknown_tournament(tournament)


def seating(service: Tournaments, tournament: str) -> str:
    """The seating chart of `tournament` (a name or UUID), as HTML."""
    tournament_id = tournament_id_of(tournament)
    aggregate = service.tournament(tournament_id)
    name = aggregate.state.name
    date = aggregate.created_on.astimezone().strftime(DATE)
    charts = seating_by_round(service.service.events_of(tournament_id))
    rounds = "\n".join(_round(name, date, chart) for chart in charts) or (
        f'  <article class="sheet chart"><h1>{html.escape(name)}</h1>'
        "<p>No seats yet: the draw seats the players when the tournament starts.</p></article>")
    return SEATING.substitute(name=html.escape(name), rounds=rounds)


def _round(name: str, date: str, chart: RoundSeating) -> str:
    title = f"Round {chart.round}" if chart.round else "The draw"
    tables = []
    for table, seats in groupby(chart.seats, key=lambda s: s.table):
        rows = "".join(f'<tr><td class="num">{s.seat}</td><td>{html.escape(s.player)}</td></tr>'
                       for s in seats)
        tables.append(f'      <section><h2>{html.escape(table)}</h2><table><thead><tr>'
                      f'<th class="num">Seat</th><th>Player</th></tr></thead>'
                      f"<tbody>{rows}</tbody></table></section>")
    return (f'  <article class="sheet chart">\n    <header><h1>{html.escape(name)}</h1>'
            f'<p class="meta">{title} · stage {html.escape(chart.stage)} · {date} · '
            f"{len(chart.seats)} players</p></header>\n"
            f'    <div class="tables">\n' + "\n".join(tables) + "\n    </div>\n  </article>")


def payouts(service: Tournaments, tournament: str) -> str:
    """The payout slips of `tournament` (a name or UUID), as HTML."""
    tournament_id = tournament_id_of(tournament)
    aggregate = service.tournament(tournament_id)
    results = service.results(tournament_id)
    record = read_checkpoints(service.service, 1)
    date = aggregate.created_on.astimezone().strftime(DATE)
    state = ("" if results.published else
             '<p class="state provisional">Provisional: the results are not published yet.</p>')
    fingerprint = html.escape(record.fingerprint or "none yet")
    slips = [
        f'  <article class="payout">\n    <h1>Payout slip</h1>\n'
        f'    <p class="meta">{html.escape(results.name)} · {date}</p>{state}\n'
        f"    <dl><dt>Position</dt><dd>{p.position}{'=' if p.tied > 1 else ''}</dd>"
        f"<dt>Player</dt><dd>{html.escape(p.player)}</dd>"
        f'<dt>Prize</dt><dd class="prize">{chips(p.prize)}</dd></dl>\n'
        f'    <p class="record">The record: checkpoint <strong class="fingerprint">'
        f"{fingerprint}</strong>, key <span class=\"key\">{html.escape(record.key)}</span>."
        f"</p>\n    <div class=\"signatures\"><p>Received by {html.escape(p.player)}</p>"
        f"<p>Paid for the organiser</p></div>\n  </article>"
        for p in results.positions if p.prize > 0]
    return PAYOUTS.substitute(name=html.escape(results.name), slips="\n".join(slips) or (
        f'  <article class="sheet"><h1>{html.escape(results.name)}</h1>'
        "<p>No prize is won yet: the payout slips come with the results.</p></article>"))
