"""An audit check: every stored snapshot equals its aggregate rebuilt from the chained events.

Snapshots are not chained (they are derived data, and may be deleted at any time), yet a
repository trusts the latest snapshot when it loads an aggregate: an altered snapshot would
silently change what the next command decides on. This check replays each snapshotted
aggregate from its events up to the snapshot's version and compares the two states.

It imports the aggregates' classes (from the snapshot topics), so it runs where the domain
code is installed: `verify(url, extra_checks=[snapshots_match_events])`, or
`sabot audit verify --snapshots`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from eventsourcing.application import project_aggregate
from eventsourcing.persistence import PersistenceError, StoredEvent

from infra.audit.report import Finding
from infra.store.opening import Store

SNAPSHOT_ALTERED = "snapshot altered"
SNAPSHOT_UNREADABLE = "snapshot unreadable"


def snapshots_match_events(store: Store) -> Iterator[Finding]:
    for stored in _snapshots(store):
        oid, version = stored.originator_id, stored.originator_version
        try:
            snapshot: Any = store.mapper.to_domain_event(stored)
            from_snapshot = snapshot.mutate(None)
        except Exception as error:
            yield _finding(SNAPSHOT_UNREADABLE, f"{error}", stored)
            continue
        replayed = project_aggregate(None, store.events.get(oid, lte=version))  # type: ignore[arg-type]
        if replayed is None or _state(replayed) != _state(from_snapshot):
            yield _finding(
                SNAPSHOT_ALTERED,
                "the snapshot differs from the aggregate rebuilt from its events; delete it "
                "(it is derived data) and investigate",
                stored,
            )


snapshots_match_events.name = "snapshots"  # type: ignore[attr-defined]


def _snapshots(store: Store) -> list[StoredEvent]:
    database = store.database
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
