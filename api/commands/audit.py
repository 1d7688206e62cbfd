"""`sabot audit verify | checkpoint | status | witness`: check the record, sign its tree head,
say how every writer's checkpoints fare, co-sign it.

`verify` exit codes: 0 the record is intact and anchored; 1 something differs (each
discrepancy is named: stream, version, notification, what differs); 2 the store cannot be read
or an option is wrong; 3 (`UNANCHORED`) intact, but events are covered by no checkpoint, or the
stored tree says more was folded than the checkpoint file shows, or no key outside the database
vouches for the signatures (`--strict`: 1 instead). It checks, by default: every link of the
hash chain, the signatures (each partition head's, and each transaction's after the latest
checkpoint a witness of `--witness`/`SABOT_WITNESSES` co-signed; `--all-signatures`: every
one), the keys the store records against the trusted ones (and those they handed over to), the
stored Merkle tree, the tree against every checkpoint of the checkpoint file and their
consistency, then re-deals every revealed shoe, opens every vault seal, replays every
snapshotted aggregate, checks the command log against the events and rebuilds every projection
in memory (`infra.audit.checks`).
`--since SIZE` starts from the checkpoint of that size (incremental, with a consistency proof
to the store's tree). `--witnesses N`: exit 4 (`UNWITNESSED`) when the record is intact but
fewer than N distinct witnesses (those of `--witness VKEY`, else of `SABOT_WITNESSES`) validly
co-signed the latest checkpoint, named in the line it prints.

`checkpoint` signs and appends the store's tree head now (e.g. at a round's end); exit 1 when
the fold refuses (the store was altered since written).
`status` prints each store's anchoring as every writing process reported it
(`infra.store.anchorings`); exit 1 when one is failing.
`witness --key PATH [--state FILE]` co-signs the latest checkpoint of the file after
checking, against its own state (default `PATH.state`) and the store's events, that it extends
the last one this witness co-signed (`infra.store.witness`); exit 1 when it refuses.
`prove NOTIFICATION` prints an event's inclusion proof in the latest checkpoint.
`hand-over --new-key PATH` hands the log over to a new signing key (`_audit_hand_over`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import msgspec

from api.commands import (
    SUMMARIES,
    _audit_hand_over,
    _audit_proofs,
    _audit_receipts,
    _witness_serve,
)
from api.commands._common import add_database
from infra.audit.checks import complete_checks
from infra.audit.shoes import ShoeAudit
from infra.audit.verify import AuditCheck, AuditReport, parse_anchor, verify
from infra.errors import ChainError, SettingsError, StoreError
from infra.settings import redact_url, resolve_database_url
from infra.store.checkpointer import anchoring, write_checkpoint
from infra.store.checkpoints import append_line, checkpoint_path, checkpoints, cosigners, read_lines
from infra.store.homes import MAIN_HOME
from infra.store.inclusions import inclusion
from infra.store.notes import parse_vkey
from infra.store.opening import Store, open_store
from infra.store.signing import load_key
from infra.store.witness import WitnessRefusal, state_path, witness
from infra.store.witness_push import configured
from projections.audit_port import PROJECTIONS

UNANCHORED = 3
"""`sabot audit verify`'s exit code when the record is intact but not all of it anchored."""
UNWITNESSED = 4
"""`sabot audit verify --witnesses N`'s exit code when the record is intact but fewer than N
of the witnesses named co-signed its latest checkpoint."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("audit", help=SUMMARIES["audit"])
    actions = parser.add_subparsers(dest="audit_action", required=True, metavar="ACTION")
    check = actions.add_parser(
        "verify",
        help="check the chain, signatures, checkpoints, shoes, vault, snapshots and views",
        description="Recompute the hash chains and the Merkle tree from the stored events, "
        "check the signatures and the checkpoints kept outside the database, then re-deal "
        "shoes, open vault seals, replay snapshotted aggregates, check the command log and "
        "rebuild the projections. Exit 0 when intact, 1 when anything differs, 2 when the "
        f"store cannot be read, {UNANCHORED} when intact but not all of it is anchored "
        "outside the database (events covered by no checkpoint, a stored tree folded further "
        "than the checkpoint file shows, no key outside the database): see --strict.",
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
    check.add_argument("--snapshots", action="store_true",
                       help="(always on now) rebuild every snapshotted aggregate and compare")
    check.add_argument("--checkpoints", metavar="PATH", type=Path,
                       help="the checkpoint file (default: beside the store, or "
                            "$SABOT_CHECKPOINTS)")
    check.add_argument("--public-key", action="append", default=[], metavar="HEX",
                       help="a trusted signing key (repeatable; default: the store's key file, "
                            "else $SABOT_TRUSTED_KEYS, else the checkpoint file's key; never "
                            "the keys the store records)")
    check.add_argument("--all-signatures", action="store_true",
                       help="verify every transaction's signature, also those a matching "
                            "checkpoint a witness co-signed covers")
    check.add_argument("--since", metavar="SIZE", type=int,
                       help="verify incrementally from the checkpoint of SIZE events")
    check.add_argument("--strict", action="store_true",
                       help=f"exit 1, not {UNANCHORED}, when the record is intact but not all "
                            "of it is anchored")
    check.add_argument("--witnesses", metavar="N", type=int, default=0,
                       help=f"require N distinct witnesses' valid co-signatures on the latest "
                            f"checkpoint (exit {UNWITNESSED} otherwise)")
    check.add_argument("--witness", action="append", default=[], metavar="VKEY",
                       help="a witness's verifier key, counted by --witnesses; the signatures "
                            "a checkpoint it co-signed covers are vouched for (repeatable; "
                            "default: those of $SABOT_WITNESSES)")
    check.set_defaults(handler=run)

    write = actions.add_parser("checkpoint", help="sign the store's tree head now and append "
                               "it to the checkpoint file")
    add_database(write)
    write.set_defaults(handler=run_checkpoint)

    status = actions.add_parser("status", help="how the checkpoints of every process that "
                                "writes this store fare (exit 1 when one is failing)")
    add_database(status)
    status.set_defaults(handler=run_status)

    witness = actions.add_parser(
        "witness", help="co-sign the latest checkpoint with a witness key",
        description="Check that the latest checkpoint is signed by the log's key and extends "
        "the last one this witness co-signed, as its own state file remembers it (a "
        "consistency proof over the store's events, which must give the checkpoint's root), "
        "then append the witness's co-signature to the checkpoint file and remember it.")
    witness.add_argument("--key", metavar="PATH", type=Path,
                         help="the witness's private key (`sabot keys create --out PATH`); "
                              "required")
    witness.add_argument("--state", metavar="FILE", type=Path,
                         help="what this witness co-signed last (default: beside its key, "
                              "PATH.state)")
    witness.add_argument("--checkpoints", metavar="PATH", type=Path,
                         help="the checkpoint file, giving the checkpoint to co-sign "
                              "(default: beside the store)")
    witness.add_argument("--public-key", metavar="HEX",
                         help="the operator's public key the checkpoint must be signed with "
                              "(default: the one the state pinned, else the checkpoint's)")
    add_database(witness)
    witness.set_defaults(handler=run_witness)
    _witness_serve.register(witness)
    _audit_proofs.register(actions)
    _audit_receipts.register(actions)
    _audit_hand_over.register(actions)

    prove = actions.add_parser(
        "prove", help="an event's RFC 9162 inclusion proof in the latest checkpoint",
        description="Print the event's leaf, its position, the latest checkpoint and the "
        "inclusion proof, after checking it: what an outsider needs to check that one event "
        "is in the signed record.")
    prove.add_argument("notification", type=int, metavar="NOTIFICATION",
                       help="the event's notification id")
    prove.add_argument("--json", action="store_true", help="print the proof as JSON")
    add_database(prove)
    prove.set_defaults(handler=run_prove)


def run(args: argparse.Namespace) -> int:
    url = resolve_database_url(args.database)
    try:
        anchors = dict(parse_anchor(text) for text in args.anchor)
        keys = [bytes.fromhex(text) for text in args.public_key]
        lines = read_lines(args.checkpoints) if args.checkpoints else None
        witnesses = [parse_vkey(text).public_key for text in args.witness] or None
        with open_store(url, create=False) as store:
            witnessed = _witnessed(args, store) if args.witnesses else None
            verified = {MAIN_HOME: _verified(store, anchors=anchors, checkpoint_lines=lines,
                                             trusted_keys=keys or None, witness_keys=witnesses,
                                             all_signatures=args.all_signatures,
                                             since=args.since)}
            for name, home in store.homes().items():  # each its own chain, keys, checkpoints
                verified[name] = _verified(home, trusted_keys=keys or None,
                                           witness_keys=witnesses,
                                           all_signatures=args.all_signatures)
    except (StoreError, ValueError, SettingsError) as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    report, shoes = verified[MAIN_HOME]
    if args.json:
        body = {**msgspec.to_builtins(report), "shoes": msgspec.to_builtins(shoes.result)}
        if len(verified) > 1:
            body["homes"] = {name: {**msgspec.to_builtins(r), "shoes":
                                    msgspec.to_builtins(s.result)}
                             for name, (r, s) in verified.items() if name != MAIN_HOME}
        sys.stdout.write(msgspec.json.encode(body).decode() + "\n")
    else:
        for name, (each, its_shoes) in verified.items():
            if len(verified) > 1:
                print(f"home:    {name}")
            shown = redact_url(url if name == MAIN_HOME else store.homes()[name].url)
            lines_out = describe(each, shown).splitlines()
            if each.first_break is None:
                lines_out[-1:-1] = its_shoes.summary()
            print("\n".join(lines_out))
    reports = [each for each, _ in verified.values()]
    if witnessed is not None and not args.json:
        print(witnessed[1])
    if not all(each.ok for each in reports):
        return 1
    if witnessed is not None and not witnessed[0]:
        return UNWITNESSED
    if any(each.unanchored for each in reports):
        return 1 if args.strict else UNANCHORED
    return 0


def _witnessed(args: argparse.Namespace, store: Store) -> tuple[bool, str]:
    """Whether at least `--witnesses` of the witnesses named co-signed the latest checkpoint,
    and a line saying which did and which did not."""
    keys = [parse_vkey(text) for text in args.witness] or [w.key for w in configured()]
    path = args.checkpoints or checkpoint_path(store.database)
    lines = read_lines(path) if path is not None else []
    signed = checkpoints(lines)
    if not signed:
        return False, f"WITNESSES: no checkpoint, so none of {args.witnesses} required"
    latest = max(reversed(signed), key=lambda c: (c.size, c.time))
    found = cosigners(lines, latest)
    named = {key.name: key.public_key.hex() in found for key in keys}
    count = sum(named.values())
    missing = ", ".join(name for name, seen in named.items() if not seen) or "none"
    enough = count >= args.witnesses
    return enough, (f"{'witnesses' if enough else 'WITNESSES'}: {count} of {args.witnesses} "
                    f"required co-signed checkpoint {latest.fingerprint()} (not: {missing})")


def _verified(store: Store, **options: Any) -> tuple[AuditReport, ShoeAudit]:
    """One home's report (its shoes' audit with it)."""
    shoes = ShoeAudit()
    checks: list[AuditCheck] = [shoes, *complete_checks(PROJECTIONS)]
    return verify(store, extra_checks=checks, **options), shoes


def describe(report: AuditReport, url: str) -> str:
    lines = [f"store:   {url}"]
    walked = report.events - (report.since or 0)
    rate = walked / report.walk_seconds if report.walk_seconds else 0
    lines.append(f"events:  {report.events} verified in {report.seconds:.2f}s (chain, tree and "
                 f"signatures: {report.walk_seconds:.2f}s, {rate:,.0f} events/s)"
                 + (f", from checkpoint {report.since}" if report.since is not None else ""))
    lines.append(f"streams: {report.streams}, in {report.partitions} partitions")
    if report.head_notification_id is not None:
        label = "head:   " if report.first_break is None else "last good:"
        lines.append(f"{label} {report.head_notification_id}:{report.head_digest}")
    if report.trust:
        lines.append(f"tree:    {report.tree_size} leaves, root {report.tree_root}")
        lines.append(f"signed:  {report.signatures} signatures verified, {report.covered} "
                     f"covered by checkpoints a witness co-signed")
        keys = [f"{key_id} {public}" for key_id, public in zip(
            report.keys, report.public_keys, strict=True)]  # the paper shows the key id
        lines.append(f"key:     {', '.join(keys) or 'none'} (trusted: {report.trust})")
        lines.append(f"checkpoints: {report.checkpoints} matched"
                     + (f"; consistency proof of {report.proof} hashes"
                        if report.proof is not None else ""))
    if report.first_break is not None:
        broken = report.first_break
        lines.append(f"BROKEN:  {broken.problem} at {broken.where()}")
        lines.append(f"         {broken.detail}")
    for finding in report.findings:
        lines.append(f"FAILED:  [{finding.check}] {finding.problem} at {finding.where()}")
        lines.append(f"         {finding.detail}")
    for notice in report.notices:
        lines.append(f"NOTE:    [{notice.check}] {notice.problem}: {notice.detail}")
    for reason in report.unanchored:
        lines.append(f"UNANCHORED: {reason}")
    if report.ok and report.unanchored:
        lines.append("NOT ANCHORED: no discrepancy found, but not all of the record is "
                     "anchored outside the database")
    else:
        lines.append("intact" if report.ok else "the store is NOT intact")
    return "\n".join(lines)


def run_checkpoint(args: argparse.Namespace) -> int:
    """Exit 0 when written (or nothing new), 1 when the store's fold refuses (altered)."""
    url = resolve_database_url(args.database)
    with open_store(url, create=False) as store:
        try:
            for home in store.homes().values():  # each home's file beside the main one's
                write_checkpoint(home)
            checkpoint = write_checkpoint(store)
        except ChainError as error:
            print(f"sabot: no checkpoint written: {error}", file=sys.stderr)
            return 1
        path = checkpoint_path(store.database)
    if checkpoint is None:
        print(f"no new checkpoint: {path or 'an in-memory store has no file'} already holds "
              "the store's size")
        return 0
    print(f"checkpoint: {checkpoint.fingerprint()} (head {checkpoint.head}) -> {path}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Each store's anchoring as every writing process reported it (`infra.store.anchorings`):
    exit 0 when none is failing, 1 when one is, naming why."""
    with open_store(resolve_database_url(args.database), create=False) as store:
        stores = anchoring(store.database)
    if not stores:
        print("anchoring: no process reported checkpoints of this store lately")
    for state in stores:
        age = "none yet" if state.age is None else f"{state.age:.0f} s ago"
        print(f"{state.database}: " + ("anchored" if state.failing is None else
              f"FAILING ({state.failures} attempts failed): {state.failing}")
              + f"; latest checkpoint {age}")
    return 1 if any(state.failing is not None for state in stores) else 0


def run_witness(args: argparse.Namespace) -> int:
    if args.key is None:
        print("sabot: audit witness needs --key PATH", file=sys.stderr)
        return 2
    url = resolve_database_url(args.database)
    try:
        signer = load_key(args.key)
        with open_store(url, create=False) as store:
            path = args.checkpoints or checkpoint_path(store.database)
            if path is None:
                raise WitnessRefusal("an in-memory store has no checkpoint file")
            lines = read_lines(path)
            signed = checkpoints(lines)
            if not signed:
                raise WitnessRefusal("there is no checkpoint to co-sign")
            latest = max(reversed(signed), key=lambda c: (c.size, c.time))  # ties: the last
            trusted = bytes.fromhex(args.public_key) if args.public_key else None
            cosignature = witness(store.database, latest, signer,
                                  args.state or state_path(args.key), trusted, lines)
            append_line(path, cosignature)
    except (StoreError, ValueError) as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 1 if isinstance(error, WitnessRefusal) else 2
    print(f"co-signed: checkpoint of {cosignature.size} events, root {cosignature.root[:16]}… "
          f"by witness {cosignature.witness}")
    return 0


def run_prove(args: argparse.Namespace) -> int:
    url = resolve_database_url(args.database)
    try:
        with open_store(url, create=False) as store:
            path = checkpoint_path(store.database)
            signed = checkpoints(read_lines(path)) if path is not None else []
            if not signed:
                raise ValueError("the store has no checkpoint to prove against")
            latest = max(signed, key=lambda c: (c.size, c.time))
            proof = inclusion(store.database, latest, args.notification)
    except (StoreError, ValueError) as error:
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    body = {"notification_id": proof.notification_id, "position": proof.position,
            "leaf": proof.leaf.hex(), "proof": [node.hex() for node in proof.proof],
            "checkpoint": msgspec.to_builtins(latest), "holds": proof.holds()}
    if args.json:
        sys.stdout.write(msgspec.json.encode(body).decode() + "\n")
    else:
        print(f"event:      notification {proof.notification_id}, leaf {proof.position} "
              f"of {latest.size}: {proof.leaf.hex()}")
        print(f"checkpoint: {latest.fingerprint()} at {latest.time}, key {latest.key}")
        print(f"proof:      {len(proof.proof)} hashes; "
              + ("holds" if proof.holds() else "DOES NOT HOLD"))
    return 0 if proof.holds() else 1
