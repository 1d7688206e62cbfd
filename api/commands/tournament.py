"""`sabot tournament ...`: the organiser's commands on the command line, as over HTTP.

    sabot tournament presets [--json]
    sabot tournament create [--preset P | --format FILE] [--name N] [--coups-per-round N]
                            [--tables N] [--starting-chips N] [--minutes-per-round N]
                            [--dealing D] [--bet-seconds N] [--set FIELD=VALUE]...
                            [--seed HEX] [--json]
    sabot tournament list [--all] [--json]   # --all: the cancelled and archived too
    sabot tournament show ID [--json]        # the JSON of GET /tournaments/{id}
    sabot tournament register ID PLAYER [--bot]
    sabot tournament unregister ID PLAYER
    sabot tournament start|pause|resume ID
    sabot tournament cancel|archive ID       # before its start | after its finish
    sabot tournament intervene ID KIND [PLAYER] --reason TEXT [--delta N] [--table T]
    sabot tournament standings ID [--json | --csv]
    sabot tournament results ID [--json | --csv]   # GET /tournaments/{id}/results, as JSON or CSV
    sabot tournament publish ID              # the results final (no dispute open)
    sabot tournament sign-in ID (PLAYER | --all) [--url URL] [--qr DIR] [--json]
    sabot tournament preview (--preset P | --format FILE) --players N [--runs K] [--json]

ID is a tournament's UUID or its name. Each command that changes a tournament prints one line
saying what it did, naming the tournament and the player (`registered ann in friday`); a
refusal names what was typed (`no tournament 'fridya'`). `--format FILE` is a JSON format
(the `format` of `sabot tournament presets --json`); `--set FIELD=VALUE` gives any field of a
format over it (VALUE in JSON, or a bare word: `--set betting_order=rotating`). `--seed`
makes the seating draw and every shoe reproducible, for demos and tests only; without it they
come from the operating system's CSPRNG. A refusal of the rules prints one line and exits 1;
bad usage exits 2. The commands act as the organiser; `sabot worker` (or `sabot serve`)
directs the rounds once started.
`sign-in` makes sign-in slips (`api.sign_in`): for each player a line with the PIN and the link
(on `--url`, the address players open: default `$SABOT_PUBLIC_URL`, else the public URL
`sabot serve` recorded in the store, `infra.store.installation`, else http://127.0.0.1:8000),
and with `--qr DIR` the QR code as DIR/PLAYER.svg.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from api.commands import SUMMARIES
from api.commands._common import add_database, add_seed, progress
from api.commands._views import add_output, print_json
from api.csv_files import RESULT_COLUMNS, STANDING_COLUMNS, as_csv
from api.sign_in import SignInCodes, make_slips
from api.tokens import TokenStore
from domain.actors import ORGANISER
from domain.errors import DomainError, NotFound
from domain.tournament.formats import Dealing
from domain.tournament.presets import PRESETS, preset
from domain.tournament.seating import smallest_field
from domain.tournament.settings import TournamentSettings
from infra.services.application import open_service
from infra.services.disputes import DisputeService
from infra.services.preview import PACE, preview
from infra.services.results import publish_results
from infra.services.tables import TableService
from infra.services.tournaments import Tournaments, tournament_id_of
from infra.settings import pin_tries
from infra.store.installation import PUBLIC_URL, recorded
from projections.registry import VIEWS
from projections.runner import Runner
from projections.standings import tournament_standings

EXIT_REFUSED = 1
DEFAULT_URL = "http://127.0.0.1:8000"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("tournament", help=SUMMARIES["tournament"])
    commands = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    def command(name: str, help_: str, handler: Callable[[argparse.Namespace], int], *,
                ident: bool = True, json: bool = False,
                csv: bool = False) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_)
        if ident:
            sub.add_argument("id", metavar="ID", help="the tournament's UUID or name")
        if json:
            add_output(sub, csv=csv)
        add_database(sub)
        sub.set_defaults(handler=lambda args: _guarded(handler, args))
        return sub

    command("presets", "the preset formats", _presets, ident=False, json=True)
    create = command("create", "create a tournament; prints its name and id", _create,
                     ident=False,
                     json=True)
    source = create.add_mutually_exclusive_group()
    source.add_argument("--preset", choices=list(PRESETS), help="a preset format")
    source.add_argument("--format", type=Path, metavar="FILE", help="a JSON format")
    create.add_argument("--name", help="the tournament's name (default: generated)")
    create.add_argument("--coups-per-round", type=int, metavar="N")
    create.add_argument("--tables", type=int, metavar="N", help="tables at the draw")
    create.add_argument("--starting-chips", type=int, metavar="N")
    create.add_argument("--minutes-per-round", type=int, metavar="N")
    create.add_argument("--dealing", choices=[d.value for d in Dealing],
                        help="automatic (the house deals) or croupier")
    create.add_argument("--bet-seconds", type=int, metavar="N", help="each turn's bet clock")
    create.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="any field of the format (VALUE in JSON, or a bare word)")
    add_seed(create, "tournament (demos and tests only)")
    listing = command("list", "the tournaments of the lobby", _list, ident=False, json=True)
    listing.add_argument("--all", action="store_true",
                         help="the cancelled and archived tournaments too")
    command("show", "a tournament, as the big screen shows it", _show, json=True)
    for name in ("register", "unregister"):
        sub = command(name, f"{name} a player", _register)
        sub.add_argument("player", metavar="PLAYER")
        if name == "register":
            sub.add_argument("--bot", action="store_true", help="a house bot")
    for name in ("start", "pause", "resume"):
        command(name, f"{name} the tournament", _act)
    command("cancel", "call the tournament off before its start", _file)
    command("archive", "file the finished tournament away", _file)
    intervene = command("intervene", "an intervention, with its reason", _intervene)
    intervene.add_argument("kind", metavar="KIND", help="move, break-table, disqualify, "
                           "correct-chips, penalise, add-late-player")
    intervene.add_argument("player", metavar="PLAYER", nargs="?", default="")
    intervene.add_argument("--reason", required=True)
    intervene.add_argument("--delta", type=int, default=0, help="chips to add (or take)")
    intervene.add_argument("--table", help="where to move, or the table to break")
    command("standings", "in play by chips, then out by position", _standings, json=True,
            csv=True)
    command("results", "finishing positions and prizes, the winner first", _results,
            json=True, csv=True)
    command("publish", "publish the finished tournament's results", _publish)
    slips = command("sign-in", "sign-in slips: a link, its QR code and a PIN a player",
                    _sign_in, json=True)
    who = slips.add_mutually_exclusive_group(required=True)
    who.add_argument("player", metavar="PLAYER", nargs="?")
    who.add_argument("--all", action="store_true", help="every registered player")
    slips.add_argument("--url", help="the server's address as players open it (default: "
                       "$SABOT_PUBLIC_URL, else the one `sabot serve` recorded, else "
                       f"{DEFAULT_URL})")
    slips.add_argument("--qr", type=Path, metavar="DIR", help="write each QR code there")
    look = command("preview", "play a format K times with bots: duration, stacks, play-offs",
                   _preview, ident=False, json=True)
    chosen = look.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--preset", choices=list(PRESETS), help="a preset format")
    chosen.add_argument("--format", type=Path, metavar="FILE", help="a JSON format")
    look.add_argument("--players", type=int, required=True, metavar="N")
    look.add_argument("--runs", type=int, default=5, metavar="K", help="default: 5")
    look.add_argument("--coups-per-round", type=int, metavar="N")
    look.add_argument("--tables", type=int, metavar="N")
    look.add_argument("--starting-chips", type=int, metavar="N")
    look.add_argument("--pace", type=int, default=PACE, metavar="SECONDS",
                      help="seconds a coup's dealing takes, its betting too without a bet "
                      f"clock (default: {PACE})")


def _guarded(handler: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except DomainError as error:
        message = error.message
        if isinstance(error, NotFound) and error.rule == "unknown-tournament":
            message = f"no tournament {args.id!r}"  # as typed, not the id it stands for
        print(f"sabot: {message} [{error.rule}]", file=sys.stderr)
        return EXIT_REFUSED
    finally:
        opened: Tournaments | None = getattr(args, "tournaments", None)
        if opened is not None:
            opened.service.close()  # explicitly: its last checkpoint


def _service(args: argparse.Namespace) -> Tournaments:
    """The command's tournaments on the store, opened once and closed by `_guarded`."""
    if getattr(args, "tournaments", None) is None:
        args.tournaments = Tournaments(open_service(  # only `create` may start a store
            TableService, args.database, existing=args.action != "create"))
    tournaments: Tournaments = args.tournaments
    return tournaments


def _command_id(action: str) -> str:
    return f"cli/{action}/{uuid.uuid4()}"


def _presets(args: argparse.Namespace) -> int:
    if args.json:
        print_json({name: settings for name, settings in PRESETS.items()})
        return 0
    for name, settings in PRESETS.items():
        stages = ", ".join(f"{s.name} ({_rounds(s.rounds)})" for s in settings.plan())
        print(f"{name:<26} {settings.variant.value:<14} {stages}; "
              f"from {smallest_field(settings)} players")
    return 0


def _rounds(rounds: int | None) -> str:
    """A stage's length in words: "1 round", "3 rounds", or until one is left."""
    if not rounds:
        return "until one is left"
    return f"{rounds} round{'s' if rounds != 1 else ''}"


def _settings(args: argparse.Namespace) -> TournamentSettings:
    overrides: dict[str, Any] = {
        "coups_per_round": args.coups_per_round, "tables": args.tables,
        "starting_chips": args.starting_chips,
        **{name: getattr(args, name, None)
           for name in ("minutes_per_round", "dealing", "bet_seconds")},
        **dict(_field(pair) for pair in getattr(args, "set", []))}
    given = {k: v for k, v in overrides.items() if v is not None}
    if args.format is None:
        found = preset(args.preset or "punto-banco-heats")
    else:
        try:
            found = msgspec.json.decode(args.format.read_bytes(), type=TournamentSettings)
        except (OSError, msgspec.DecodeError) as error:
            raise SystemExit(f"sabot tournament create: {args.format}: {error}") from None
    try:
        return msgspec.convert({**msgspec.to_builtins(found), **given},
                               TournamentSettings).check()
    except msgspec.ValidationError as error:
        raise SystemExit(f"sabot tournament: {error}") from None


def _field(pair: str) -> tuple[str, Any]:
    """`FIELD=VALUE` of `--set`: a field of the format, its value in JSON or a bare word."""
    name, _, text = pair.partition("=")
    if name not in TournamentSettings.__struct_fields__:
        raise SystemExit(f"sabot tournament: no format field {name!r} (fields: "
                         f"{', '.join(TournamentSettings.__struct_fields__)})")
    try:
        return name, msgspec.json.decode(text)
    except msgspec.DecodeError:
        return name, text


def _create(args: argparse.Namespace) -> int:
    settings = _settings(args)
    name = f"tournament-{uuid.uuid4().hex[:8]}" if args.name is None else args.name  # "" refused
    service = _service(args)
    tournament_id = service.create(name, settings, seed=args.seed,
                                   command_id=_command_id("create"))
    if args.json:
        print_json(service.view(tournament_id))
    else:
        print(f"created tournament {name} ({settings.variant.value}), id {tournament_id}")
    return 0


def _list(args: argparse.Namespace) -> int:
    states = _service(args).listed(args.all)
    if args.json:
        print_json([{"id": str(tid), "name": s.name, "status": s.status.value,
                     "entrants": s.entries} for tid, s in states])
        return 0
    for tid, state in states:
        print(f"{tid}  {state.name:<24} {state.status.value:<12} {state.entries:>4} entrants")
    return 0


def _show(args: argparse.Namespace) -> int:
    view = _service(args).view(tournament_id_of(args.id))
    if args.json:
        print_json(view)
        return 0
    print(f"{view.name}  {view.status}  stage {view.stage}, round {view.round}"
          f"  ({view.players_left} of {view.entrants} left, average {view.average_stack},"
          f" pool {view.prize_pool})")
    if view.winner:
        print(f"winner: {view.winner}")
    for table in view.tables:
        print(f"  {table.name}: " + ", ".join(f"{p.player} {p.chips}" for p in table.players))
    return 0


def _register(args: argparse.Namespace) -> int:
    service, tournament_id = _service(args), tournament_id_of(args.id)
    if args.action == "register":
        service.register(tournament_id, args.player, bot=args.bot,
                         command_id=_command_id("register"))
        who = f"house bot {args.player}" if args.bot else args.player
        print(f"registered {who} in {service.state(tournament_id).name}")
    else:
        service.unregister(tournament_id, args.player, command_id=_command_id("unregister"))
        print(f"unregistered {args.player} from {service.state(tournament_id).name}")
    return 0


def _sign_in(args: argparse.Namespace) -> int:
    service = _service(args)
    codes = SignInCodes(service.service.database, TokenStore(service.service.database),
                        service.service.secret_key, pin_tries())
    url = args.url or os.environ.get("SABOT_PUBLIC_URL") or recorded(
        service.service.database, PUBLIC_URL) or DEFAULT_URL
    made = make_slips(service, codes, args.id, None if args.all else args.player,
                      url.rstrip("/"))
    if args.qr is not None:
        args.qr.mkdir(parents=True, exist_ok=True)
        for slip in made:
            (args.qr / f"{slip.player}.svg").write_text(slip.qr_svg)
    if args.json:
        print_json(made)
        return 0
    for slip in made:
        place = f"table {slip.table} seat {slip.seat}" if slip.table else "not seated"
        print(f"{slip.player:<20} PIN {slip.pin}  {place:<22} {slip.link}")
    print(f"made {len(made)} sign-in slip{'s' if len(made) != 1 else ''} for "
          f"{service.state(tournament_id_of(args.id)).name}, good until "
          f"{made[0].expires_at.isoformat(timespec='minutes') if made else '-'}")
    return 0


def _act(args: argparse.Namespace) -> int:
    service, tournament_id = _service(args), tournament_id_of(args.id)
    action = {"start": service.start, "pause": service.pause, "resume": service.resume}
    action[args.action](tournament_id, command_id=_command_id(args.action))
    view = service.view(tournament_id)
    done = {"start": "started", "pause": "paused", "resume": "resumed"}[args.action]
    drawn = (f": {view.entrants} players drawn to {len(view.tables)} tables"
             if args.action == "start" else "")
    print(f"{done} {view.name} (now {view.status}){drawn}")
    return 0


def _file(args: argparse.Namespace) -> int:
    """Cancel or archive: out of the lobby, kept in the record."""
    service, tournament_id = _service(args), tournament_id_of(args.id)
    filing, done = {"cancel": (service.cancel, "cancelled"),
                    "archive": (service.archive, "archived")}[args.action]
    filing(tournament_id, command_id=_command_id(args.action))
    print(f"{service.state(tournament_id).name}: {done}")
    return 0


def _intervene(args: argparse.Namespace) -> int:
    service, tournament_id = _service(args), tournament_id_of(args.id)
    service.intervene(tournament_id, args.kind, args.player, args.reason, delta=args.delta,
                      table=args.table, command_id=_command_id("intervene"))
    about = " ".join(part for part in (
        args.player, f"{args.delta:+d} chips" if args.delta else "",
        f"table {args.table}" if args.table else "") if part)
    print(f"recorded {args.kind}{' of ' + about if about else ''} in "
          f"{service.state(tournament_id).name}: {args.reason}")
    return 0


def _standings(args: argparse.Namespace) -> int:
    service = _service(args)
    state = service.state(tournament_id_of(args.id))
    runner = Runner(service.service, VIEWS)
    runner.catch_up("standings")
    rows = tournament_standings(service.service.database, state)
    if args.json:
        print_json(rows)
        return 0
    if args.csv:
        sys.stdout.write(as_csv(rows, STANDING_COLUMNS))
        return 0
    for row in rows:
        print(f"{row.rank:>4}  {row.player:<20}{row.chips:>10}  {row.status}")
    return 0


def _preview(args: argparse.Namespace) -> int:
    if not 2 <= args.players <= 500 or not 1 <= args.runs <= 100 or args.pace < 1:
        raise SystemExit("sabot tournament preview: --players 2 to 500, --runs 1 to 100, "
                         "--pace >= 1")
    settings = _settings(args)
    with progress(f"{args.runs} runs of {args.players} players", args.runs,
                  quiet=args.json) as bar:
        found = preview(settings, args.players, args.runs, pace=args.pace,
                        on_run=lambda _: bar.advance(bar.task_ids[0]))
    if args.json:
        print_json(found)
        return 0
    print(f"duration: {found.coups.mean} coups ({found.coups.smallest:.0f} to "
          f"{found.coups.largest:.0f}), about {found.minutes.mean} minutes at "
          f"{found.pace_seconds} s a coup's dealing and the bet clock, if any, run out at "
          f"every turn ({found.minutes_dealing.mean} minutes if everyone bets at once), "
          f"{found.rounds.mean} rounds")
    settled = ", ".join(f"{how} {count}" for how, count in sorted(found.settled.items()))
    print(f"play-offs: {found.runs_with_playoff} of {found.runs} runs needed one "
          f"({found.playoffs} play-off coups{f'; settled by: {settled}' if settled else ''})")
    print("the format's rules of sitting out and ties:")
    for rule in found.rules:
        print(f"  {rule}")
    print("stacks at each round's end (a typical run):")
    for spread in found.spreads:
        print(f"  {spread.stage:<14} round {spread.round:>2}: {spread.players:>4} players, "
              f"{spread.smallest} / {spread.median} / {spread.largest} (smallest / median / "
              "largest)")
    return 0


def _results(args: argparse.Namespace) -> int:
    results = _service(args).results(tournament_id_of(args.id))
    if args.json:
        print_json(results)
        return 0
    if args.csv:
        sys.stdout.write(as_csv(results.positions, RESULT_COLUMNS))
        return 0
    print(f"{results.name}: {results.status}"
          + (f", winner {results.winner}" if results.winner else ""))
    for row in results.positions:
        tie = "=" if row.tied > 1 else " "
        print(f"{row.position:>4}{tie} {row.player:<20}{row.prize:>10}")
    return 0



def _publish(args: argparse.Namespace) -> int:
    service, tournament_id = _service(args), tournament_id_of(args.id)
    with DisputeService(url=service.service.database_url) as disputes:
        publish_results(service, disputes, tournament_id, actor=ORGANISER,
                        command_id=_command_id("publish"))
    results = service.results(tournament_id)
    print(f"{results.name}: results published")
    return 0
