"""`sabot odds`: the exact odds and house edges of a variant, as a table or as one JSON object.

The figures come from `domain.game.odds.exact_odds`; this module only parses the table's settings
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

from api.commands import SUMMARIES
from domain.errors import RuleViolation
from domain.game.banker_book import BookCost, book_cost
from domain.game.odds import ODDS_VARIANTS, Odds, OnFive, Outcome, exact_odds, on_five
from domain.game.settings import BankerWin, Preset, PunterFive, TableSettings, Variant
from domain.game.variants import rules_for
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
        help=SUMMARIES["odds"],
        description=(
            "Count every ordered six-card sequence of a full shoe by the outcome of its coup, "
            "and give the exact probabilities and house edges. For deux-tableaux, whose "
            "banker is free: what following 000's book costs against the exact optimum."
        ),
    )
    parser.add_argument(
        "variant",
        metavar="VARIANT",
        help="one of " + ", ".join(v.value for v in (*ODDS_VARIANTS, Variant.DEUX_TABLEAUX)),
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
    parser.add_argument(
        "--punter-five", choices=[f.value for f in PunterFive], metavar="RULE",
        help="the house rule on the punters' 5: choice (001, the default), draw or stand",
    )
    parser.add_argument(
        "--preset", choices=[p.value for p in Preset], metavar="RULES",
        help="house rules over the variant's defaults: " + ", ".join(p.value for p in Preset)
        + " (no-commission: punto banco without commission, a banker's six paid half)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = _settings(args)
    except RuleViolation as error:  # options out of range: a usage error (exit 2)
        raise SettingsError(f"{error.message} [{error.rule}]") from None
    if rules_for(settings).drawing.banker_free:
        cost = book_cost(settings)
        if args.json:
            sys.stdout.write(msgspec.json.encode(_book_json(cost)).decode() + "\n")
        else:
            _print_book(cost)
        return 0
    odds = exact_odds(settings)
    five = on_five(settings)
    if args.json:
        data = _as_json(odds)
        if five is not None:
            data["punter_on_five"] = _five_json(five)
        if odds.banker_win is not BankerWin.LESS_COMMISSION:
            data["banker_win"] = odds.banker_win.value
            data["banker_six"] = odds.banker_six
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        _print_table(odds)
        if five is not None:
            _print_five(five, _BET_NAMES[odds.variant])
    return 0


def _settings(args: argparse.Namespace) -> TableSettings:
    if args.variant not in {v.value for v in Variant}:
        raise RuleViolation(
            f"unknown variant {args.variant!r}: choose one of "
            + ", ".join(v.value for v in ODDS_VARIANTS),
            rule="odds-variant",
        )
    variant = Variant(args.variant)
    if not rules_for(variant).tie_bet and args.tie_pays is not None:
        raise RuleViolation(f"{variant} has no tie bet: a tie is void", rule="odds-tie-bet")
    overrides: dict[str, int | str] = {}
    if args.preset is not None:
        overrides["preset"] = args.preset
    if args.punter_five is not None:
        overrides["punter_five"] = args.punter_five
    if args.decks is not None:
        overrides["decks"] = args.decks
    if args.commission is not None:
        overrides["commission_percent"] = args.commission
    if args.tie_pays is not None:
        overrides["tie_pays"] = args.tie_pays
    return TableSettings.default(variant, **overrides)


def _exact(fraction: Fraction) -> str:
    return f"{fraction.numerator}/{fraction.denominator}"


def _five_json(five: OnFive) -> dict[str, Any]:
    return {
        **{move: {
            "edges": {o.value: _float(odds.edge(o)) for o in Outcome},
            "edges_exact": {o.value: _exact_or_none(odds.edge(o)) for o in Outcome},
        } for move, odds in (("stand", five.stand), ("draw", five.draw))},
        "better": five.better.value,
    }


def _float(edge: Fraction | None) -> float | None:
    return None if edge is None else float(edge)


def _exact_or_none(edge: Fraction | None) -> str | None:
    return None if edge is None else _exact(edge)


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
    if odds.banker_win is BankerWin.SIX_PAYS_HALF:
        terms.append("no commission, a banker's six paid half")
    else:
        terms.append(f"commission {odds.commission_bp / 100:g}%")
    if rules_for(odds.variant).drawing.punter_five_applies:
        terms.append(f"punters {'draw' if odds.punters_draw_on_five else 'stand'} on 5")
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


def _print_five(five: OnFive, names: dict[Outcome, str]) -> None:
    table = Table(
        title="The punters' choice on 5 (001: \"au choix\")",
        caption=f"better for the punters: {five.better.value} on 5",
    )
    table.add_column("Punters on 5")
    for outcome in (Outcome.PLAYER, Outcome.BANKER):
        table.add_column(f"{names[outcome]} edge", justify="right")
    for move, odds in (("stand", five.stand), ("draw", five.draw)):
        edges = [odds.edge(outcome) for outcome in (Outcome.PLAYER, Outcome.BANKER)]
        table.add_row(move, *(f"{float(e) * 100:.4f} %" for e in edges if e is not None))
    Console(width=None if sys.stdout.isatty() else 120).print(table)


def _given(given: int | None) -> str:
    return "stood" if given is None else str(given)


def _book_json(cost: BookCost) -> dict[str, Any]:
    return {
        "variant": Variant.DEUX_TABLEAUX.value,
        "decks": cost.decks,
        "book_cost_per_coup": float(cost.per_coup),
        "book_cost_per_coup_exact": _exact(cost.per_coup),
        "optimum_per_coup": float(cost.optimum),
        "optimum_per_coup_exact": _exact(cost.optimum),
        "cells": [{
            "banker": cell.banker,
            "given": cell.given,
            "book": "draw" if cell.book_draws else "stand",
            "optimum": "stand" if cell.book_draws else "draw",
            "probability": float(cell.probability),
            "probability_exact": _exact(cell.probability),
            "cost": float(cell.cost),
            "cost_exact": _exact(cell.cost),
        } for cell in cost.cells],
    }


def _print_book(cost: BookCost) -> None:
    table = Table(
        title=f"À deux tableaux, {cost.decks} decks: 000's book against the exact optimum",
        caption=(f"one staked tableau against the banker, full shoe; following the book costs "
                 f"{float(cost.per_coup) * 100:.4f} % of the stake per coup (the optimum "
                 f"earns {float(cost.optimum) * 100:.4f} %)"),
    )
    for column in ("Card given", "Banker's point", "Book", "Optimum", "Reached per coup",
                   "Cost there per unit"):
        table.add_column(column, justify="right")
    for cell in cost.cells:
        book, best = ("draw", "stand") if cell.book_draws else ("stand", "draw")
        table.add_row(_given(cell.given), str(cell.banker), book, best,
                      f"{float(cell.probability) * 100:.4f} %", f"{float(cell.cost):.4f}")
    Console(width=None if sys.stdout.isatty() else 120).print(table)
