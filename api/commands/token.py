"""`sabot token`: API bearer tokens, printed once when issued and stored hashed.

    sabot token create --role croupier --table t1 [--expires-in 30d]
    sabot token list [--json]                 # id, role, player, tables, expiry, revocation
    sabot token revoke TOKEN|ID               # the token itself, or its listed id

A croupier's tables must be open (an unknown table is refused, exit 1).
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import timedelta

import msgspec

from api.commands import SUMMARIES
from api.commands._common import add_database
from api.tokens import DEFAULT_LIFETIME, Grant, Role, TokenStore
from domain.errors import NotFound
from infra.services.application import open_service
from infra.services.references import table_id_of
from infra.services.tables import TableService

_DURATION = re.compile(r"^(\d{1,7})([smhd])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("token", help=SUMMARIES["token"])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="issue a token (printed once, stored hashed)")
    create.add_argument("--role", required=True,
                        choices=[r.value for r in Role if r is not Role.ANONYMOUS])
    create.add_argument("--player", help="the player a player token speaks for")
    create.add_argument("--table", action="append", default=[], metavar="TABLE",
                        help="a table a croupier serves (its name or id; repeat for more)")
    create.add_argument("--expires-in", type=duration, default=DEFAULT_LIFETIME,
                        metavar="DURATION", help="e.g. 12h, 30d (default: 90d)")
    add_database(create)
    create.set_defaults(handler=run_create)
    listing = actions.add_parser("list", help="the tokens issued (never the tokens themselves)")
    listing.add_argument("--json", action="store_true", help="print JSON")
    add_database(listing)
    listing.set_defaults(handler=run_list)
    revoke = actions.add_parser("revoke", help="revoke a token, given itself or its id")
    revoke.add_argument("token", metavar="TOKEN|ID")
    add_database(revoke)
    revoke.set_defaults(handler=run_revoke)


def duration(text: str) -> timedelta:
    """`30d`, `12h`, `15m`, `90s` (argparse's `type`)."""
    match = _DURATION.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 12h or 30d")
    return timedelta(**{_UNIT[match.group(2)]: int(match.group(1))})


def run_create(args: argparse.Namespace) -> int:
    grant = Grant(role=Role(args.role), player=args.player,
                  tables=frozenset(table_id_of(t) for t in args.table))
    try:
        grant.check()
    except ValueError as error:
        print(f"sabot token: {error}", file=sys.stderr)
        return 2
    service = open_service(TableService, args.database, existing=True)
    try:
        for name, table_id in zip(args.table, (table_id_of(t) for t in args.table), strict=True):
            if not service.events_of(table_id, lte=1):
                raise NotFound(f"no table {name!r}: open it before serving it",
                               rule="unknown-table")
        try:
            print(TokenStore(service.database).issue(grant, args.expires_in))
        except ValueError as error:
            print(f"sabot token: {error}", file=sys.stderr)
            return 2
    finally:
        service.close()
    return 0


def run_list(args: argparse.Namespace) -> int:
    service = open_service(TableService, args.database, existing=True)
    try:
        issued = TokenStore(service.database).issued()
    finally:
        service.close()
    if args.json:
        sys.stdout.write(msgspec.json.encode(issued).decode() + "\n")
        return 0
    print(f"{'id':<14}{'role':<11}{'player':<14}{'expires':<22}{'revoked':<22}tables")
    for token in issued:
        revoked = token.revoked_at.isoformat(timespec="seconds") if token.revoked_at else "-"
        print(f"{token.id:<14}{token.grant.role.value:<11}{token.grant.player or '-':<14}"
              f"{token.expires_at.isoformat(timespec='seconds'):<22}{revoked:<22}"
              f"{','.join(sorted(str(t) for t in token.grant.tables)) or '-'}")
    return 0


def run_revoke(args: argparse.Namespace) -> int:
    service = open_service(TableService, args.database, existing=True)
    try:
        revoked = TokenStore(service.database).revoke(args.token)
    except KeyError as error:
        print(f"sabot token: {error.args[0]}", file=sys.stderr)
        return 1
    finally:
        service.close()
    print(f"revoked {revoked.id} ({revoked.grant.role.value})")
    return 0
