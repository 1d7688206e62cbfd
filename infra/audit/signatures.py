"""The signatures and checkpoints half of `verify`'s walk (`infra.audit.verify` says what
each finding means).

`SignedWalk` is the base of the chain walk (`infra.audit.walk.Walk`): as the walk counts each
event it checks the signature of each transaction's head (only those after the latest
checkpoint a named witness co-signed unless `all_signatures`, `covered` counting the others,
but each partition's head checked whatever covers it), compares the Merkle tree,
the chain and each partition's head with every checkpoint of that size, and at the end names
the unsigned heads, the checkpoints beyond the store and, for `since`, the consistency proof
from the start checkpoint. It trusts the keys of a `Trust` (`infra.store.trust`), and checks
against them the keys the store records (`signing_keys`).

Each transaction signs its last event in each partition it wrote; a transaction's start is
known from the command log (the first event of its command's stream): a partition's events
up to a transaction's start must hold a signature row, or it was deleted. The stored Merkle
tree (`merkle_tree`) must be the tree of its first `size` events. What no checkpoint covers
(events after the latest matching checkpoint, a stored tree folded further than the
checkpoint file shows, no key outside the database) is said in `unanchored`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infra.audit.report import Finding, Problem
from infra.store.chain import GENESIS
from infra.store.checkpoints import Checkpoint, Cosignature, Line, PartitionHead, checkpoints
from infra.store.database import Database
from infra.store.merkle import Frontier, consistency_proof, verify_consistency
from infra.store.partitions import MAIN
from infra.store.signing import head_message, signature_valid
from infra.store.trust import STORE_ONLY, Trust, recorded_key_problems

MAX_SIGNATURE_FINDINGS = 20
TRANSACTION_STARTS_SQL = (
    "SELECT c.notification_id FROM {command_log} l JOIN {event_chain} c"
    " ON c.originator_id = l.originator_id AND c.originator_version = l.first_version"
    " WHERE c.notification_id > ?"
)


class SignedWalk:
    """The signature and checkpoint checks of the walk; the state is the walk's own
    (`infra.audit.walk.Walk.__init__`)."""

    database: Database
    cursor: Any
    previous_global: bytes
    partitions: dict[str, tuple[int, bytes]]
    partition_sizes: dict[str, int]
    count: int
    head: int | None
    tree: Frontier
    findings: list[Finding]
    trust: Trust | None
    verified: int
    covered: int
    matched: int
    proof: int | None
    after: int
    since: Checkpoint | None
    _pending: list[Checkpoint]
    _signatures: dict[int, tuple[str, bytes]]
    _signed: set[int]
    _covered_to: int
    _all: bool
    _covered_heads: list[tuple[int, bytes, Any, int, str, str, bytes]]
    _last: dict[str, tuple[Any, int]]
    _new_leaves: list[bytes]
    _starts: set[int]  # the notification ids at which a logged command's transaction starts
    _unsigned: dict[str, int]  # by partition: its first event no signature row covers yet
    _stored_tree: tuple[int, int, bytes] | None  # merkle_tree: size, head, frontier
    _anchored: int  # the size of the latest checkpoint the store matches
    _named: dict[str, int]  # signature findings by problem, each named at most 20 times
    unanchored: list[str]

    def expect_signed(self, trust: Trust, lines: Sequence[Line], witnesses: Sequence[bytes],
                      all_signatures: bool, since: int | None) -> None:
        """Check signatures and checkpoints too, trusting `trust`'s keys; the signatures a
        checkpoint co-signed by one of `witnesses` (public keys) covers are vouched for."""
        self.trust = trust
        self._all = all_signatures
        for why in trust.refused:
            self._flag(Problem.HAND_OVER_REFUSED, why, check="checkpoints")
        valid = [c for c in sorted(checkpoints(list(lines)), key=lambda c: (c.size, c.time))
                 if self._valid(c)]
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
            self._anchored = start.size
        self._pending = valid
        self._covered_to = _witnessed_head(lines, valid, witnesses)
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
        self._starts = {row["notification_id"] for row in self.database.execute(
            self.cursor, TRANSACTION_STARTS_SQL, (self.after,)).fetchall()}
        tree = self.database.execute(
            self.cursor, "SELECT size, head, frontier FROM {merkle_tree} WHERE id = 1"
        ).fetchone()
        self._stored_tree = None if tree is None else (tree["size"], tree["head"],
                                                       bytes(tree["frontier"]))
        if self.trust.source != STORE_ONLY:
            for key, why in recorded_key_problems(self.database, self.cursor, self.trust.keys):
                replaced = key in self.trust.keys
                self._flag(Problem.KEY_REPLACED if replaced else Problem.UNTRUSTED_KEY,
                           f"{why} ({self.trust.source})")
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
        if self._stored_tree is not None and self._stored_tree[0] == self.count:
            self._compare_stored_tree()  # an empty store's, or the start checkpoint's size
        for key, n in sorted(untrusted.items(), key=lambda item: item[1]):
            self._flag(Problem.UNTRUSTED_KEY, f"transactions from notification {n} on are "
                       f"signed by key {key}, which is not trusted ({self.trust.source})",
                       notification_id=n)

    def _signed_event(self, n: int, digest: bytes, oid: Any, version: int,
                      partition: str) -> None:
        """Check the event's transaction's signature, if it ends here; name a transaction
        before it whose signature row is gone; compare the stored tree at its size."""
        if n in self._starts and partition in self._unsigned:
            first = self._unsigned.pop(partition)
            if self._room(Problem.SIGNATURE_MISSING):
                self._flag(Problem.SIGNATURE_MISSING, "the transaction that wrote this event "
                           "(and the partition's events after it, up to another transaction's "
                           "start) has no signature row: it was deleted",
                           notification_id=first, partition=partition)
        self._unsigned.setdefault(partition, n)
        if n in self._signatures:
            self._signed.add(n)
            self._unsigned.pop(partition, None)
            self._check_signature(n, digest, oid, version, partition)
        if self._stored_tree is not None and self._stored_tree[0] == self.count:
            self._compare_stored_tree()

    def _compare_stored_tree(self) -> None:
        """The stored tree (`merkle_tree`) is the tree of the store's first `size` events."""
        assert self._stored_tree is not None
        size, head, frontier = self._stored_tree
        try:
            stored = Frontier.from_bytes(size, frontier)
            why = (f"its frontier folds to root {stored.root().hex()[:16]}… ending at "
                   f"notification {head}; the store's first {size} events give root "
                   f"{self.tree.root().hex()[:16]}… ending at notification {self.head or 0}")
        except ValueError as error:
            stored, why = None, f"it is malformed ({error})"
        if stored is None or stored.nodes != self.tree.nodes or head != (self.head or 0):
            self._flag(Problem.TREE_ALTERED, f"the stored Merkle tree (merkle_tree) of {size} "
                       f"events does not hold: {why}: the next checkpoint would sign a "
                       "forged tree", check="checkpoints", notification_id=head or None)

    def _check_signature(self, n: int, digest: bytes, oid: Any, version: int,
                         partition: str) -> None:
        key, signature = self._signatures.pop(n)
        if n <= self._covered_to and not self._all:
            self.covered += 1
            self._covered_heads.append((n, digest, oid, version, partition, key, signature))
            return
        if not self._holds(key, signature, n, digest) and self._room(
                Problem.SIGNATURE_INVALID):
            self._bad_signature(n, oid, version, partition)

    def _room(self, problem: Problem) -> bool:
        """Whether to name one more of `problem` (the first `MAX_SIGNATURE_FINDINGS` each)."""
        self._named[problem] = self._named.get(problem, 0) + 1
        return self._named[problem] <= MAX_SIGNATURE_FINDINGS

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

    def _check_covered_partition_heads(self) -> None:
        """Each partition's head signature is checked even when a checkpoint covers it: the
        one signature that vouches for the whole partition, one a partition."""
        heads = {partition: head for partition, (head, _) in self.partitions.items()}
        flagged = {f.notification_id for f in self.findings
                   if f.problem == Problem.SIGNATURE_INVALID}
        for n, digest, oid, version, partition, key, signature in self._covered_heads:
            if heads.get(partition) == n and n not in flagged and not self._holds(
                    key, signature, n, digest):
                self._bad_signature(n, oid, version, partition)

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
                self._anchored = max(self._anchored, checkpoint.size)

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
        self._check_covered_partition_heads()
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
        self._say_unanchored()
        if self.since is not None:
            proof = consistency_proof(self.since.tree(), self._new_leaves)
            self.proof = len(proof)
            if not verify_consistency(self.since.size, self.tree.size,
                                      bytes.fromhex(self.since.root), self.tree.root(), proof):
                self._flag(Problem.INCONSISTENT, f"the store's tree of {self.tree.size} events "
                           f"does not extend the checkpoint of size {self.since.size}",
                           check="checkpoints")

    def _say_unanchored(self) -> None:
        """What no checkpoint, or no key outside the database, vouches for."""
        assert self.trust is not None
        if self.trust.source == STORE_ONLY:
            self.unanchored.append("no key outside the database vouches for the signatures: "
                                   "pass the operator's public key (--public-key)")
        if self.count > self._anchored:
            self.unanchored.append(
                f"{self.count - self._anchored} events (the store's last, after the first "
                f"{self._anchored}) are covered by no checkpoint: their signatures are checked, "
                "but nothing outside the database holds them yet")
        if self._stored_tree is not None and self._stored_tree[0] > self.count:
            self._flag(Problem.TREE_ALTERED, f"the stored Merkle tree (merkle_tree) says "
                       f"{self._stored_tree[0]} events were folded; the store holds "
                       f"{self.count}: events were removed, or the tree altered",
                       check="checkpoints")
        elif self._stored_tree is not None and self._stored_tree[0] > self._anchored:
            self.unanchored.append(
                f"the stored Merkle tree says {self._stored_tree[0]} events were folded for a "
                f"checkpoint; the checkpoint file shows {self._anchored}: a checkpoint file "
                "deleted, emptied or not this store's")


def _witnessed_head(lines: Sequence[Line], valid: list[Checkpoint],
                    witnesses: Sequence[bytes]) -> int:
    """The last notification of the latest of the `valid` checkpoints that one of the
    `witnesses` validly co-signed (0: none did)."""
    named = {key.hex() for key in witnesses}
    cosigned: dict[tuple[int, str, str], list[Cosignature]] = {}
    for line in lines:
        if isinstance(line, Cosignature) and line.public_key in named:
            cosigned.setdefault((line.size, line.root, line.time), []).append(line)
    for checkpoint in reversed(valid):
        if any(line.valid_for(checkpoint) for line in cosigned.get(
                (checkpoint.size, checkpoint.root, checkpoint.time), [])):
            return checkpoint.head
    return 0
