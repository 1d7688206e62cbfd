"""`sabot rotation TABLE [--json]`: who holds the shoe, and to whom it will pass.

TABLE is a table's name or UUID. The views are brought to the head of the store first.
"""

from __future__ import annotations

import argparse
import sys

from api.commands import SUMMARIES
from api.commands._common import add_database
from api.commands._views import print_json, reading
from infra.services.references import table_id_of
from projections.rotation import Rotation, rotation
from projections.runner import Runner


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("rotation", help=SUMMARIES["rotation"])
    parser.add_argument("table", metavar="TABLE", help="the table's name or UUID")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    def show(runner: Runner) -> int:
        found = rotation(runner.database, table_id_of(args.table))
        if found is None:
            print(f"sabot: no table {args.table}", file=sys.stderr)
            return 1
        if args.json:
            print_json(found)
        else:
            print(describe(found))
        return 0

    return reading(show, args.database, ("rotation",))


def describe(r: Rotation) -> str:
    holder = (f"{r.banker} holds the shoe, bank {r.bank}" if r.banker
              else f"nobody holds the shoe; offered to {r.offered_to or 'nobody'}")
    lines = [
        f"{r.table} ({r.variant}, {r.phase}, {r.coups} coups)",
        f"  {holder}",
        f"  passes next to: {' -> '.join(r.order) or 'nobody'}",
        f"  banco suivi: {r.banco_suivi or 'none'}",
    ]
    if r.hands:
        lines.append("  hands: " + ", ".join(f"{side} {p}" for side, p in r.hands.items()))
    if r.passed_hand is not None:
        lines.append(f"  passed hand: by {r.passed_hand.by or '?'};"
                     f" returns to {r.passed_hand.returns_to} if its taker loses")
    return "\n".join(lines)
