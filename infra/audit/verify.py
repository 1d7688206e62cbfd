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
| `checkpoint mismatch`    | the tree or chain at a checkpoint's size is not what it signed  |
| `store truncated`        | a checkpoint signed more events than the store holds            |
| `checkpoints inconsistent` | `since`: the store's tree does not extend the start checkpoint |

Every checkpoint's root is recomputed from the one sequence of leaves, so matching roots also
prove that each checkpoint extends the ones before it; an incremental verify (`since`) starts
from a checkpoint's frontier instead and checks RFC 9162's consistency proof from it.

Signatures: each transaction's head is signed. The hash chain makes every signature before a
checkpoint redundant once that checkpoint matches (its signed root covers each event), so by
default the walk checks the signatures after the latest checkpoint (and the head's);
`all_signatures=True` checks every one (Ed25519 verification is ~90 µs each).

Trust: the keys signatures and checkpoints must be made with are `trusted_keys` if given,
else the store's own key file if this process can read it, else the keys the checkpoint
file names (its first checkpoint's key), else, with no key outside the database at all, the
keys the store records (reported as such).

Further checks (shoes, snapshots, vault, command log, projections) plug in as
`extra_checks`: callables taking the opened `Store` and returning `Finding`s. They run only
when the chain is intact, since they read the events the chain vouches for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from hashlib import sha256
from typing import Any, Generic, NamedTuple, TypeVar
from uuid import UUID

import msgspec
from eventsourcing.persistence import PersistenceError

from infra.errors import NotAStore
from infra.settings import redact_url
from infra.store import ledger
from infra.store.chain import GENESIS, ChainLink, canonical_bytes, global_digest, stream_digest
from infra.store.checkpoints import (
    Checkpoint,
    PartitionHead,
    checkpoint_path,
    checkpoints,
    read_lines,
)
from infra.store.database import Database
from infra.store.merkle import Frontier, consistency_proof, verify_consistency
from infra.store.opening import Store, one_line, open_store
from infra.store.partitions import MAIN
from infra.store.signing import head_message, key_env, key_id, public_key_of, signature_valid

MAX_SIGNATURE_FINDINGS = 20


class Problem(StrEnum):
    STATE_ALTERED = "state altered"
    ORDER_CHANGED = "order changed"
    EVENT_MISSING = "event missing"
    NOT_IN_CHAIN = "event not in chain"
    CHAIN_ALTERED = "chain row altered"
    ANCHOR_MISMATCH = "anchor mismatch"
    CHECK_FAILED = "check failed"
    UNSIGNED_HEAD = "head not signed"
    SIGNATURE_INVALID = "signature invalid"
    UNTRUSTED_KEY = "untrusted key"
    CHECKPOINT_INVALID = "checkpoint invalid"
    CHECKPOINT_MISMATCH = "checkpoint mismatch"
    STORE_TRUNCATED = "store truncated"
    INCONSISTENT = "checkpoints inconsistent"


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """Something wrong, and where: the stream, version and notification id when known."""

    problem: str
    detail: str
    originator_id: UUID | None = None
    originator_version: int | None = None
    notification_id: int | None = None
    check: str = "chain"
    partition: str | None = None

    def where(self) -> str:
        parts = []
        if self.originator_id is not None:
            parts.append(f"stream {self.originator_id}")
        if self.originator_version is not None:
            parts.append(f"version {self.originator_version}")
        if self.notification_id is not None:
            parts.append(f"notification {self.notification_id}")
        if self.partition is not None:
            parts.append(f"partition {self.partition or 'main'}")
        return ", ".join(parts) or "the store"


class AuditReport(msgspec.Struct, frozen=True, kw_only=True):
    """`events`, `streams` and the head (`head_notification_id`, `head_digest`: the global
    digest there, hex) cover what was verified: the whole store when the chain is intact,
    else what precedes `first_break`. `checks` names the checks that ran; `walk_seconds` is
    the part of `seconds` spent on the chain, tree, signatures and checkpoints. `tree_size` and
    `tree_root` are the Merkle tree's; `signatures` counts the signatures verified,
    `covered` those vouched for by a matching checkpoint instead; `checkpoints` counts the
    checkpoints matched, `trust` says where the trusted keys (`keys`, ids, and
    `public_keys`, hex) came from; `since` is
    the checkpoint size an incremental verify started from, `proof` the length of its
    consistency proof to the store's tree."""

    ok: bool
    events: int
    streams: int
    head_notification_id: int | None
    head_digest: str
    first_break: Finding | None
    findings: tuple[Finding, ...]
    checks: tuple[str, ...]
    seconds: float
    walk_seconds: float = 0.0
    tree_size: int = 0
    tree_root: str = ""
    signatures: int = 0
    covered: int = 0
    checkpoints: int = 0
    keys: tuple[str, ...] = ()
    public_keys: tuple[str, ...] = ()
    trust: str = ""
    since: int | None = None
    proof: int | None = None
    partitions: int = 0


AuditCheck = Callable[[Store], Iterable[Finding]]
T = TypeVar("T")


_Event = ledger.StoredRow


class Trust(NamedTuple):
    keys: dict[str, bytes]
    source: str


def verify(
    target: str | Store,
    *,
    extra_checks: Sequence[AuditCheck] = (),
    anchors: Mapping[int, bytes] | None = None,
    checkpoint_lines: Sequence[Checkpoint] | None = None,
    trusted_keys: Sequence[bytes] | None = None,
    signatures: bool = True,
    all_signatures: bool = False,
    since: int | None = None,
    page_size: int = 5000,
) -> AuditReport:
    """Check the store at `target` (a URL or an opened `Store`); never writes.

    `checkpoint_lines`: the checkpoints to compare with (default: the store's checkpoint
    file). `signatures=False` checks the bare chain only (no signatures, no checkpoints).
    `since`: start from the checkpoint of that size (incremental; `ValueError` if there is
    no such valid checkpoint).
    """
    started = time.perf_counter()
    store = open_store(target, create=False) if isinstance(target, str) else target
    try:
        if checkpoint_lines is None:
            path = checkpoint_path(store.database)
            checkpoint_lines = checkpoints(read_lines(path)) if path is not None else []
        try:
            walk = _Walk(store.database, dict(anchors or {}), page_size)
            if signatures:
                walk.expect_signed(_trust(store.database, trusted_keys, checkpoint_lines),
                          checkpoint_lines, all_signatures, since)
            first_break = walk.run()
            walked = time.perf_counter() - started
        except PersistenceError as error:
            raise NotAStore(
                f"{redact_url(store.url)} is not a readable Sabot store: {one_line(error)}"
            ) from error
        findings = list(walk.findings)
        names = tuple(_name(check) for check in extra_checks)
        if first_break is None:
            for name, check in zip(names, extra_checks, strict=True):
                findings.extend(_run_check(name, check, store))
    finally:
        if isinstance(target, str):
            store.close()
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
    )


def _trust(database: Database, given: Sequence[bytes] | None,
           lines: Sequence[Checkpoint]) -> Trust:
    if given:
        return Trust({key_id(key): key for key in given}, "given")
    own = public_key_of(key_env(database))
    if own is not None:
        return Trust({key_id(own): own}, "the store's key file")
    if lines:
        first = min(lines, key=lambda c: (c.size, c.time))
        return Trust({first.key: bytes.fromhex(first.public_key)}, "the checkpoint file")
    try:
        with database.transaction(write=False) as cursor:
            rows = database.execute(cursor, "SELECT key_id, public_key FROM {signing_keys}")
            recorded = {row["key_id"]: bytes(row["public_key"]) for row in rows.fetchall()}
    except PersistenceError:
        recorded = {}  # not a store: the walk says so, naming its events
    return Trust(recorded, "the store itself (no key outside it: pass a public key)")


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


class _Peekable(Generic[T]):
    def __init__(self, items: Iterator[T]) -> None:
        self._items = items
        self._next: T | None = next(items, None)

    def peek(self) -> T | None:
        return self._next

    def pop(self) -> T | None:
        item, self._next = self._next, next(self._items, None)
        return item


class _Walk:
    def __init__(self, database: Database, anchors: dict[int, bytes], page_size: int) -> None:
        self.database = database
        self.anchors = anchors
        self.page_size = page_size
        self.previous_global = GENESIS  # the partition digest at the last event counted
        self.partitions: dict[str, tuple[int, bytes]] = {}  # last notification id, digest
        self.partition_sizes: dict[str, int] = {}
        self.streams: dict[Any, tuple[int, bytes]] = {}  # by the database's originator id
        self._prefixes: dict[Any, bytes] = {}
        self.count = 0
        self.head: int | None = None
        self.tree = Frontier()
        self.findings: list[Finding] = []
        self.trust: Trust | None = None
        self.verified = self.covered = self.matched = 0
        self.proof: int | None = None
        self.after = 0
        self.since: Checkpoint | None = None
        self._pending: list[Checkpoint] = []
        self._signatures: dict[int, tuple[str, bytes]] = {}
        self._covered_to = 0
        self._all = False
        self._covered_heads: list[tuple[int, bytes, Any, int, str, str, bytes]] = []
        self._last: dict[str, tuple[Any, int]] = {}  # by partition: stream, version
        self._partition: str | None = None  # of the chain row being checked
        self._new_leaves: list[bytes] = []

    # --- what is checked besides the chain ---------------------------------------------

    def expect_signed(self, trust: Trust, lines: Sequence[Checkpoint], all_signatures: bool,
             since: int | None) -> None:
        """Check signatures and checkpoints too, trusting `trust`'s keys."""
        self.trust = trust
        self._all = all_signatures
        valid = [c for c in sorted(lines, key=lambda c: (c.size, c.time)) if self._valid(c)]
        if since is not None:
            start = next((c for c in valid if c.size == since), None)
            if start is None:
                raise ValueError(f"no valid checkpoint of size {since} to verify from")
            self.since = start
            self.tree = start.tree()
            self.count, self.head, self.after = start.size, start.head or None, start.head
            self.previous_global = bytes.fromhex(start.chain) if start.chain else GENESIS
            for part in start.partitions or [PartitionHead(MAIN, start.size, start.head,
                                                           start.chain)]:
                self.partition_sizes[part.key] = part.size
                self.partitions[part.key] = (part.head, bytes.fromhex(part.chain))
            valid = [c for c in valid if c.size > since]
        self._pending = valid
        self._covered_to = max((c.head for c in valid), default=0)
        if since is not None:
            self._covered_to = max(self._covered_to, self.after)

    def _valid(self, checkpoint: Checkpoint) -> bool:
        assert self.trust is not None
        problem = None
        try:
            if not checkpoint.signed_by_its_key():
                problem = "its signature does not verify"
            elif checkpoint.key not in self.trust.keys:
                problem = f"it is signed by key {checkpoint.key}, which is not trusted"
            else:
                checkpoint.tree()
        except ValueError as error:
            problem = str(error)
        if problem is None:
            return True
        self._flag(Problem.CHECKPOINT_INVALID, f"the checkpoint of size {checkpoint.size} at "
                   f"{checkpoint.time}: {problem}", check="checkpoints")
        return False

    def _flag(self, problem: Problem, detail: str, *, check: str = "signatures",
              notification_id: int | None = None, partition: str | None = None) -> None:
        self.findings.append(Finding(problem=problem, detail=detail, check=check,
                                     notification_id=notification_id, partition=partition))

    def _load_signatures(self) -> None:
        assert self.trust is not None
        rows = self.database.execute(
            self.cursor,
            "SELECT notification_id, key_id, signature FROM {chain_signatures}"
            " WHERE notification_id > ?",
            (self.after,),
        ).fetchall()
        untrusted: dict[str, int] = {}
        for row in rows:
            n, key = row["notification_id"], row["key_id"]
            self._signatures[n] = (key, bytes(row["signature"]))
            if key not in self.trust.keys:
                untrusted.setdefault(key, n)
        for key, n in sorted(untrusted.items(), key=lambda item: item[1]):
            self._flag(Problem.UNTRUSTED_KEY, f"transactions from notification {n} on are "
                       f"signed by key {key}, which is not trusted ({self.trust.source})",
                       notification_id=n)

    def _check_signature(self, n: int, digest: bytes, oid: Any, version: int,
                         partition: str) -> None:
        key, signature = self._signatures.pop(n)
        if n <= self._covered_to and not self._all:
            self.covered += 1
            self._covered_heads.append((n, digest, oid, version, partition, key, signature))
            return
        if not self._holds(key, signature, n, digest) and (
            len(self.findings) < MAX_SIGNATURE_FINDINGS
        ):
            self._bad_signature(n, oid, version, partition)

    def _holds(self, key: str, signature: bytes, n: int, digest: bytes) -> bool:
        assert self.trust is not None
        public = self.trust.keys.get(key)
        if public is None:
            return True  # named once, as an untrusted key
        self.verified += 1
        return signature_valid(public, head_message(n, digest), signature)

    def _bad_signature(self, n: int, oid: Any, version: int, partition: str) -> None:
        self.findings.append(Finding(
            problem=Problem.SIGNATURE_INVALID, check="signatures", notification_id=n,
            originator_id=self.database.from_db_id(oid), originator_version=version,
            partition=partition,
            detail="the transaction ending here was signed over another chain digest: this "
            "event, or one before it, was changed, inserted or moved, and the chain recomputed"))

    def _locate_rewrite(self) -> None:
        """A checkpoint did not match: find the first transaction whose signature no longer
        holds, among those the checkpoints were trusted to cover."""
        for n, digest, oid, version, partition, key, signature in self._covered_heads:
            if not self._holds(key, signature, n, digest):
                self._bad_signature(n, oid, version, partition)
                return

    def _reach_checkpoints(self) -> None:
        while self._pending and self._pending[0].size == self.count:
            checkpoint = self._pending.pop(0)
            root = self.tree.root().hex()
            chain = self.previous_global.hex() if self.count else ""
            if (checkpoint.root, checkpoint.head, checkpoint.chain) != (
                root, self.head or 0, chain
            ):
                self._flag(Problem.CHECKPOINT_MISMATCH,
                           f"the checkpoint of {checkpoint.time} signed {checkpoint.size} "
                           f"events with root {checkpoint.root[:16]}… ending at notification "
                           f"{checkpoint.head}; the store's first {self.count} events give "
                           f"root {root[:16]}… ending at notification {self.head}: events "
                           "before it were changed, removed, inserted or reordered",
                           check="checkpoints", notification_id=self.head)
                self._compare_partitions(checkpoint)
                continue
            if self._compare_partitions(checkpoint):
                self.matched += 1

    def _compare_partitions(self, checkpoint: Checkpoint) -> bool:
        """Whether each partition is what the checkpoint signed (one that lists none, from
        before partitions, signs no partition); flags each that is not."""
        if not checkpoint.partitions:
            return True
        signed = {p.key: (p.size, p.head, p.chain) for p in checkpoint.partitions}
        held = {key: (self.partition_sizes[key], last, digest.hex())
                for key, (last, digest) in self.partitions.items()}
        for key in sorted(signed.keys() | held.keys()):
            size, last, chain = signed.get(key, (0, 0, ""))
            if held.get(key, (0, 0, "")) != (size, last, chain):
                got = held.get(key, (0, 0, ""))
                self._flag(Problem.CHECKPOINT_MISMATCH,
                           f"the checkpoint of {checkpoint.time} signed {size} events of this "
                           f"partition ending at notification {last} with digest "
                           f"{chain[:16]}…; the store's first {self.count} events hold "
                           f"{got[0]} ending at notification {got[1]} with digest "
                           f"{got[2][:16]}…", check="checkpoints", notification_id=last or None,
                           partition=key)
        return all(held.get(key) == head for key, head in signed.items()) and (
            held.keys() == signed.keys())

    def _finish_signed(self) -> None:
        if any(f.problem == Problem.CHECKPOINT_MISMATCH for f in self.findings):
            self._locate_rewrite()
        for checkpoint in self._pending:
            self._flag(Problem.STORE_TRUNCATED,
                       f"the checkpoint of {checkpoint.time} signed {checkpoint.size} events "
                       f"(up to notification {checkpoint.head}); the store holds "
                       f"{self.count}: events were removed from the end, or an older copy "
                       "of the database was restored", check="checkpoints",
                       notification_id=checkpoint.head)
        for partition, (head, _) in sorted(self.partitions.items(), key=lambda p: p[1][0]):
            if head <= self.after or head in self._signed or any(
                f.problem == Problem.SIGNATURE_INVALID and f.notification_id == head
                for f in self.findings
            ):
                continue
            oid, version = self._last[partition]
            self.findings.append(Finding(
                problem=Problem.UNSIGNED_HEAD, check="signatures", notification_id=head,
                originator_id=self.database.from_db_id(oid), originator_version=version,
                partition=partition,
                detail="no signature covers the last event of its partition: events were "
                "added, or the head's signature removed, without the signing key"))
        for n in sorted(self._signatures):
            self._flag(Problem.SIGNATURE_INVALID, "a signature row for a notification that "
                       "holds no event", notification_id=n)
        if self.since is not None:
            proof = consistency_proof(self.since.tree(), self._new_leaves)
            self.proof = len(proof)
            if not verify_consistency(self.since.size, self.tree.size,
                                      bytes.fromhex(self.since.root), self.tree.root(), proof):
                self._flag(Problem.INCONSISTENT, f"the store's tree of {self.tree.size} events "
                           f"does not extend the checkpoint of size {self.since.size}",
                           check="checkpoints")

    # --- the chain ---------------------------------------------------------------------

    def run(self) -> Finding | None:
        with self.database.transaction(write=False) as cursor:
            self.cursor = cursor
            self._signed: set[int] = set()
            found = self._walk()
            if found is None and self.trust is not None:
                self._finish_signed()
            if found is not None and found.partition is None:
                found = msgspec.structs.replace(found, partition=self._partition)
            return found

    def _walk(self) -> Finding | None:
        events = _Peekable(self._rows(EVENTS_SQL))
        links = _Peekable(self._rows(LINKS_SQL))
        if self.trust is not None:
            self._load_signatures()
            self._reach_checkpoints()  # those of the size it starts from (an empty store's)
        while (event := events.peek()) is not None or links.peek() is not None:
            link = links.peek()
            if event is not None and (link is None or event[0] < link[0]):
                return _at(self._event(event), Problem.NOT_IN_CHAIN,
                           "no chain row records this event")
            assert link is not None
            self._partition = link[5]
            if event is None or link[0] < event[0]:
                slow = self._link(link)
                return Finding(
                    problem=Problem.EVENT_MISSING,
                    detail="the chain records this event but it is not stored",
                    originator_id=slow.originator_id,
                    originator_version=slow.originator_version,
                    notification_id=slow.notification_id,
                )
            events.pop()
            links.pop()
            if not self._follows(event, link):
                finding = self._check(self._event(event), self._link(link))
                if finding is not None:
                    return finding
        return self._check_tail_anchors()

    def _follows(self, event: tuple[Any, ...], link: tuple[Any, ...]) -> bool:
        """The common case, on the rows as read: the event is the next of its stream and
        follows from the chain; then it is counted. False: let `_check` look closer."""
        n, oid, version, topic, state = event
        if oid != link[1] or version != link[2] or n in self.anchors:
            return False
        last = self.streams.get(oid)
        if last is None or version != last[0] + 1:
            return False
        prefix = self._prefixes.get(oid)
        if prefix is None:
            raw = self.database.from_db_id(oid).bytes
            prefix = self._prefixes[oid] = len(raw).to_bytes(4, "big") + raw
        topic_bytes = topic.encode()
        canonical = b"".join((prefix, version.to_bytes(8, "big"),
                              len(topic_bytes).to_bytes(4, "big"), topic_bytes,
                              len(state).to_bytes(4, "big"), state))
        stream = sha256(last[1] + canonical).digest()
        position = n.to_bytes(8, "big")
        chained = sha256(self._previous(link[5]) + position + stream).digest()
        if stream != link[3] or chained != link[4]:
            return False
        self._counted(n, oid, version, stream, link[4], link[5],
                      sha256(b"\x00" + position + canonical).digest())
        return True

    def _counted(self, n: int, oid: Any, version: int, stream: bytes, digest: bytes,
                 partition: str, leaf: bytes) -> None:
        self.previous_global = digest
        self.partitions[partition] = (n, digest)
        self.partition_sizes[partition] = self.partition_sizes.get(partition, 0) + 1
        self.streams[oid] = (version, stream)
        self.count += 1
        self.head = n
        self._last[partition] = (oid, version)
        self.tree.append(leaf)
        if self.trust is not None:
            if self.since is not None:
                self._new_leaves.append(leaf)
            if n in self._signatures:
                self._signed.add(n)
                self._check_signature(n, digest, oid, version, partition)
            if self._pending and self._pending[0].size == self.count:
                self._reach_checkpoints()

    def _event(self, row: tuple[Any, ...]) -> _Event:
        return _Event(row[0], self.database.from_db_id(row[1]), row[2], row[3], bytes(row[4]))

    def _link(self, row: tuple[Any, ...]) -> ChainLink:
        return ChainLink(notification_id=row[0], originator_id=self.database.from_db_id(row[1]),
                         originator_version=row[2], stream_digest=bytes(row[3]),
                         global_digest=bytes(row[4]), partition=row[5])

    def _previous(self, partition: str) -> bytes:
        """The partition's digest at the last event counted (at the start, for `since`)."""
        last = self.partitions.get(partition)
        if last is not None:
            return last[1]
        if self.after:
            row = self.database.execute(
                self.cursor,
                "SELECT notification_id, global_digest FROM {event_chain}"
                " WHERE partition_key = ? AND notification_id <= ?"
                " ORDER BY notification_id DESC LIMIT 1",
                (partition, self.after),
            ).fetchone()
            if row is not None:
                self.partitions[partition] = (row["notification_id"],
                                              bytes(row["global_digest"]))
                return bytes(row["global_digest"])
        return GENESIS

    def _stream(self, uuid: UUID) -> tuple[int, bytes] | None:
        oid = self.database.to_db_id(uuid)
        last = self.streams.get(oid)
        if last is None and self.after:
            row = self.database.execute(
                self.cursor,
                "SELECT originator_version, stream_digest FROM {event_chain}"
                " WHERE originator_id = ? AND notification_id <= ?"
                " ORDER BY originator_version DESC LIMIT 1",
                (oid, self.after),
            ).fetchone()
            if row is not None:
                last = (row["originator_version"], bytes(row["stream_digest"]))
        return last

    def _check(self, event: _Event, link: ChainLink) -> Finding | None:
        n = event.notification_id
        if (event.originator_id, event.originator_version) != (
            link.originator_id,
            link.originator_version,
        ):
            return _at(
                event,
                Problem.ORDER_CHANGED,
                f"the chain recorded version {link.originator_version} of stream "
                f"{link.originator_id} at this position",
            )
        last = self._stream(event.originator_id)
        last_version, previous_stream = (0, GENESIS) if last is None else last
        canonical = canonical_bytes(
            event.originator_id, event.originator_version, event.topic, event.state
        )
        expected_stream = sha256(previous_stream + canonical).digest()
        if event.originator_version <= last_version:
            return _at(event, Problem.ORDER_CHANGED, f"it comes after version {last_version}")
        if event.originator_version > last_version + 1 and (
            last is not None or expected_stream != link.stream_digest
        ):
            return Finding(
                problem=Problem.EVENT_MISSING,
                detail=f"the stream jumps to version {event.originator_version} at notification "
                f"{n}: the missing events were removed with their chain rows",
                originator_id=event.originator_id,
                originator_version=last_version + 1,
            )
        position = n.to_bytes(8, "big")
        expected_global = sha256(self._previous(link.partition) + position
                                 + expected_stream).digest()
        if expected_stream != link.stream_digest or expected_global != link.global_digest:
            return self._diagnose(event, link, expected_stream, expected_global)
        self._counted(n, self.database.to_db_id(event.originator_id), event.originator_version,
                      link.stream_digest, link.global_digest, link.partition,
                      sha256(b"\x00" + position + canonical).digest())
        anchor = self.anchors.pop(n, None)
        if anchor is not None and anchor != link.global_digest:
            return _at(
                event,
                Problem.ANCHOR_MISMATCH,
                f"the global digest here is {link.global_digest.hex()}, the anchor says "
                f"{anchor.hex()}: the chain was rewritten up to here",
            )
        return None

    def _diagnose(
        self,
        event: _Event,
        link: ChainLink,
        expected_stream: bytes,
        expected_global: bytes,
    ) -> Finding:
        """Name what disagrees, given that the event, its chain row or both do."""
        n = event.notification_id
        after = self._next_in_partition(link)
        row_follows = global_digest(self._previous(link.partition), n, link.stream_digest) == (
            link.global_digest
        )
        if expected_global == link.global_digest:
            return _at(event, Problem.CHAIN_ALTERED, "the chain row's stream digest was changed")
        if row_follows:
            moved_from = self._moved_from(event, link)
            if moved_from is not None:
                return _at(
                    event,
                    Problem.ORDER_CHANGED,
                    f"the content chained for this version is now stored at version {moved_from}",
                )
            return _at(
                event, Problem.STATE_ALTERED, "its stored topic or state is not what was chained"
            )
        if expected_stream == link.stream_digest:
            if after is None or global_digest(
                link.global_digest, after.notification_id, after.stream_digest
            ) == after.global_digest:
                return _at(
                    event,
                    Problem.EVENT_MISSING,
                    "the global chain skips an event before this one: an event and its chain "
                    "row were removed",
                )
            return _at(event, Problem.CHAIN_ALTERED, "the chain row's global digest was changed")
        return _at(
            event,
            Problem.CHAIN_ALTERED,
            "neither the event nor its chain row follow from the chain before them",
        )

    def _next_in_partition(self, link: ChainLink) -> ChainLink | None:
        row = self.database.execute(
            self.cursor,
            LINKS_SQL.replace("WHERE", "WHERE partition_key = ? AND"),
            (link.partition, link.notification_id, 1),
        ).fetchone()
        return None if row is None else self._link(tuple(row) if self.database.dialect
                                                   == "sqlite" else _values(row))

    def _moved_from(self, event: _Event, link: ChainLink) -> int | None:
        """The version now holding the content chained for `event`'s version, if any."""
        previous = (self._stream(event.originator_id) or (0, GENESIS))[1]
        rows = self.database.execute(
            self.cursor,
            "SELECT originator_version, topic, state FROM {stored_events}"
            " WHERE originator_id = ? ORDER BY originator_version",
            (self.database.to_db_id(event.originator_id),),
        ).fetchall()
        for row in rows:
            if row["originator_version"] == event.originator_version:
                continue
            for topic in {event.topic, row["topic"]}:
                digest = stream_digest(
                    previous,
                    event.originator_id,
                    event.originator_version,
                    topic,
                    bytes(row["state"]),
                )
                if digest == link.stream_digest:
                    return int(row["originator_version"])
        return None

    def _check_tail_anchors(self) -> Finding | None:
        for n in sorted(self.anchors):
            if self.head is None or n > self.head:
                return Finding(
                    problem=Problem.EVENT_MISSING,
                    detail=f"an anchor was published at notification {n} but the store ends at "
                    f"{self.head}: events were removed from the end",
                    notification_id=n,
                )
            return Finding(
                problem=Problem.ANCHOR_MISMATCH,
                detail=f"an anchor was published at notification {n} but no event is stored there",
                notification_id=n,
            )
        return None

    def _rows(self, template: str) -> Iterator[tuple[Any, ...]]:
        """The rows of `template` after the start, page by page, as plain tuples."""
        after, as_tuple = self.after, (tuple if self.database.dialect == "sqlite" else _values)
        while True:
            rows = self.database.execute(self.cursor, template,
                                         (after, self.page_size)).fetchall()
            for row in rows:
                yield as_tuple(row)
            if len(rows) < self.page_size:
                return
            after = rows[-1][0] if self.database.dialect == "sqlite" else (
                rows[-1]["notification_id"])


EVENTS_SQL = (
    "SELECT {nid} AS notification_id, originator_id, originator_version, topic, state"
    " FROM {stored_events} WHERE {nid} > ? ORDER BY {nid} LIMIT ?"
)
LINKS_SQL = (
    "SELECT notification_id, originator_id, originator_version, stream_digest, global_digest,"
    " partition_key FROM {event_chain} WHERE notification_id > ? ORDER BY notification_id"
    " LIMIT ?"
)


def _values(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.values())


def _at(event: _Event, problem: Problem, detail: str) -> Finding:
    return Finding(
        problem=problem,
        detail=detail,
        originator_id=event.originator_id,
        originator_version=event.originator_version,
        notification_id=event.notification_id,
    )


def parse_anchor(text: str) -> tuple[int, bytes]:
    """`NOTIFICATION_ID:HEX_DIGEST`, as printed by `sabot audit verify`."""
    number, _, digest = text.partition(":")
    try:
        return int(number), bytes.fromhex(digest)
    except ValueError:
        raise ValueError(f"an anchor is NOTIFICATION_ID:HEX_DIGEST, not {text!r}") from None


def report_to_json(report: AuditReport) -> bytes:
    return msgspec.json.encode(report)

