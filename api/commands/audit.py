"""`sabot audit verify`: check that no stored event was altered, removed, added or moved.

Exit codes: 0 the chain is intact; 1 it is broken (the first broken event is named);
2 the store cannot be read (bad URL, no database).

With an intact chain it also re-deals every revealed shoe (`infra.shoe_audit`): a card
that is not the one the shoe held fails the audit (exit 1); tailles whose seed is not
revealed yet are listed as pending, which is not a failure. With `--snapshots` it also
rebuilds every snapshotted aggregate from its events and compares (`infra.audit_snapshots`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from infra.audit import AuditCheck, AuditReport, parse_anchor, verify
from infra.audit_snapshots import snapshots_match_events
from infra.errors import StoreError
from infra.settings import redact_url, resolve_database_url
from infra.shoe_audit import ShoeAudit


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("audit", help="check the integrity of the event store")
    actions = parser.add_subparsers(dest="audit_action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "verify",
        help="recompute the hash chain of every stored event",
        description="Recompute the per-stream and global hash chains from the stored events "
        "and compare them with the recorded chain. Exit 0 when intact, 1 when broken.",
    )
    check.add_argument("--database", metavar="URL", help="default: $SABOT_DATABASE_URL")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.add_argument(
        "--anchor",
        action="append",
        default=[],
        metavar="ID:DIGEST",
        help="a global digest published earlier (repeatable): the chain must still match it",
    )
    check.add_argument(
        "--snapshots",
        action="store_true",
        help="also rebuild every snapshotted aggregate from its events and compare",
    )
    check.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    url = resolve_database_url(args.database)
    try:
        anchors = dict(parse_anchor(text) for text in args.anchor)
        shoes = ShoeAudit()
        checks: list[AuditCheck] = [shoes, *([snapshots_match_events] if args.snapshots else [])]
        report = verify(url, anchors=anchors, extra_checks=checks)
    except (StoreError, ValueError) as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    if args.json:
        body = {**msgspec.to_builtins(report), "shoes": msgspec.to_builtins(shoes.result)}
        sys.stdout.write(msgspec.json.encode(body).decode() + "\n")
    else:
        lines = describe(report, redact_url(url)).splitlines()
        if report.first_break is None:
            lines[-1:-1] = shoes.summary()
        print("\n".join(lines))
    return 0 if report.ok else 1


def describe(report: AuditReport, url: str) -> str:
    lines = [f"store:   {url}"]
    lines.append(f"events:  {report.events} verified in {report.seconds:.2f}s")
    lines.append(f"streams: {report.streams}")
    if report.head_notification_id is not None:
        label = "head:   " if report.first_break is None else "last good:"
        lines.append(f"{label} {report.head_notification_id}:{report.head_digest}")
    if report.first_break is not None:
        broken = report.first_break
        lines.append(f"BROKEN:  {broken.problem} at {broken.where()}")
        lines.append(f"         {broken.detail}")
    for finding in report.findings:
        lines.append(f"FAILED:  [{finding.check}] {finding.problem} at {finding.where()}")
        lines.append(f"         {finding.detail}")
    lines.append("intact" if report.ok else "the store is NOT intact")
    return "\n".join(lines)
