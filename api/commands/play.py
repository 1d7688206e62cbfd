"""`sabot play`: bots play a table through the default policies, every action through the store."""

from __future__ import annotations

import argparse
from typing import Any

import msgspec

from api.commands import SUMMARIES
from api.commands._common import add_database, add_seed, progress, seed_or_random
from domain.game.coup import Side
from domain.game.settings import TableSettings, Variant
from domain.game.variants import rules_for
from domain.table.commands import SeatPlayer
from infra.services.application import open_service
from infra.services.autoplay import play_coups
from infra.services.tables import TableService, seeds_from


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("play", help=SUMMARIES["play"])
    parser.add_argument("--variant", choices=[v.value for v in Variant],
                        default=Variant.PUNTO_BANCO.value)
    parser.add_argument("--players", type=int, default=6, help="seated players (2 to 12)")
    parser.add_argument("--coups", type=int, default=50, help="coups to play")
    parser.add_argument("--chips", type=int, default=1000, help="each player's starting chips")
    add_seed(parser, "game")
    parser.add_argument("--table", help="table name (default: derived from the seed)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary only")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not 2 <= args.players <= 12:
        raise SystemExit("sabot play: --players must be 2 to 12")
    if args.coups < 1 or args.chips < 1:
        raise SystemExit("sabot play: --coups and --chips must be positive")
    master = seed_or_random(args.seed)
    with open_service(TableService, args.database) as service:  # closed: checkpointed
        summary = _play(service, args, master)
    if args.json:
        print(msgspec.json.encode(summary).decode())
    else:
        for key, value in summary.items():
            print(f"{key:>14}: {value}")
    return 0


def _play(service: TableService, args: argparse.Namespace, master: bytes) -> dict[str, Any]:
    """Open the table, seat the players, play the coups: what the table ended with."""
    service.seed_source = seeds_from(master)
    name = args.table or f"play-{args.variant}-{master.hex()[:12]}"
    settings = TableSettings.default(args.variant)
    table_id = service.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(args.players):
        player = f"player-{i + 1}"
        side = None
        if rules_for(settings).seats_on_sides:
            side = Side.RIGHT if i % 2 == 0 else Side.LEFT
        service.execute(table_id, SeatPlayer(command_id=f"{name}:seat:{player}", player=player,
                                             chips=args.chips, side=side))
    with progress(f"{args.variant} on {name}", args.coups, quiet=args.json) as bar:
        events = play_coups(service, table_id, master, name, args.coups,
                            on_step=lambda s: bar.update(bar.task_ids[0],
                                                         completed=min(s.coup_number, args.coups)))
    state = service.state(table_id)
    return {
        "table": name, "table_id": str(table_id), "variant": args.variant,
        "coups": state.coup_number, "tailles": state.taille, "events": events,
        "chips": {s.player: s.chips for s in state.seats},
        "banker": state.banker, "bank": state.bank,
        "house_result": state.house_result, "commission": state.commission_total,
    }
