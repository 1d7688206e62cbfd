"""`sabot auctions [--table TABLE] [--json]`: every bank held, how it was won (with the
auction's bids, in order, when it was auctioned) and how it ended.

The views are brought to the head of the store first.
"""

from __future__ import annotations

import argparse

from api.commands import SUMMARIES
from api.commands._common import add_database
from api.commands._views import print_json, reading
from infra.services.references import table_id_of
from projections.auctions import banks_held
from projections.runner import Runner


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("auctions", help=SUMMARIES["auctions"])
    parser.add_argument("--table", metavar="TABLE", help="one table (name or UUID)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    def show(runner: Runner) -> int:
        chosen = str(table_id_of(args.table)) if args.table else None
        banks = banks_held(runner.database, table_id=chosen)
        if args.json:
            print_json(banks)
            return 0
        print(f"{'table':<24}{'#':>4}  {'banker':<14}{'amount':>8}  {'how':<9}{'coups':>6}"
              f"{'largest':>9}  ended")
        for b in banks:
            ended = f"{b.ended} ({b.final_bank})" if b.ended else "holding"
            print(f"{b.table:<24}{b.number:>4}  {b.player:<14}{b.amount:>8}  {b.how:<9}"
                  f"{b.coups:>6}{b.largest:>9}  {ended}")
            if b.auction is not None:
                bids = ", ".join(f"{bid.player} {bid.amount}" for bid in b.auction.bids)
                print(f"{'':<28}auction (minimum {b.auction.minimum}): {bids}")
        return 0

    return reading(show, args.database, ("auctions",))
