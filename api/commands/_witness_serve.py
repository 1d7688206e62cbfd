"""`sabot audit witness serve`: a witness as a small HTTP service of its own, on another port
or machine, speaking C2SP tlog-witness's `add-checkpoint` (`api.witness_app`,
`infra.store.tlog_witness`).

    sabot audit witness serve --key W --log-key OPERATOR [--state F] [--port P] [--host H]
                              [--origin O] [--name N]

It witnesses one log: the operator's key (`--log-key`, hex or a signed-note vkey, whose name
is then the origin) and origin (default `sabot.<key id>/log`, the notes' own default). It
prints its verifier key (to put in the writers' `SABOT_WITNESSES`) and its address, then
serves until stopped. Exit 2 when a key or the port is not usable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from api.commands._common import port
from api.commands.serve import listen
from infra.store.checkpoint_notes import witness_name
from infra.store.notes import CosignatureVerifier, Ed25519Verifier, MalformedNote, parse_vkey
from infra.store.signing import SigningKeyError, key_id, load_key
from infra.store.tlog_witness import LogWitness
from infra.store.witness import state_path


def register(witness: Any) -> None:
    actions = witness.add_subparsers(dest="witness_action", metavar="serve")
    serve = actions.add_parser(
        "serve", help="serve this witness over HTTP (C2SP tlog-witness add-checkpoint)",
        description="Co-sign the checkpoints a log's writers push (POST /add-checkpoint) "
        "when they extend what this witness co-signed, as its state file remembers it.")
    serve.add_argument("--key", metavar="PATH", type=Path, required=True,
                       help="the witness's private key (`sabot keys create --out PATH`)")
    serve.add_argument("--state", metavar="FILE", type=Path,
                       help="what this witness co-signed (default: beside its key)")
    serve.add_argument("--log-key", metavar="KEY", required=True,
                       help="the operator's public key: hex, or a signed-note verifier key")
    serve.add_argument("--origin", help="the log's origin (default: sabot.<key id>/log, or "
                                        "the verifier key's name)")
    serve.add_argument("--name", help="this witness's name (default: sabot-witness.<key id>)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=port, default=7380, help="port to listen on")
    serve.set_defaults(handler=run)


def log_verifier(text: str, origin: str | None) -> Ed25519Verifier:
    """The log's key from `--log-key` and `--origin` (`ValueError` if it is not a key)."""
    if "+" in text:
        key = parse_vkey(text)
        if not isinstance(key, Ed25519Verifier):
            raise ValueError("--log-key: not a log's key (type 0x01)")
        return key if origin is None else Ed25519Verifier(origin, key.public_key)
    public = bytes.fromhex(text)
    if len(public) != 32:
        raise ValueError("--log-key is a 32-byte Ed25519 public key in hex, or a vkey")
    return Ed25519Verifier(origin or f"sabot.{key_id(public)}/log", public)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from api.witness_app import create_witness_app

    try:
        signer = load_key(args.key)
        log = log_verifier(args.log_key, args.origin)
    except (SigningKeyError, MalformedNote, ValueError) as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    name = args.name or witness_name(signer)
    witness = LogWitness(signer, log, args.state or state_path(args.key), name)
    listening = listen(args.host, args.port)
    vkey = CosignatureVerifier(name, signer.public_key).vkey()
    print(f"sabot audit witness serve: witness {vkey} of log {log.name} on "
          f"http://{args.host}:{args.port}", flush=True)
    config = uvicorn.Config(create_witness_app(witness), log_level="warning", log_config=None,
                            access_log=False, proxy_headers=False)
    uvicorn.Server(config).run(sockets=[listening])
    return 0
