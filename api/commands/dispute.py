"""`sabot dispute`: contest a coup, and read the verdict of its replay.

    sabot dispute open TABLE COUP --reason TEXT [--by WHO] [--wait SECONDS | --here]
    sabot dispute show DISPUTE_ID [--json]

`open` records the dispute and asks a worker (`sabot worker`, same broker) to replay the coup;
`--wait` waits for the verdict, `--here` replays in this process instead (no worker needed).
TABLE is a table's name or id. `show` exits with 1 when the replay found discrepancies.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import msgspec

from api.commands import SUMMARIES
from api.commands._common import add_database
from domain.dispute.aggregate import Dispute
from domain.dispute.verdicts import Verdict
from infra.services.references import table_id_of
from infra.settings import resolve_database_url


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("dispute", help=SUMMARIES["dispute"])
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")

    opening = actions.add_parser("open", help="open a dispute on a coup and have it replayed")
    opening.add_argument("table", help="the table's name or id")
    opening.add_argument("coup", type=int, help="the coup's number at that table")
    opening.add_argument("--reason", required=True, help="what is contested")
    opening.add_argument("--by", default="@auditor", help="who contests (default: @auditor)")
    opening.add_argument("--broker", metavar="URL",
                         help="the workers' broker (default: $SABOT_BROKER_URL, else embedded)")
    how = opening.add_mutually_exclusive_group()
    how.add_argument("--wait", type=float, metavar="SECONDS",
                     help="wait up to SECONDS for the worker's verdict")
    how.add_argument("--here", action="store_true", help="replay in this process, not a worker")
    add_database(opening)
    opening.set_defaults(handler=run_open)

    showing = actions.add_parser("show", help="a dispute and its verdict")
    showing.add_argument("dispute", type=uuid.UUID, help="the dispute's id")
    showing.add_argument("--json", action="store_true", help="print JSON")
    add_database(showing)
    showing.set_defaults(handler=run_show)


def absolute_url(url: str) -> str:
    """A relative SQLite path made absolute, since a worker may run in another folder."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/") and url != prefix + ":memory:":
        return prefix + str(Path(url[len(prefix):]).resolve())
    return url


def run_open(args: argparse.Namespace) -> int:
    from infra.services.disputes import DisputeService
    from workers.disputes import request_replay

    url = absolute_url(resolve_database_url(args.database))
    with DisputeService(url=url) as service:
        dispute_id = service.open(table_id_of(args.table), args.coup, reason=args.reason,
                                  by=args.by, command_id=f"dispute:{uuid.uuid4()}")
        print(dispute_id)
        if args.here:
            return _print(service.replay(dispute_id), as_json=False)
        from workers.app import app, make_app

        request_replay(dispute_id, via=make_app(args.broker) if args.broker else app)
        if args.wait is None:
            return 0
        deadline = time.monotonic() + args.wait
        while (dispute := service.dispute(dispute_id)).verdict is Verdict.OPEN:
            if time.monotonic() > deadline:
                print(f"sabot dispute: no verdict after {args.wait:g} s (is a worker running "
                      "on this broker?)", file=sys.stderr)
                return 3
            time.sleep(0.1)
        return _print(dispute, as_json=False)


def run_show(args: argparse.Namespace) -> int:
    from infra.services.disputes import DisputeService

    with DisputeService(url=resolve_database_url(args.database)) as service:
        return _print(service.dispute(args.dispute), as_json=args.json)


def as_dict(dispute: Dispute) -> dict[str, Any]:
    return {
        "id": str(dispute.id), "table_id": str(dispute.table_id), "coup": dispute.coup,
        "reason": dispute.reason, "by": dispute.by, "verdict": str(dispute.verdict),
        "discrepancies": msgspec.to_builtins(dispute.discrepancies), "notes": dispute.notes,
        "corrections": dispute.corrections,
        "approvals": msgspec.to_builtins(dispute.approvals), "applied": dispute.applied,
    }


def _print(dispute: Dispute, *, as_json: bool) -> int:
    if as_json:
        print(json.dumps(as_dict(dispute), indent=2))
    else:
        print(f"dispute {dispute.id}: coup {dispute.coup} of table {dispute.table_id}, "
              f"by {dispute.by}: {dispute.reason}")
        print(f"verdict: {dispute.verdict}")
        for discrepancy in dispute.discrepancies:
            print(f"  - {discrepancy.describe()}")
        for note in dispute.notes:
            print(f"  ({note})")
        if dispute.corrections:
            state = "applied" if dispute.applied else "awaiting the organiser's and an " \
                "auditor's or a floor manager's approval"
            print("correction: " + ", ".join(f"{p} {d:+d}" for p, d in
                                             sorted(dispute.corrections.items()))
                  + f" ({state}; approved by "
                  + (", ".join(f"{a.by} as {a.role}" for a in dispute.approvals) or "nobody")
                  + ")")
    return 1 if dispute.verdict is Verdict.DISCREPANCIES else 0
