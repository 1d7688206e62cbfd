"""What `sabot audit verify` reports: each `Finding` (a problem, named from `Problem`, and
where: stream, version, notification, partition), the `AuditReport` of a verify, the
`AuditCheck`s that plug into it, and the anchors it prints and reads back.

`infra.audit.verify` says what each problem means; `sabot audit verify` prints the report
(`api.commands.audit.describe`) or its JSON (`report_to_json`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from enum import StrEnum
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import PersistenceError

from infra.store.database import Database
from infra.store.opening import Store


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
    HAND_OVER_REFUSED = "hand-over refused"
    CHECKPOINT_MISMATCH = "checkpoint mismatch"
    STORE_TRUNCATED = "store truncated"
    INCONSISTENT = "checkpoints inconsistent"
    SIGNATURE_MISSING = "signature missing"
    KEY_REPLACED = "signing key replaced"
    TREE_ALTERED = "stored tree altered"
    MISATTRIBUTED = "not sent by the actor"
    COMMAND_REUSED = "command reused"
    SEAL_INVALID = "command seal invalid"
    SENDER_ERASED = "sender erased"
    UNATTRIBUTED = "unattributed"  # a notice, not a discrepancy (`NOTICES`)


NOTICES = frozenset({Problem.UNATTRIBUTED})
"""What a check reports that is said, not held against the store."""


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
    `covered` those vouched for instead by a matching checkpoint a witness co-signed;
    `checkpoints` counts the checkpoints matched, `trust` says where the trusted keys (`keys`,
    ids, and `public_keys`, hex) came from; `since` is
    the checkpoint size an incremental verify started from, `proof` the length of its
    consistency proof to the store's tree. `unanchored` says, each in a sentence, what no
    checkpoint or key outside the database vouches for (intact but unanchored: `sabot audit
    verify` exits 3). `notices` are what the checks say without holding it against the store
    (`NOTICES`: e.g. events of people from commands recorded before senders were)."""

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
    unanchored: tuple[str, ...] = ()
    notices: tuple[Finding, ...] = ()


AuditCheck = Callable[[Store], Iterable[Finding]]


def read_rows(database: Database, template: str, params: Any = ()) -> list[Any]:
    """A check's read: the rows, or none when the table does not exist (nothing of that kind
    was ever written)."""
    try:
        with database.transaction(write=False) as cursor:
            return list(database.execute(cursor, template, params).fetchall())
    except PersistenceError:
        return []


PAGE = 5000  # stored events read at a time by a check that walks them all


def stored_event_rows(database: Database) -> Iterator[Any]:
    """Every stored event's row (`n`, `originator_id`, `originator_version`, `state`), in
    notification order, read a page at a time."""
    after = 0
    while True:
        rows = read_rows(database, "SELECT {nid} AS n, originator_id, originator_version, state"
                         " FROM {stored_events} WHERE {nid} > ? ORDER BY {nid} LIMIT ?",
                         (after, PAGE))
        yield from rows
        if len(rows) < PAGE:
            return
        after = rows[-1]["n"]


def parse_anchor(text: str) -> tuple[int, bytes]:
    """`NOTIFICATION_ID:HEX_DIGEST`, as printed by `sabot audit verify`."""
    number, _, digest = text.partition(":")
    try:
        return int(number), bytes.fromhex(digest)
    except ValueError:
        raise ValueError(f"an anchor is NOTIFICATION_ID:HEX_DIGEST, not {text!r}") from None


def report_to_json(report: AuditReport) -> bytes:
    return msgspec.json.encode(report)

