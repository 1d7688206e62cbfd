"""`sabot audit hand-over --new-key PATH`: the operator hands the log over to a new signing
key, as a signed act recorded in the checkpoint file (`infra.store.hand_overs`).

Holding the store's key (`SABOT_SIGNING_KEY`, or the default beside the store), it first
checkpoints the store (the fold refuses a store altered since written, as `sabot audit
checkpoint` does), then appends the hand-over: the old key's signature over the new public
key, the tree's size and root at that checkpoint, and the time. From then on the writers,
`sabot audit verify` and the witness, which trust the old key, trust the new one too.

Exit codes: 0 recorded; 1 the store's checkpoint was refused (the store or the file was
altered); 2 a key or the store cannot be read, or the new key is the old one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from api.commands._common import add_database
from infra.errors import ChainError, StoreError
from infra.settings import resolve_database_url
from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import append_line, checkpoint_path, last_checkpoint
from infra.store.hand_overs import hand_over
from infra.store.opening import open_store
from infra.store.signing import load_key


def register(actions: Any) -> None:
    """Add `hand-over` to `sabot audit`'s actions."""
    parser = actions.add_parser(
        "hand-over", help="hand the log over to a new signing key (signed by the current one)",
        description="Checkpoint the store with its current signing key, then record in the "
        "checkpoint file that key's signature over the new key's arrival: writers, verify and "
        "witnesses that trust the current key follow it and trust the new key's checkpoints "
        "and signatures. Then give the writers the new key (SABOT_SIGNING_KEY) and keep the "
        "old public key in their SABOT_TRUSTED_KEYS.")
    parser.add_argument("--new-key", metavar="PATH", type=Path, required=True,
                        help="the new private key (`sabot keys create --out PATH`); only its "
                             "public half is recorded")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    url = resolve_database_url(args.database)
    try:
        new = load_key(args.new_key).public_key
        with open_store(url, create=False) as store:
            path = checkpoint_path(store.database)
            if path is None:
                raise StoreError("an in-memory store has no checkpoint file to record it in")
            old = store.recorder.signer()
            if new == old.public_key:
                raise StoreError(f"{args.new_key} is the store's current key ({old.key_id})")
            try:
                write_checkpoint(store)
            except ChainError as error:
                print(f"sabot: no hand-over recorded: {error}", file=sys.stderr)
                return 1
            latest = last_checkpoint(path)
            assert latest is not None  # just written, or already covering the store
            line = hand_over(old, new, latest.size, latest.root)
            append_line(path, line)
    except StoreError as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    print(f"hand-over: key {line.key} -> key {line.new_key} ({line.new_public_key}) at "
          f"checkpoint {latest.fingerprint()} -> {path}")
    print(f"next: the writers sign with {args.new_key} (SABOT_SIGNING_KEY) and keep "
          f"{line.public_key} in SABOT_TRUSTED_KEYS")
    return 0
