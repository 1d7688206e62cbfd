"""The command line: `main(argv)` checks the dossier or export folder it is given and prints
what was checked; exit 0 when everything checks, 1 when anything does not, 2 when the file
cannot be read."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .checks import Unreadable, check_path
from .note import vkey_public
from .record import hex_bytes


def public_key(text: str, what: str, kind: int) -> bytes:
    """A public key given in hex, or as a verifier key (vkey) of signature type `kind`."""
    return vkey_public(text, kind) if "+" in text else hex_bytes(text, what, 32)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sabot-check.pyz", description="Check a Sabot coup dossier or export offline.")
    parser.add_argument("path", type=Path, help="a dossier (JSON file) or an export directory")
    parser.add_argument("--public-key", action="append", default=[], metavar="KEY",
                        help="the operator's published public key, in hex or as its note "
                        "verifier key (vkey, type 0x01) (repeatable)")
    parser.add_argument("--witness", action="append", default=[], metavar="KEY",
                        help="a witness's public key, in hex or as its vkey (type 0x04), whose "
                        "co-signature of the checkpoint (C2SP tlog-cosignature) is required "
                        "(repeatable)")
    args = parser.parse_args(argv)
    try:
        trusted = [public_key(k, "--public-key", 0x01) for k in args.public_key]
        witnesses = [public_key(k, "--witness", 0x04) for k in args.witness]
        report = check_path(args.path, trusted, witnesses)
    except (Unreadable, ValueError) as error:
        print(f"check: {error}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0 if report.ok else 1
