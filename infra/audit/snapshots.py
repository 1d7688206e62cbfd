"""An audit check: every stored snapshot equals its aggregate rebuilt from the chained events.

Snapshots are not chained (they are derived data, and may be deleted at any time), yet a
repository trusts the latest snapshot when it loads an aggregate: an altered snapshot would
silently change what the next command decides on. This check replays each snapshotted
aggregate once, from its first event up to its latest snapshot's version, and compares the
state with each of its snapshots as the replay passes that version: linear in the stream's
length, however many snapshots it holds. Each event is applied by its own `mutate` (not
eventsourcing's `project_aggregate`, whose per-event `isinstance` against a runtime-checkable
protocol cost more than the replay itself).

It imports the aggregates' classes (from the snapshot topics), so it runs where the domain
code is installed: `verify(url, extra_checks=[snapshots_match_events])`, or
`sabot audit verify --snapshots`. It reads through `store.database`, so within `verify` it
sees the one snapshot of the store the walk verified (`Database.snapshot`).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby
from typing import Any

from eventsourcing.persistence import PersistenceError, StoredEvent

from infra.audit.report import Finding
from infra.store.database import Database
from infra.store.opening import Store

SNAPSHOT_ALTERED = "snapshot altered"
SNAPSHOT_UNREADABLE = "snapshot unreadable"
PAGE = 5000
STREAM_SQL = (
    "SELECT originator_version, topic, state FROM {stored_events} WHERE originator_id = ?"
    " AND originator_version > ? AND originator_version <= ? ORDER BY originator_version"
    " LIMIT ?"
)


def snapshots_match_events(store: Store) -> Iterator[Finding]:
    database = store.database
    for oid, group in groupby(_snapshots(database), key=lambda s: s.originator_id):
        snapshots = list(group)  # in version order
        aggregate: Any = None
        for stored, event in _events(store, oid, snapshots[-1].originator_version):
            aggregate = event.mutate(aggregate)
            while snapshots and snapshots[0].originator_version <= stored.originator_version:
                yield from _compare(store, snapshots.pop(0), aggregate,
                                    stored.originator_version)
        for left in snapshots:  # beyond the stream's last event
            yield from _compare(store, left, None, 0)


snapshots_match_events.name = "snapshots"  # type: ignore[attr-defined]


def _compare(store: Store, stored: StoredEvent, replayed: Any,
             at: int) -> Iterator[Finding]:
    try:
        snapshot: Any = store.mapper.to_domain_event(stored)
        from_snapshot = snapshot.mutate(None)
    except Exception as error:
        yield _finding(SNAPSHOT_UNREADABLE, f"{error}", stored)
        return
    if replayed is None or at != stored.originator_version or (
            _state(replayed) != _state(from_snapshot)):
        yield _finding(
            SNAPSHOT_ALTERED,
            "the snapshot differs from the aggregate rebuilt from its events; delete it "
            "(it is derived data) and investigate",
            stored,
        )


def _events(store: Store, oid: Any, last: int) -> Iterator[tuple[StoredEvent, Any]]:
    """The stream's events up to version `last`, stored and decoded, page by page."""
    database = store.database
    after = 0
    while True:
        with database.transaction(write=False) as cursor:
            rows = database.execute(cursor, STREAM_SQL,
                                    (database.to_db_id(oid), after, last, PAGE)).fetchall()
        for row in rows:
            stored = StoredEvent(originator_id=oid,
                                 originator_version=row["originator_version"],
                                 topic=row["topic"], state=bytes(row["state"]))
            yield stored, store.mapper.to_domain_event(stored)
        if len(rows) < PAGE:
            return
        after = rows[-1]["originator_version"]


def _snapshots(database: Database) -> list[StoredEvent]:
    try:
        with database.transaction(write=False) as cursor:
            rows = database.execute(
                cursor,
                "SELECT originator_id, originator_version, topic, state FROM {stored_snapshots}"
                " ORDER BY originator_id, originator_version",
            ).fetchall()
    except PersistenceError:
        return []  # no application of this store takes snapshots
    return [
        StoredEvent(
            originator_id=database.from_db_id(row["originator_id"]),
            originator_version=row["originator_version"],
            topic=row["topic"],
            state=bytes(row["state"]),
        )
        for row in rows
    ]


def _state(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}


def _finding(problem: str, detail: str, stored: StoredEvent) -> Finding:
    return Finding(
        problem=problem,
        detail=detail,
        originator_id=stored.originator_id,  # type: ignore[arg-type]
        originator_version=stored.originator_version,
        check="snapshots",
    )
