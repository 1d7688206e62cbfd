"""The chain half of `verify`'s walk: `Walk` reads, in one read transaction, the stored
events and the `event_chain` rows in notification order, recomputes each event's stream and
global digests and its Merkle leaf, and names the first disagreement (`infra.audit.verify`
says what each problem means). Its base, `infra.audit.signatures.SignedWalk`, checks the
signatures and the checkpoints as the walk counts each event.
"""

from __future__ import annotations

from collections.abc import Iterator
from hashlib import sha256
from typing import Any, Generic, TypeVar
from uuid import UUID

import msgspec

from infra.audit.report import Finding, Problem
from infra.audit.signatures import SignedWalk
from infra.store import ledger
from infra.store.chain import GENESIS, ChainLink, canonical_bytes, global_digest, stream_digest
from infra.store.checkpoints import Checkpoint
from infra.store.database import Database
from infra.store.merkle import Frontier
from infra.store.trust import Trust

T = TypeVar("T")


_Event = ledger.StoredRow


class _Peekable(Generic[T]):
    def __init__(self, items: Iterator[T]) -> None:
        self._items = items
        self._next: T | None = next(items, None)

    def peek(self) -> T | None:
        return self._next

    def pop(self) -> T | None:
        item, self._next = self._next, next(self._items, None)
        return item

class Walk(SignedWalk):
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
        self._starts: set[int] = set()
        self._unsigned: dict[str, int] = {}
        self._stored_tree: tuple[int, int, bytes] | None = None
        self._anchored = 0
        self._named: dict[str, int] = {}
        self.unanchored: list[str] = []

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
            self._signed_event(n, digest, oid, version, partition)
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
