"""`sabot odds`: the exact odds and house edges of a variant, as a table or as one JSON object.

The figures come from `domain.odds.exact_odds`; this module only parses the table's settings
and presents the result.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from typing import Any

import msgspec
from rich.console import Console
from rich.table import Table

from domain.errors import RuleViolation
from domain.odds import ODDS_VARIANTS, Odds, Outcome, exact_odds
from domain.settings import TableSettings, Variant
from infra.errors import SettingsError

_BET_NAMES: dict[Variant, dict[Outcome, str]] = {
    Variant.PUNTO_BANCO: {Outcome.BANKER: "Banker", Outcome.PLAYER: "Player", Outcome.TIE: "Tie"},
    Variant.CHEMIN_DE_FER: {
        Outcome.BANKER: "Banker",
        Outcome.PLAYER: "Punters",
        Outcome.TIE: "Tie (void)",
    },
    Variant.SIMPLIFIED: {
        Outcome.BANKER: "Banque",
        Outcome.PLAYER: "Ponte",
        Outcome.TIE: "Égalité",
    },
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "odds",
        help="exact odds and house edges by full enumeration of the shoe",
        description=(
            "Count every ordered six-card sequence of a full shoe by the outcome of its coup, "
            "and give the exact probabilities and house edges."
        ),
    )
    parser.add_argument(
        "variant",
        metavar="VARIANT",
        help="one of " + ", ".join(v.value for v in ODDS_VARIANTS),
    )
    parser.add_argument(
        "--decks", type=int, help="decks in the shoe, 1 to 8 (default: the variant's)"
    )
    parser.add_argument(
        "--commission", type=int, metavar="PCT", help="commission on banker wins, in percent"
    )
    parser.add_argument(
        "--tie-pays", type=int, metavar="K", help="the tie bet pays K times the stake"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        odds = exact_odds(_settings(args))
    except RuleViolation as error:  # a variant or options it cannot price: usage (exit 2)
        raise SettingsError(f"{error.message} [{error.rule}]") from None
    if args.json:
        sys.stdout.write(msgspec.json.encode(_as_json(odds)).decode() + "\n")
    else:
        _print_table(odds)
    return 0


def _settings(args: argparse.Namespace) -> TableSettings:
    if args.variant not in {v.value for v in Variant}:
        raise RuleViolation(
            f"unknown variant {args.variant!r}: choose one of "
            + ", ".join(v.value for v in ODDS_VARIANTS),
            rule="odds-variant",
        )
    variant = Variant(args.variant)
    if variant is Variant.CHEMIN_DE_FER and args.tie_pays is not None:
        raise RuleViolation("chemin de fer has no tie bet: a tie is void", rule="odds-tie-bet")
    overrides: dict[str, int] = {}
    if args.decks is not None:
        overrides["decks"] = args.decks
    if args.commission is not None:
        overrides["commission_percent"] = args.commission
    if args.tie_pays is not None:
        overrides["tie_pays"] = args.tie_pays
    return TableSettings.default(variant, **overrides)


def _exact(fraction: Fraction) -> str:
    return f"{fraction.numerator}/{fraction.denominator}"


def _as_json(odds: Odds) -> dict[str, Any]:
    edges = {outcome: odds.edge(outcome) for outcome in Outcome}
    return {
        "variant": odds.variant.value,
        "decks": odds.decks,
        "counts": {outcome.value: odds.count(outcome) for outcome in Outcome},
        "total": odds.total,
        "probabilities": {outcome.value: float(odds.probability(outcome)) for outcome in Outcome},
        "edges": {
            outcome.value: None if edge is None else float(edge) for outcome, edge in edges.items()
        },
        "probabilities_exact": {
            outcome.value: _exact(odds.probability(outcome)) for outcome in Outcome
        },
        "edges_exact": {
            outcome.value: None if edge is None else _exact(edge) for outcome, edge in edges.items()
        },
    }


def _print_table(odds: Odds) -> None:
    names = _BET_NAMES[odds.variant]
    terms = [f"{odds.decks} deck{'s' if odds.decks > 1 else ''}"]
    terms.append(f"commission {odds.commission_percent}%")
    if odds.edge(Outcome.TIE) is not None:
        terms.append(f"{names[Outcome.TIE]} pays {odds.tie_pays} to 1")
    table = Table(
        title=f"Exact odds: {odds.variant.value} ({', '.join(terms)})",
        caption=f"{odds.total:,} ordered six-card sequences; house edge per unit staked",
    )
    table.add_column("Outcome")
    table.add_column("Sequences", justify="right")
    table.add_column("Probability (exact)", justify="right")
    table.add_column("Probability", justify="right")
    table.add_column("House edge", justify="right")
    for outcome in Outcome:
        probability = odds.probability(outcome)
        edge = odds.edge(outcome)
        table.add_row(
            names[outcome],
            f"{odds.count(outcome):,}",
            _exact(probability),
            f"{float(probability):.8f}",
            "no bet" if edge is None else f"{float(edge) * 100:.4f} %",
        )
    # Off a terminal (a pipe, a file) rich would wrap the table at 80 columns.
    Console(width=None if sys.stdout.isatty() else 120).print(table)
