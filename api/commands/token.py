"""`sabot token create`: issue an API bearer token; it is printed once and stored hashed."""

from __future__ import annotations

import argparse
import sys

from api.commands._common import add_database
from api.tokens import Grant, Role, TokenStore
from infra.references import table_id_of
from infra.service import TableService
from infra.store import open_service


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("token", help="API bearer tokens")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser("create", help="issue a token (printed once, stored hashed)")
    create.add_argument("--role", required=True,
                        choices=[r.value for r in Role if r is not Role.ANONYMOUS])
    create.add_argument("--player", help="the player a player token speaks for")
    create.add_argument("--table", action="append", default=[], metavar="TABLE",
                        help="a table a croupier serves (its name or id; repeat for more)")
    add_database(create)
    create.set_defaults(handler=run_create)


def run_create(args: argparse.Namespace) -> int:
    grant = Grant(role=Role(args.role), player=args.player,
                  tables=frozenset(table_id_of(t) for t in args.table))
    try:
        grant.check()
    except ValueError as error:
        print(f"sabot token: {error}", file=sys.stderr)
        return 2
    service = open_service(TableService, args.database)
    try:
        print(TokenStore(service.database).issue(grant))
    finally:
        service.close()
    return 0
