"""`sabot recall TABLE [--last N] [--json]`: a table's last coups, step by step.

TABLE is a table's name or UUID. The views are brought to the head of the store first.
"""

from __future__ import annotations

import argparse
import sys

from api.commands import SUMMARIES
from api.commands._common import add_database
from api.commands._views import print_json, reading
from infra.services.references import table_id_of
from projections.recall import KEEP, CoupRecall, recall
from projections.runner import Runner


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("recall", help=SUMMARIES["recall"])
    parser.add_argument("table", metavar="TABLE", help="the table's name or UUID")
    parser.add_argument("--last", type=int, default=1, metavar="N",
                        help=f"how many coups (default: 1, at most {KEEP})")
    parser.add_argument("--json", action="store_true", help="print JSON (every recorded step)")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.last < 1:
        raise SystemExit("sabot recall: --last must be positive")

    def show(runner: Runner) -> int:
        coups = recall(runner.database, table_id_of(args.table), args.last)
        if args.json:
            print_json(coups)
        elif not coups:
            print(f"sabot: no coup recorded at table {args.table}", file=sys.stderr)
            return 1
        else:
            print("\n\n".join(describe(coup) for coup in coups))
        return 0

    return reading(show, args.database, ("recall",))


def describe(coup: CoupRecall) -> str:
    def stakes(lines: list[object]) -> str:
        return ", ".join(f"{s.player} {s.amount} on {s.on}" for s in lines) or "none"  # type: ignore[attr-defined]

    hands: dict[str, list[str]] = {}
    for card in coup.cards:
        hands.setdefault(card.side, []).append(
            f"{'+' if card.third else ''}{card.card}@{card.position}")
    decisions = ", ".join(f"{d.side} {'draws' if d.draw else 'stands'} ({d.actor})"
                          for d in coup.decisions)
    outcomes = ", ".join(f"{side}: {o}" for side, o in coup.outcomes.items())
    points = " v ".join(f"{side} {p}" for side, p in coup.points.items())
    lines = [
        f"{coup.table} coup {coup.coup} (taille {coup.taille}, {coup.variant})",
        f"  bank: {coup.banker or 'the house'} {coup.bank_before} -> {coup.bank_after};"
        f" shoe after: {coup.shoe_after or '-'}",
        f"  stakes: {stakes(list(coup.stakes))}" + (
            f"; banco: {', '.join(coup.bancos)}" if coup.bancos else ""),
    ]
    if coup.covered or coup.returned:
        lines.append(f"  covered: {stakes(list(coup.covered))};"
                     f" returned: {stakes(list(coup.returned))}")
    lines += [
        "  cards: " + " | ".join(f"{side} {' '.join(cards)}" for side, cards in hands.items()),
        f"  naturals: {', '.join(coup.naturals) or 'none'}; decisions: {decisions or 'none'}",
        f"  outcome: {outcomes} ({points})",
        "  payouts: " + (", ".join(f"{p.player} {p.net:+d}" for p in coup.payouts) or "none")
        + f"; commission {coup.commission}",
        "  chips: " + ", ".join(f"{player} {c.before}->{c.after}"
                                for player, c in coup.chips.items()),
    ]
    lines += [f"  corrected: {c.player} {c.delta:+d} by {c.actor}: {c.reason}"
              for c in coup.corrections]
    return "\n".join(lines)
