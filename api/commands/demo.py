"""`sabot demo`: a whole tournament played by bots, through the store, workers and projections.

A client of the organiser's service (`infra.services.tournaments.Tournaments`), as
`sabot tournament` is: it creates a tournament from `--preset` (its common fields from the flags
given), or from the flags alone (a freeze-out cut to one table's worth after every round), registers
house bots, starts it, then follows it while a celery worker started here (on the embedded broker
unless `--broker` names one) directs it: the worker's director plays every step and records the
bust-outs, the balancing, the cuts and the prizes. The standings are read from the projections; the
chip accounting must add up exactly.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import time
import uuid
from typing import Any

import msgspec

from api.commands import SUMMARIES
from api.commands._common import add_database, add_seed, progress, seed_or_random
from api.commands._views import views
from api.commands.worker import running_worker
from domain.errors import RuleViolation
from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.tournament.base import TournamentStatus
from domain.tournament.formats import Dealing
from domain.tournament.presets import PRESETS, preset
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import TournamentState
from infra.services.application import open_service
from infra.services.tables import TableService
from infra.services.tournaments import Tournaments
from infra.settings import HOME, absolute_database_url, resolve_database_url
from infra.store.leases import Lease, Leases
from projections.standings import standings

STARTUP = 60.0  # seconds the worker may take to start directing
NO_DIRECTOR = 5.0  # seconds past the director's lease before the worker is deemed dead
PRIZES = (5000, 3000, 2000)  # basis points of the pool: 50%, 30%, 20%


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("demo", help=SUMMARIES["demo"])
    parser.add_argument("--preset", choices=list(PRESETS),
                        help="a preset format, its tables house-dealt (default: a freeze-out "
                        "from the flags)")
    parser.add_argument("--variant", choices=[v.value for v in Variant],
                        default=Variant.CHEMIN_DE_FER.value)
    parser.add_argument("--tables", type=int, default=4, help="tables at the start (1 to 16)")
    parser.add_argument("--players", type=int, default=24, help="entrants (2 to 200)")
    parser.add_argument("--coups-per-round", type=int, default=20, metavar="N")
    parser.add_argument("--chips", type=int, default=1000, help="starting chips")
    parser.add_argument("--broker", metavar="URL",
                        help="celery broker (default: $SABOT_BROKER_URL, else embedded)")
    add_seed(parser, "tournament")
    parser.add_argument("--name", help="tournament name (default: derived from the seed)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    master = seed_or_random(args.seed)
    database = absolute_database_url(resolve_database_url(args.database))
    broker = args.broker if args.broker is not None else os.environ.get("SABOT_BROKER_URL", "")
    name = args.name or f"demo-{args.preset or args.variant}-{master.hex()[:12]}"
    with open_service(TableService, database) as service:  # closed: its last checkpoint
        tournaments = Tournaments(service)
        tournament_id = tournaments.create(name, settings, seed=master,
                                           command_id=f"{name}:create")
        for n in range(args.players):
            tournaments.register(tournament_id, f"player-{n + 1:02d}", bot=True,
                                 command_id=f"{name}:reg:{n}")
        tournaments.start(tournament_id, command_id=f"{name}:start")
        with running_worker(broker, database, HOME / "demo-worker.log") as worker:
            _follow(tournaments, tournament_id, quiet=args.json, worker=worker)
        report = _report(tournaments, tournament_id, database)
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        _print(report)
    return 0 if report["accounting"]["balanced"] else 1


def _follow(tournaments: Tournaments, tournament_id: uuid.UUID, *, quiet: bool,
            worker: subprocess.Popen[bytes]) -> None:
    """Show each round's progress until the tournament finishes. No director alive (its lease
    ran out `NO_DIRECTOR` seconds ago, or none took it within `STARTUP`) means the worker is
    absent: said at once, naming the tournament that waits. Once the demo's own worker has
    died, the lease running out is enough (no grace): at most `LEASE_SECONDS` after it died."""
    started = time.monotonic()
    leases = Leases(tournaments.service.database)
    state = tournaments.state(tournament_id)
    while not _finished(state):
        label = f"round {state.round}: {len(state.tables)} tables, {len(state.in_play())} left"
        with progress(label, state.current.coups or 1, quiet=quiet) as bar:
            at = state.round
            while state.round == at and not _finished(state):
                _require_director(leases.held(tournament_id), state.name, started,
                                  exited=worker.poll())
                bar.update(bar.task_ids[0], completed=state.steps)
                time.sleep(0.1)
                state = tournaments.state(tournament_id)


def _require_director(lease: Lease | None, name: str, started: float,
                      exited: int | None = None) -> None:
    if exited is not None and (lease is None or time.time() > lease.expires):
        raise RuleViolation(f"no worker alive: tournament {name} waits for a director (the "
                            f"demo's worker exited, code {exited})", rule="workers-absent")
    if lease is None and time.monotonic() - started > STARTUP:
        raise RuleViolation(f"no worker took tournament {name} within {STARTUP:.0f} s: is the "
                            "broker reachable, the worker starting?", rule="workers-absent")
    if lease is not None and time.time() - lease.expires > NO_DIRECTOR:
        raise RuleViolation(f"no worker alive: tournament {name} waits for a director (the last"
                            f", {lease.holder}, stopped {time.time() - lease.expires:.0f} s "
                            "ago)", rule="workers-absent")


def _finished(state: TournamentState) -> bool:
    return state.status is TournamentStatus.FINISHED


def _settings(args: argparse.Namespace) -> TournamentSettings:
    if args.preset:
        return preset(args.preset, coups_per_round=args.coups_per_round, tables=args.tables,
                      starting_chips=args.chips, dealing=Dealing.AUTOMATIC)  # all bots
    if not 1 <= args.tables <= 16 or not 2 <= args.players <= 200:
        raise SystemExit("sabot demo: --tables 1 to 16 and --players 2 to 200")
    if args.players < args.tables * 2:
        raise SystemExit("sabot demo: at least two players a table")
    if args.coups_per_round < 1 or args.chips < 10:
        raise SystemExit("sabot demo: --coups-per-round >= 1 and --chips >= 10")
    seats = math.ceil(args.players / args.tables)
    return TournamentSettings(
        variant=Variant(args.variant), seats_per_table=seats, starting_chips=args.chips,
        min_stake=max(1, args.chips // 100), max_stake=max(1, args.chips // 5),
        coups_per_round=args.coups_per_round, advance=seats if args.tables > 1 else 1,
        prizes=PRIZES if args.players >= len(PRIZES) else (10000,),
        buy_in=args.chips // 10,
    ).check()


def _report(tournaments: Tournaments, tournament_id: uuid.UUID,
            database: str) -> dict[str, Any]:
    state = tournaments.state(tournament_id)
    tables = [tournaments.service.state(Table.create_id(state.table_name(n)))
              for n in range(1, state.tables_opened + 1)]
    with views(database) as runner:
        runner.catch_up("standings")
        chips = {row.player: row.chips for row in standings(runner.database,
                                                              tournament=state.name)}
    results = state.results()
    in_play = sum(t.chips_at_table for t in tables)
    carried = sum(t.chips_out for t in tables)
    house = sum(t.house_result for t in tables)
    issued = state.chips_issued
    return {
        "tournament_id": str(tournament_id),
        "tournament": state.name,
        "standings": [{"player": r.player, "chips": chips.get(r.player, 0),
                       "position": r.position, "tied": r.tied} for r in results],
        "prizes": [{"player": r.player, "position": r.position, "amount": r.prize}
                   for r in results if r.prize],
        "accounting": {
            "chips_issued": issued, "players_chips": in_play + carried, "in_play": in_play,
            "carried_away": carried, "house_result": house,
            "commission": sum(t.commission_total for t in tables),
            "prize_pool": state.pool, "prizes_paid": sum(r.prize for r in results),
            "balanced": issued == in_play + carried + house
            and all(t.chips_accounted() for t in tables),
        },
    }


def _print(report: dict[str, Any]) -> None:
    print(f"\n{report['tournament']}  ({report['tournament_id']})\n")
    print(f"{'pos':>4}  {'player':<12}{'chips':>8}")
    for row in report["standings"][:10]:
        tie = "=" if row["tied"] > 1 else " "
        print(f"{row['position']:>3}{tie}  {row['player']:<12}{row['chips']:>8}")
    if len(report["standings"]) > 10:
        print(f"  ... {len(report['standings']) - 10} more")
    print("\nprizes: " + ", ".join(f"{p['position']}. {p['player']} {p['amount']}"
                                   for p in report["prizes"]))
    acc = report["accounting"]
    print(f"chips: issued {acc['chips_issued']} = players {acc['players_chips']} "
          f"+ house {acc['house_result']} (commission {acc['commission']}): "
          f"{'balanced' if acc['balanced'] else 'NOT BALANCED'}")
