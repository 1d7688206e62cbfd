"""`sabot keys create [--out PATH]`: make an Ed25519 signing key (or a witness's key).

The key file is written with mode 0600 and never replaced. Without `--out` it is the key of
the store `--database` names (`infra.store.signing`: `$SABOT_SIGNING_KEY`, else beside a SQLite
store, else `.sabot/signing.key`). It prints the key's id and public key, which verifiers
and witnesses pin (`sabot audit verify --public-key HEX`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from api.commands import SUMMARIES
from api.commands._common import add_database
from infra.settings import resolve_database_url
from infra.store.signing import create_key, key_path
from infra.store.urls import store_env


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("keys", help=SUMMARIES["keys"])
    actions = parser.add_subparsers(dest="keys_action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create", help="write a new Ed25519 private key (mode 0600; never overwrites)",
        description="Write a new Ed25519 private key. Set SABOT_SIGNING_KEY to its path for "
        "the store, or give it to `sabot audit witness --key` to co-sign checkpoints.")
    create.add_argument("--out", metavar="PATH", type=Path,
                        help="where to write it (default: the store's key file)")
    add_database(create)
    create.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    path = args.out or key_path({**store_env(resolve_database_url(args.database)),
                                 "SABOT_SIGNING_KEY": os.environ.get("SABOT_SIGNING_KEY", "")})
    if path is None:
        print("sabot: an in-memory store has no key file: give --out PATH", file=sys.stderr)
        return 2
    signer = create_key(path)
    print(f"key:        {path}")
    print(f"key id:     {signer.key_id}")
    print(f"public key: {signer.public_key.hex()}")
    return 0
