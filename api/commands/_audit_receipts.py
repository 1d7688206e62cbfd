"""`sabot audit check-receipts FILE [--url URL]`: a player's receipts checked, by anyone.

Each receipt of the file (`GET /me/receipts/download`, or one receipt) is checked offline
(`infra.audit.offline_check.receipts`) against the operator's key the file holds (what the
player was given; `--public-key` names another), each witness listed having co-signed (and
each `--witness` given); with `--url`, the installation is asked for a
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from infra.audit.consistency import MAX_LEAVES, NotTheRecord, extends, includes, latest_of
from infra.audit.offline_check.cli import public_key
from infra.audit.offline_check.receipts import (
    RECEIPT_FORMAT,
    RECEIPTS_FORMAT,
    check_receipt,
    words,
)
from infra.store.checkpoints import Checkpoint

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
                       help="a witness's public key (hex or vkey) whose co-signature of each "
                       "receipt's checkpoint is required (repeatable)")
    check.set_defaults(handler=run_check_receipts)


def _operator(given: list[str], kept: Any) -> list[bytes]:
    """The operator's keys: those given (hex or vkey), else the file's."""
    if given:
        return [public_key(text, "--public-key", 0x01) for text in given]
    return [bytes.fromhex(k["public_key"]) for k in kept or []]


def asked(url: str, held: dict[str, Any], leaves: list[int],
          trusted: Sequence[bytes]) -> tuple[Any, dict[int, tuple[Checkpoint, Sequence[str]]]]:
    """The installation's answer from checkpoint `held` to its latest (the last asked), and
    each of `leaves` with the latest checkpoint and its inclusion proof there: at most
    `MAX_LEAVES` leaves a request, each answer's checkpoint signed by a `trusted` key
    (`NotTheRecord` if not)."""
    proved: dict[int, tuple[Checkpoint, Sequence[str]]] = {}
    answer: Any = None
    for at in range(0, len(leaves), MAX_LEAVES):
        chunk = leaves[at:at + MAX_LEAVES]
        address = (f"{url.rstrip('/')}/audit/consistency?from={held['size']}"
                   f"&leaves={','.join(map(str, chunk))}")
        with urllib.request.urlopen(address, timeout=TIMEOUT) as response:
            answer = json.loads(response.read())
        latest = latest_of(answer, trusted)
        proved.update(zip(chunk, ((latest, proof) for proof in answer["inclusions"]),
                          strict=True))
    return answer, proved


def run_check_receipts(args: argparse.Namespace) -> int:
    try:
        document = json.loads(args.path.read_bytes())
        single = isinstance(document, dict) and document.get("format") == RECEIPT_FORMAT
        if not single and (not isinstance(document, dict)
                           or document.get("format") != RECEIPTS_FORMAT):
            raise ValueError(f"neither a {RECEIPTS_FORMAT} file nor a {RECEIPT_FORMAT}")
        receipts = [document] if single else document["receipts"]
        keys = {} if single else document.get("keys") or {}
        trusted = _operator(args.public_key, keys.get("operator"))
        witnesses = [public_key(text, "--witness", 0x04) for text in args.witness]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        print(f"sabot: {args.path}: {error}", file=sys.stderr)
        return 2
    reports = [check_receipt(receipt, trusted, witnesses) for receipt in receipts]
    problems: list[list[str]] = [list(report.failures) for report in reports]
    rewritten: list[str] = []
    if args.url:
        try:
            rewritten = watch(args.url, [(r, p) for r, report, p in
                                         zip(receipts, reports, problems, strict=True)
                                         if report.ok], trusted)
        except NotTheRecord as error:
            rewritten = [str(error)]
        except (OSError, ValueError, urllib.error.URLError) as error:
            print(f"sabot: {args.url} does not answer as the record: {error}", file=sys.stderr)
            return 2
    failed = 0
    for receipt, report, found in zip(receipts, reports, problems, strict=True):
        if found:
            failed += 1
            print(f"FAILED: {label(receipt)}: " + "; ".join(found))
        else:
            print(f"ok:     {words(receipt, report)}")
    for gap in rewritten:
        print(f"FAILED: the record: {gap}")
    print(f"{len(receipts) - failed} of {len(receipts)} receipts check"
          + (" and the record still holds them" if args.url and not failed and not rewritten
             else ""))
    return 1 if failed or rewritten else 0


def label(receipt: Any) -> str:
    if not isinstance(receipt, dict):
        return "a receipt"
    return f"coup {receipt.get('coup')} of table {(receipt.get('table') or {}).get('name')}"


def watch(url: str, checked: list[tuple[dict[str, Any], list[str]]],
          trusted: Sequence[bytes]) -> list[str]:
    """Ask the record about each receipt checked (one request a checkpoint held): a receipt
    whose own events it no longer holds gets its problem added; what the record's latest
    checkpoint does not extend is returned."""
    held: dict[tuple[int, str], list[tuple[dict[str, Any], list[str]]]] = {}
    for receipt, found in checked:
        held.setdefault((receipt["checkpoint"]["size"], receipt["checkpoint"]["root"]),
                        []).append((receipt, found))
    gaps = []
    for group in held.values():
        checkpoint = group[0][0]["checkpoint"]
        leaves = sorted({e["leaf"] for receipt, _ in group for e in receipt["events"]})
        answer, proved = asked(url, checkpoint, leaves,
                               trusted or [bytes.fromhex(checkpoint["public_key"])])
        for receipt, found in group:
            missing = includes(receipt["events"], proved)
            if missing is not None:
                found.append(f"your receipt no longer matches the record: {missing} (it was "
                             f"in checkpoint #{checkpoint['size']})")
        gap = extends(checkpoint, answer, latest_of(answer, trusted or [
            bytes.fromhex(checkpoint["public_key"])]))
        if gap is not None:
            gaps.append(gap)
    return gaps
