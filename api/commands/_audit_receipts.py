"""`sabot audit check-receipts FILE [--url URL]`: a player's receipts checked, by anyone.

Each receipt of the file (`GET /me/receipts/download`, or one receipt) is checked offline
(`infra.audit.offline_check.receipts`) against the keys the file holds (what the player was
given; `--public-key`/`--witness` name others); with `--url`, the installation is asked for a
consistency proof from each receipt's checkpoint to its latest (`GET /audit/consistency`,
checked by `infra.audit.consistency.still_holds`).

Exit codes: 0 every receipt checks (and the record still extends it); 1 one does not, each
named by its coup and table with what does not hold; 2 the file cannot be read or the
installation does not answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from infra.audit.consistency import extends, includes, latest_of
from infra.audit.offline_check.cli import public_key
from infra.audit.offline_check.receipts import (
    RECEIPT_FORMAT,
    RECEIPTS_FORMAT,
    check_receipt,
    words,
)

TIMEOUT = 30.0


def register(actions: Any) -> None:
    """Add `check-receipts` to `sabot audit`'s actions."""
    check = actions.add_parser(
        "check-receipts", help="check a player's receipts, and that the record still holds them",
        description="Check each receipt of a player's file offline (signatures, inclusion "
        "proofs, the events' bytes, the player's amounts, every card re-dealt from the "
        "revealed seed) and, with --url, that the installation's latest checkpoint still "
        "extends each receipt's (an RFC 9162 consistency proof).")
    check.add_argument("path", type=Path, metavar="FILE", help="a receipts file (or one receipt)")
    check.add_argument("--url", metavar="URL",
                       help="the installation's address, e.g. https://sabot.example")
    check.add_argument("--public-key", action="append", default=[], metavar="KEY",
                       help="the operator's public key (hex or vkey) instead of the file's "
                       "(repeatable)")
    check.add_argument("--witness", action="append", default=[], metavar="KEY",
                       help="a witness's public key (hex or vkey) instead of the file's: its "
                       "co-signature is required (repeatable)")
    check.set_defaults(handler=run_check_receipts)


def _keys(given: list[str], kept: Any, kind: int) -> list[bytes]:
    if given:
        return [public_key(text, "a key", kind) for text in given]
    return [bytes.fromhex(k["public_key"]) for k in kept or []]


def asked(url: str, receipt: dict[str, Any]) -> Any:
    """The installation's consistency proof from the receipt's checkpoint to its latest, and
    the inclusion proofs of the receipt's events there."""
    leaves = ",".join(str(e["leaf"]) for e in receipt["events"])
    address = f"{url.rstrip('/')}/audit/consistency?from={receipt['checkpoint']['size']}" \
              f"&leaves={leaves}"
    with urllib.request.urlopen(address, timeout=TIMEOUT) as response:
        return json.loads(response.read())


def run_check_receipts(args: argparse.Namespace) -> int:
    try:
        document = json.loads(args.path.read_bytes())
        single = isinstance(document, dict) and document.get("format") == RECEIPT_FORMAT
        if not single and (not isinstance(document, dict)
                           or document.get("format") != RECEIPTS_FORMAT):
            raise ValueError(f"neither a {RECEIPTS_FORMAT} file nor a {RECEIPT_FORMAT}")
        receipts = [document] if single else document["receipts"]
        keys = {} if single else document.get("keys") or {}
        trusted = _keys(args.public_key, keys.get("operator"), 0x01)
        witnesses = _keys(args.witness, keys.get("witnesses"), 0x04)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        print(f"sabot: {args.path}: {error}", file=sys.stderr)
        return 2
    failed = 0
    rewritten: dict[int, str] = {}
    for receipt in receipts:
        label = (f"coup {receipt.get('coup')} of table "
                 f"{(receipt.get('table') or {}).get('name')}") if isinstance(receipt, dict) \
            else "a receipt"
        report = check_receipt(receipt, trusted, witnesses)
        problems = list(report.failures)
        if report.ok and args.url:
            held = receipt["checkpoint"]
            try:
                answer = asked(args.url, receipt)
            except (OSError, ValueError, urllib.error.URLError) as error:
                print(f"sabot: {args.url} does not answer: {error}", file=sys.stderr)
                return 2
            try:
                latest = latest_of(answer, trusted or [bytes.fromhex(held["public_key"])])
            except ValueError as error:
                problems.append(str(error))
            else:
                missing = includes(receipt["events"], answer, latest)
                if missing is not None:
                    problems.append(f"your receipt no longer matches the record: {missing} "
                                    f"(it was in checkpoint #{held['size']})")
                if (gap := extends(held, answer, latest)) is not None:
                    rewritten[held["size"]] = gap
        if problems:
            failed += 1
            print(f"FAILED: {label}: " + "; ".join(problems))
        else:
            print(f"ok:     {words(receipt, report)}")
    for gap in rewritten.values():
        print(f"FAILED: the record: {gap}")
    print(f"{len(receipts) - failed} of {len(receipts)} receipts check"
          + (" and the record still holds them" if args.url and not failed and not rewritten
             else ""))
    return 1 if failed or rewritten else 0
