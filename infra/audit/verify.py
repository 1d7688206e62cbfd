"""`verify`: recompute the hash chain, the Merkle tree and the signatures from the stored
events, compare them with the checkpoints kept outside the database, and name each break.

The walk reads, in one consistent read transaction, the stored events and the `event_chain`
rows in notification order, recomputes each event's stream and global digests
(`infra.store.chain`) and its Merkle leaf (`infra.store.merkle`), and stops at the first
disagreement of the chain, which it names (`first_break`):

| problem              | what was found                                                      |
|----------------------|---------------------------------------------------------------------|
| `state altered`      | an event's stored topic or state is not what was chained            |
| `order changed`      | events moved: an event holds another's content, version or position |
| `event missing`      | a chained event is gone (or an event and its chain row both are)    |
| `event not in chain` | a stored event has no chain row (inserted by hand, or its row gone) |
| `chain row altered`  | a chain row's digests do not follow from the events and the chain   |
| `anchor mismatch`    | the chain differs from a digest published earlier (an anchor)       |

The chain alone has no secret: someone who can write to the database can rewrite events and
recompute every digest, or drop the latest events. What they cannot redo without the signing
key, or outside the database, is checked next (`findings`, check `signatures` or
`checkpoints`):

| problem                  | what was found                                                  |
|--------------------------|-----------------------------------------------------------------|
| `head not signed`        | the last event's transaction has no signature: events appended  |
| `signature invalid`      | a transaction's signature does not sign the chain's digest there |
| `untrusted key`          | a signature or checkpoint by a key that is not the trusted one  |
| `checkpoint invalid`     | a checkpoint line whose signature or frontier does not hold     |
| `hand-over refused`      | a key hand-over not validly signed by a trusted key (never followed) |
| `checkpoint mismatch`    | the tree or chain at a checkpoint's size is not what it signed  |
| `store truncated`        | a checkpoint signed more events than the store holds            |
| `checkpoints inconsistent` | `since`: the store's tree does not extend the start checkpoint |

Every checkpoint's root is recomputed from the one sequence of leaves, so matching roots also
prove that each checkpoint extends the ones before it; an incremental verify (`since`) starts
from a checkpoint's frontier instead and checks RFC 9162's consistency proof from it.

Signatures: each transaction's head is signed. The hash chain makes every signature before a
checkpoint redundant once that checkpoint matches (its signed root covers each event), but
the checkpoint file is only as good as the party who can write it until a witness co-signs
it: by default the walk checks every signature after the latest checkpoint a witness of
`witness_keys` validly co-signed (every signature, when none did), and each partition's head
signature; `all_signatures=True` checks every one (Ed25519 verification is ~90 µs each).

Trust: the keys signatures and checkpoints must be made with are `trusted_keys` if given,
else the store's own key file if this process can read it, else the keys the checkpoint
file names (its first checkpoint's key), else, with no key outside the database at all, the
keys the store records (reported as such); with, but for the last, the keys those handed the
log over to by a signed hand-over in the checkpoint file (`infra.store.hand_overs`).

Live stores: the walk and every check read one snapshot of the store, taken when verify
starts (`Database.snapshot`: one read transaction, `REPEATABLE READ` on PostgreSQL, a WAL
read transaction on SQLite, each check's reads in it), so writes made while verify runs are
neither verified nor reported; the checkpoint file is read before the snapshot is taken.

Further checks (shoes, snapshots, vault, command log, projections) plug in as
`extra_checks`: callables taking the opened `Store` and returning `Finding`s. They run only
when the chain is intact, since they read the events the chain vouches for.

Modules: the walk is `infra.audit.walk` (the chain) on `infra.audit.signatures` (the
signatures and the checkpoints); the findings and the report are `infra.audit.report`.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

import msgspec
from eventsourcing.persistence import PersistenceError

from infra.audit.report import (
    NOTICES,
    AuditCheck,
    AuditReport,
    Finding,
    Problem,
    parse_anchor,
    report_to_json,
)
from infra.audit.walk import Walk
from infra.errors import NotAStore
from infra.settings import redact_url
from infra.store.checkpoints import Line, checkpoint_path, checkpoints, read_lines
from infra.store.database import Database
from infra.store.hand_overs import follow
from infra.store.opening import Store, one_line, open_store
from infra.store.signing import key_env, key_id, public_key_of
from infra.store.trust import STORE_ONLY, Trust, configured_keys
from infra.store.witness_push import configured as configured_witnesses

__all__ = ["AuditCheck", "AuditReport", "Finding", "Problem", "parse_anchor", "report_to_json",
           "trust_of", "verify"]


def verify(
    target: str | Store,
    *,
    extra_checks: Sequence[AuditCheck] = (),
    anchors: Mapping[int, bytes] | None = None,
    checkpoint_lines: Sequence[Line] | None = None,
    trusted_keys: Sequence[bytes] | None = None,
    witness_keys: Sequence[bytes] | None = None,
    signatures: bool = True,
    all_signatures: bool = False,
    since: int | None = None,
    page_size: int = 5000,
) -> AuditReport:
    """Check the store at `target` (a URL or an opened `Store`); never writes.

    `checkpoint_lines`: the checkpoints to compare with, their co-signatures and the key
    hand-overs (default: the store's checkpoint file's lines). `witness_keys`: the public
    keys of the witnesses whose co-signature of a checkpoint spares checking the signatures
    it covers (default: those of `SABOT_WITNESSES`). `signatures=False` checks the bare
    chain only (no signatures, no checkpoints).
    `since`: start from the checkpoint of that size (incremental; `ValueError` if there is
    no such valid checkpoint).
    """
    started = time.perf_counter()
    store = open_store(target, create=False) if isinstance(target, str) else target
    try:
        if checkpoint_lines is None:
            path = checkpoint_path(store.database)
            checkpoint_lines = read_lines(path) if path is not None else []
        if witness_keys is None:
            witness_keys = [witness.key.public_key for witness in configured_witnesses()]
        try:
            with _few_collections(), _one_snapshot(store):
                walk = Walk(store.database, dict(anchors or {}), page_size)
                if signatures:
                    walk.expect_signed(trust_of(store.database, trusted_keys, checkpoint_lines),
                                       checkpoint_lines, witness_keys, all_signatures, since)
                first_break = walk.run()
                walked = time.perf_counter() - started
                findings = list(walk.findings)
                names = tuple(_name(check) for check in extra_checks)
                if first_break is None:
                    for name, check in zip(names, extra_checks, strict=True):
                        findings.extend(_run_check(name, check, store))
        except PersistenceError as error:
            raise NotAStore(
                f"{redact_url(store.url)} is not a readable Sabot store: {one_line(error)}"
            ) from error
    finally:
        if isinstance(target, str):
            store.close()
    notices = tuple(f for f in findings if f.problem in NOTICES)
    findings = [f for f in findings if f.problem not in NOTICES]
    return AuditReport(
        ok=first_break is None and not findings,
        events=walk.count,
        streams=len(walk.streams),
        head_notification_id=walk.head,
        head_digest=walk.previous_global.hex(),
        first_break=first_break,
        findings=tuple(findings),
        checks=("chain", *names) if first_break is None else ("chain",),
        seconds=time.perf_counter() - started,
        walk_seconds=walked,
        tree_size=walk.tree.size,
        tree_root=walk.tree.root().hex(),
        signatures=walk.verified,
        covered=walk.covered,
        checkpoints=walk.matched,
        keys=tuple(sorted(walk.trust.keys)) if walk.trust else (),
        public_keys=tuple(walk.trust.keys[k].hex() for k in sorted(walk.trust.keys))
        if walk.trust else (),
        trust=walk.trust.source if walk.trust else "",
        since=since,
        proof=walk.proof,
        partitions=len(walk.partitions),
        unanchored=tuple(walk.unanchored),
        notices=notices,
    )


@contextmanager
def _one_snapshot(store: Store) -> Iterator[None]:
    """Every read of the walk and the checks, on each of the store's databases, in one
    snapshot taken now: events written while verify runs are not seen (the checkpoint file
    is read before, so every checkpoint it holds is of events the snapshot holds)."""
    with ExitStack() as stack:
        databases = [store.database, store.vault_database, *store.home_databases().values()]
        for database in {id(d): d for d in databases}.values():
            stack.enter_context(database.snapshot())
        yield


YOUNG_COLLECTION_EVERY = 50_000  # container allocations, while verify runs (default 700)
_collections = threading.Lock()
_verifying = 0
_threshold: tuple[int, ...] = ()


@contextmanager
def _few_collections() -> Iterator[None]:
    """The cyclic garbage collector runs less often while verify allocates: a decoded event
    and its replay make hundreds of short-lived containers, and at the default threshold the
    collector's full passes scanned verify's own growing bookkeeping again and again (a
    quarter of a complete verify's time at 100,000 events). It still runs; the thresholds
    are restored when the last verify running in this process ends."""
    global _verifying, _threshold
    with _collections:
        if _verifying == 0:
            _threshold = gc.get_threshold()
            if _threshold[0]:  # 0: collections are off, left so
                gc.set_threshold(max(_threshold[0], YOUNG_COLLECTION_EVERY), *_threshold[1:])
        _verifying += 1
    try:
        yield
    finally:
        with _collections:
            _verifying -= 1
            if _verifying == 0:
                gc.set_threshold(*_threshold)


def trust_of(database: Database, given: Sequence[bytes] | None,
             lines: Sequence[Line]) -> Trust:
    """The roots (`roots_of`) and the keys they handed over to by the hand-overs among
    `lines` (`infra.store.hand_overs`), with why each other hand-over was refused; the keys
    the store records (`STORE_ONLY`) follow none."""
    roots = roots_of(database, given, lines)
    if roots.source == STORE_ONLY:
        return roots
    keys, refused = follow(roots.keys, lines)
    handed = " and the keys they handed over to" if len(keys) > len(roots.keys) else ""
    return Trust(keys, roots.source + handed, tuple(why for _, why in refused))


def roots_of(database: Database, given: Sequence[bytes] | None,
             lines: Sequence[Line]) -> Trust:
    """The keys given, else the store's key file, else those of `SABOT_TRUSTED_KEYS`, else
    the checkpoint file's first key: never the keys the store records, unless nothing
    outside it names one (then said: `STORE_ONLY`, unanchored)."""
    configured = configured_keys()
    also = " and SABOT_TRUSTED_KEYS" if configured else ""
    if given:
        return Trust({**configured, **{key_id(key): key for key in given}}, "given" + also)
    own = public_key_of(key_env(database))
    if own is not None:
        return Trust({**configured, key_id(own): own}, "the store's key file" + also)
    if configured:
        return Trust(configured, "SABOT_TRUSTED_KEYS")
    signed = checkpoints(list(lines))
    if signed:
        first = min(signed, key=lambda c: (c.size, c.time))
        return Trust({first.key: bytes.fromhex(first.public_key)}, "the checkpoint file")
    try:
        with database.transaction(write=False) as cursor:
            rows = database.execute(cursor, "SELECT key_id, public_key FROM {signing_keys}")
            recorded = {row["key_id"]: bytes(row["public_key"]) for row in rows.fetchall()}
    except PersistenceError:
        recorded = {}  # not a store: the walk says so, naming its events
    return Trust(recorded, STORE_ONLY)


def _name(check: AuditCheck) -> str:
    return str(getattr(check, "name", getattr(check, "__name__", type(check).__name__)))


def _run_check(name: str, check: AuditCheck, store: Store) -> list[Finding]:
    try:
        return [
            f if f.check != "chain" else msgspec.structs.replace(f, check=name)
            for f in check(store)
        ]
    except Exception as error:
        return [Finding(problem=Problem.CHECK_FAILED, detail=f"{error!r}", check=name)]
