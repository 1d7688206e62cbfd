"""`sabot db`: the store's schema version (`status`), and upgrading it (`upgrade`).

    sabot db status [--json]     # the store's version and this Sabot's, the steps pending
    sabot db upgrade [--json]    # apply them (every process that writes does it on start)

A store upgraded by a newer Sabot is refused in one line, exit 2 (`infra.store.migrations`).
"""

from __future__ import annotations

import argparse

from api.commands import SUMMARIES
from api.commands._common import add_database
from api.commands._views import print_json


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("db", help=SUMMARIES["db"])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, handler, summary in (
            ("status", run_status, "the store's schema version, this Sabot's, what is pending"),
            ("upgrade", run_upgrade, "apply the pending migrations (under a lock)")):
        action = actions.add_parser(name, help=summary)
        action.add_argument("--json", action="store_true", help="print JSON")
        add_database(action)
        action.set_defaults(handler=handler)


def run_status(args: argparse.Namespace) -> int:
    from infra.settings import resolve_database_url
    from infra.store import migrations
    from infra.store.opening import open_store

    with open_store(resolve_database_url(args.database), create=False) as store:
        status = migrations.status(store.database)
    if args.json:
        print_json(status)
        return 0
    unversioned = " (unversioned: the next upgrade records it)" if status.unversioned else ""
    print(f"store schema {status.version}{unversioned}; this Sabot's: {status.latest}")
    for step in status.pending:
        print(f"pending {step.version}: {step.title}")
    return 0


def run_upgrade(args: argparse.Namespace) -> int:
    from infra.settings import resolve_database_url
    from infra.store.opening import open_store

    with open_store(resolve_database_url(args.database)) as store:  # a writer upgrades
        upgrade = store.recorder.schema_upgrade
    assert upgrade is not None
    if args.json:
        print_json(upgrade)
    elif upgrade.applied:
        steps = ", ".join(str(version) for version in upgrade.applied)
        print(f"store schema upgraded from {upgrade.before} to {upgrade.after} "
              f"(applied {steps})")
    else:
        print(f"store schema {upgrade.after} is up to date")
    return 0
