"""`sabot audit dossier | check-dossier | export | checker`: proofs handed to players and
regulators, and the checker they run.

    sabot audit dossier TABLE COUP --out FILE     one coup's dossier (`infra.audit.dossier`)
    sabot audit export [--tournament T | --table T] [--from DATE --to DATE] --out DIR
                                                  a regulator's bundle (`infra.audit.export`)
    sabot audit check-dossier PATH [--public-key KEY] [--witness KEY]
                                                  check a dossier file or an export directory
                                                  offline (`infra.audit.offline_check`, the same
                                                  code as the standalone checker)
    sabot audit checker --out FILE                the standalone checker as one file,
                                                  `sabot-check.pyz` (`infra.audit.checker_app`)

Exit codes: 0 written / the file checks; 1 the file does not check, or no such coup;
2 the store or the file cannot be read, or the checker cannot be written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from api.commands._common import add_database
from domain.errors import DomainError
from domain.tournament.aggregate import Tournament
from infra.audit import offline_check
from infra.audit.checker_app import NAME, build_checker
from infra.audit.dossier import dossier
from infra.audit.export import export
from infra.errors import StoreError
from infra.services.references import table_id_of
from infra.settings import resolve_database_url
from infra.store.opening import Store, open_store
from projections.audit_port import PROJECTIONS


def register(actions: Any) -> None:
    """Add the proof commands to `sabot audit`'s actions."""
    write = actions.add_parser("dossier", help="write a coup's self-contained dossier",
                               description="Write the coup's events, its shoe's commitment, "
                               "contributions and revealed seed, each event's inclusion proof "
                               "in a signed checkpoint and the public key, as one JSON file.")
    write.add_argument("table", metavar="TABLE", help="the table's name or UUID")
    write.add_argument("coup", type=int, help="the coup's number at that table")
    write.add_argument("--out", type=Path, required=True, metavar="FILE",
                       help="the dossier file to write")
    add_database(write)
    write.set_defaults(handler=run_dossier)

    bundle = actions.add_parser("export", help="write a regulator's export bundle",
                                description="Write the events (with their inclusion proofs), "
                                "the game recall of every coup, the significant events, the "
                                "checkpoints and keys, and a signed manifest, to a folder "
                                "that `check-dossier` checks offline.")
    scope = bundle.add_mutually_exclusive_group()
    scope.add_argument("--tournament", metavar="NAME", help="one tournament and its tables")
    scope.add_argument("--table", metavar="TABLE", help="one table (name or UUID)")
    bundle.add_argument("--from", dest="start", type=moment, metavar="DATE",
                        help="from this date or time (UTC, ISO 8601)")
    bundle.add_argument("--to", dest="end", type=lambda text: moment(text, end=True),
                        metavar="DATE", help="up to this date (whole day) or time (UTC)")
    bundle.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the folder to write")
    add_database(bundle)
    bundle.set_defaults(handler=run_export)

    check = actions.add_parser("check-dossier", help="check a dossier or an export offline",
                               description="Check a dossier file or an export directory "
                               "without the store: signatures, inclusion proofs, the events' "
                               "bytes, and every card re-dealt from the revealed seed.")
    check.add_argument("path", type=Path, metavar="PATH", help="a dossier or an export folder")
    check.add_argument("--public-key", action="append", default=[], metavar="KEY",
                       help="the operator's published public key (hex, or its vkey) "
                       "(repeatable)")
    check.add_argument("--witness", action="append", default=[], metavar="KEY",
                       help="a witness's public key (hex, or its vkey) whose co-signature of "
                       "the checkpoint is required (repeatable)")
    check.set_defaults(handler=run_check)

    app = actions.add_parser("checker", help=f"write the standalone checker ({NAME})",
                             description=f"Write the offline checker as one file, {NAME}: "
                             "it needs only Python and `cryptography`; run it as `python3 "
                             f"{NAME} PATH [--public-key HEX]` on a dossier or an export.")
    app.add_argument("--out", type=Path, required=True, metavar="FILE",
                     help=f"the file to write (a folder: {NAME} in it)")
    app.set_defaults(handler=run_checker)


def on_store(args: argparse.Namespace, work: Callable[[Store], str]) -> int:
    """Run `work` on the existing store and print the line it returns (exit 0); a refusal
    is one line: exit 1 for a domain refusal (no such coup), 2 if the store cannot be read."""
    try:
        with open_store(resolve_database_url(args.database), create=False) as store:
            line = work(store)
    except StoreError as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    except DomainError as error:
        print(f"sabot: {error.message}", file=sys.stderr)
        return 1
    print(line)
    return 0


def run_dossier(args: argparse.Namespace) -> int:
    def write(store: Store) -> str:
        table_id = table_id_of(args.table)
        document = dossier(store.holding(table_id), table_id, args.coup)
        write_json(args.out, document)
        return (f"dossier of coup {args.coup} at {document['table']['name']}: "
                f"{len(document['events'])} events, checkpoint "
                f"{document['checkpoint']['size']} -> {args.out}")

    return on_store(args, write)


def moment(text: str, *, end: bool = False) -> datetime:
    """A --from/--to value: a date (for --to, the whole day) or a time, UTC unless given."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 date or time") from None
    if end and len(text) == len("2026-01-31"):
        parsed += timedelta(days=1)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def run_export(args: argparse.Namespace) -> int:
    def write(store: Store) -> str:
        manifest = export(scoped(store, args), args.out, recall=PROJECTIONS,
                          tournament=args.tournament, table=args.table,
                          start=args.start, end=args.end,
                          progress=lambda text: print(text, file=sys.stderr))
        counts = ", ".join(f"{entry['lines']} {name}" for name, entry in manifest.files.items())
        return f"export: {counts}; checkpoint {manifest.checkpoint['size']} -> {args.out}"

    return on_store(args, write)


def scoped(store: Store, args: argparse.Namespace) -> Store:
    """The store an export reads: the home of its tournament or table when tournaments are
    spread over databases (each home has its own log and checkpoints)."""
    if args.tournament:
        return store.holding(Tournament.create_id(args.tournament))
    if args.table:
        return store.holding(table_id_of(args.table))
    if store.homes():
        raise StoreError("tournaments are spread over databases (SABOT_PARTITION_DATABASES): "
                         "export one --tournament or --table at a time")
    return store


def write_json(path: Path, document: Any) -> None:
    """Write `document` whole or not at all (a draft renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.draft")
    draft.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    draft.replace(path)


def run_check(args: argparse.Namespace) -> int:
    return offline_check.main([str(args.path), *(f"--public-key={k}" for k in args.public_key),
                               *(f"--witness={k}" for k in args.witness)])


def run_checker(args: argparse.Namespace) -> int:
    try:
        written = build_checker(args.out)
    except OSError as error:
        print(f"sabot: cannot write the checker: {error}", file=sys.stderr)
        return 2
    print(f"checker -> {written}")
    return 0
