"""The command line: `main(argv)` checks the dossier or export folder it is given and prints
what was checked; exit 0 when everything checks, 1 when anything does not, 2 when the file
cannot be read."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .checks import Unreadable, check_path
from .record import hex_bytes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sabot-check.pyz", description="Check a Sabot coup dossier or export offline.")
    parser.add_argument("path", type=Path, help="a dossier (JSON file) or an export directory")
    parser.add_argument("--public-key", action="append", default=[], metavar="HEX",
                        help="the operator's published public key (repeatable)")
    args = parser.parse_args(argv)
    try:
        trusted = [hex_bytes(k, "--public-key", 32) for k in args.public_key]
        report = check_path(args.path, trusted)
    except (Unreadable, ValueError) as error:
        print(f"check: {error}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0 if report.ok else 1
