"""`verify`: recompute the hash chain from the stored events and name the first break.

The walk reads, in one consistent read transaction, the stored events and the `event_chain`
rows in notification order, recomputes each event's stream and global digests
(`infra.chain`) and stops at the first disagreement, which it names:

| problem              | what was found                                                      |
|----------------------|---------------------------------------------------------------------|
| `state altered`      | an event's stored topic or state is not what was chained            |
| `order changed`      | events moved: an event holds another's content, version or position |
| `event missing`      | a chained event is gone (or an event and its chain row both are)    |
| `event not in chain` | a stored event has no chain row (inserted by hand, or its row gone) |
| `chain row altered`  | a chain row's digests do not follow from the events and the chain   |
| `anchor mismatch`    | the chain differs from a digest published earlier (an anchor)       |

Without anchors, someone who can write to the database can still rewrite the events *and*
recompute the whole chain after them: publish the head digest (printed by
`sabot audit verify`) somewhere they cannot reach, and pass it back as an anchor.

Further checks (e.g. re-dealing shoes from revealed seeds) plug in as `extra_checks`:
callables taking the opened `Store` and returning `Finding`s. They run only when the chain
is intact, since they read the events the chain vouches for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from typing import Generic, NamedTuple, TypeVar
from uuid import UUID

import msgspec
from eventsourcing.persistence import PersistenceError

from infra import ledger
from infra.chain import GENESIS, ChainLink, global_digest, stream_digest
from infra.database import Database
from infra.errors import NotAStore
from infra.settings import redact_url
from infra.store import Store, one_line, open_store


class Problem(StrEnum):
    STATE_ALTERED = "state altered"
    ORDER_CHANGED = "order changed"
    EVENT_MISSING = "event missing"
    NOT_IN_CHAIN = "event not in chain"
    CHAIN_ALTERED = "chain row altered"
    ANCHOR_MISMATCH = "anchor mismatch"
    CHECK_FAILED = "check failed"


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """Something wrong, and where: the stream, version and notification id when known."""

    problem: str
    detail: str
    originator_id: UUID | None = None
    originator_version: int | None = None
    notification_id: int | None = None
    check: str = "chain"

    def where(self) -> str:
        parts = []
        if self.originator_id is not None:
            parts.append(f"stream {self.originator_id}")
        if self.originator_version is not None:
            parts.append(f"version {self.originator_version}")
        if self.notification_id is not None:
            parts.append(f"notification {self.notification_id}")
        return ", ".join(parts) or "the store"


class AuditReport(msgspec.Struct, frozen=True, kw_only=True):
    """`events`, `streams` and the head (`head_notification_id`, `head_digest`: the global
    digest there, hex) cover what was verified: the whole store when the chain is intact,
    else what precedes `first_break`. `checks` names the checks that ran."""

    ok: bool
    events: int
    streams: int
    head_notification_id: int | None
    head_digest: str
    first_break: Finding | None
    findings: tuple[Finding, ...]
    checks: tuple[str, ...]
    seconds: float


AuditCheck = Callable[[Store], Iterable[Finding]]
T = TypeVar("T")


class _Event(NamedTuple):
    notification_id: int
    originator_id: UUID
    originator_version: int
    topic: str
    state: bytes


def verify(
    target: str | Store,
    *,
    extra_checks: Sequence[AuditCheck] = (),
    anchors: Mapping[int, bytes] | None = None,
    page_size: int = 5000,
) -> AuditReport:
    """Check the whole store at `target` (a URL or an opened `Store`); never writes."""
    started = time.perf_counter()
    store = open_store(target, create=False) if isinstance(target, str) else target
    try:
        walk = _Walk(store.database, dict(anchors or {}), page_size)
        try:
            first_break = walk.run()
        except PersistenceError as error:
            raise NotAStore(
                f"{redact_url(store.url)} is not a readable Sabot store: {one_line(error)}"
            ) from error
        findings: list[Finding] = []
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
    )


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
        self.previous_global = GENESIS
        self.streams: dict[UUID, tuple[int, bytes]] = {}
        self.count = 0
        self.head: int | None = None

    def run(self) -> Finding | None:
        with self.database.transaction(write=False) as cursor:
            self.cursor = cursor
            events = _Peekable(self._events())
            links = _Peekable(self._links())
            while (event := events.peek()) is not None or links.peek() is not None:
                link = links.peek()
                if event is not None and (
                    link is None or event.notification_id < link.notification_id
                ):
                    return _at(event, Problem.NOT_IN_CHAIN, "no chain row records this event")
                assert link is not None
                if event is None or link.notification_id < event.notification_id:
                    return Finding(
                        problem=Problem.EVENT_MISSING,
                        detail="the chain records this event but it is not stored",
                        originator_id=link.originator_id,
                        originator_version=link.originator_version,
                        notification_id=link.notification_id,
                    )
                events.pop()
                links.pop()
                finding = self._check(event, link, links.peek())
                if finding is not None:
                    return finding
            return self._check_tail_anchors()

    def _check(self, event: _Event, link: ChainLink, after: ChainLink | None) -> Finding | None:
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
        last = self.streams.get(event.originator_id)
        last_version, previous_stream = (0, GENESIS) if last is None else last
        expected_stream = stream_digest(
            previous_stream, event.originator_id, event.originator_version, event.topic, event.state
        )
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
        expected_global = global_digest(self.previous_global, n, expected_stream)
        if expected_stream != link.stream_digest or expected_global != link.global_digest:
            return self._diagnose(event, link, after, expected_stream, expected_global)
        self.previous_global = link.global_digest
        self.streams[event.originator_id] = (event.originator_version, link.stream_digest)
        self.count += 1
        self.head = n
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
        after: ChainLink | None,
        expected_stream: bytes,
        expected_global: bytes,
    ) -> Finding:
        """Name what disagrees, given that the event, its chain row or both do."""
        n = event.notification_id
        row_follows = global_digest(self.previous_global, n, link.stream_digest) == (
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

    def _moved_from(self, event: _Event, link: ChainLink) -> int | None:
        """The version now holding the content chained for `event`'s version, if any."""
        previous = self.streams.get(event.originator_id, (0, GENESIS))[1]
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

    def _events(self) -> Iterator[_Event]:
        after = 0
        while True:
            rows = self.database.execute(
                self.cursor,
                "SELECT {nid} AS notification_id, originator_id, originator_version, topic, state"
                " FROM {stored_events} WHERE {nid} > ? ORDER BY {nid} LIMIT ?",
                (after, self.page_size),
            ).fetchall()
            for row in rows:
                yield _Event(
                    row["notification_id"],
                    self.database.from_db_id(row["originator_id"]),
                    row["originator_version"],
                    row["topic"],
                    bytes(row["state"]),
                )
            if len(rows) < self.page_size:
                return
            after = rows[-1]["notification_id"]

    def _links(self) -> Iterator[ChainLink]:
        after = 0
        while True:
            links = ledger.select_links(self.database, self.cursor, after, self.page_size)
            yield from links
            if len(links) < self.page_size:
                return
            after = links[-1].notification_id


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
