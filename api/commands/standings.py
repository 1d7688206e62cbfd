"""`sabot standings TOURNAMENT [--json | --csv]`, `sabot standings --table TABLE [...]`: ranks,
chips, coups played and biggest wins of a tournament, or of one table (name or UUID).

Equal chips share a rank; `projections.standings` gives the rules. A tournament's are in the
order the API and the page show: in play by chips, then out by finishing position. The views
are brought to the head of the store first.
"""

from __future__ import annotations

import argparse
import sys

from api.commands import SUMMARIES
from api.commands._common import add_database
from api.commands._views import add_output, print_json, reading
from api.csv_files import STANDING_COLUMNS, as_csv
from domain.errors import NotFound
from infra.services.application import open_service
from infra.services.references import table_id_of
from infra.services.tables import TableService
from infra.services.tournaments import Tournaments, tournament_id_of
from projections.runner import Runner
from projections.standings import Standing, standings, tournament_standings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("standings", help=SUMMARIES["standings"])
    parser.add_argument("tournament", metavar="TOURNAMENT", nargs="?", help="the tournament")
    parser.add_argument("--table", metavar="TABLE", help="one table instead (name or UUID)")
    add_output(parser, csv=True)
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if (args.tournament is None) == (args.table is None):
        raise SystemExit("sabot standings: give a TOURNAMENT or --table TABLE")

    def show(runner: Runner) -> int:
        if args.table:
            rows = standings(runner.database, table_id=table_id_of(args.table))
        else:
            rows = _tournament(runner, args.tournament, args.database)
        if args.json:
            print_json(rows)
            return 0
        if args.csv:
            sys.stdout.write(as_csv(rows, STANDING_COLUMNS))
            return 0
        if not rows:
            print(f"sabot: no player in {args.tournament or args.table}", file=sys.stderr)
            return 1
        print(f"{'rank':>4}  {'player':<20}{'chips':>10}{'coups':>7}{'biggest win':>13}")
        for row in rows:
            print(f"{row.rank:>4}  {row.player:<20}{row.chips:>10}{row.coups:>7}"
                  f"{row.biggest_win:>13}")
        return 0

    return reading(show, args.database, ("standings",))


def _tournament(runner: Runner, tournament: str, database: str | None) -> list[Standing]:
    """A tournament's standings in the one order the API and the page show (tables opened for a
    tournament that was never created: their players by chips)."""
    try:
        with open_service(TableService, database) as service:
            state = Tournaments(service).state(tournament_id_of(tournament))
    except NotFound:
        return standings(runner.database, tournament=tournament)
    return tournament_standings(runner.database, state)
