"""The views' tracking rows as a batch moves them: locked and read in one statement, moved
together to one position, each keeping the time of the last event it applied; refused for
all of them if one would stand still or go back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from eventsourcing.persistence import IntegrityError

from infra.store.opening import open_store
from projections.tracking import ViewTracking


@pytest.fixture
def tracking(database_url: str) -> Iterator[ViewTracking]:
    with open_store(database_url) as store:
        rows = ViewTracking(store.database, "sabot")
        with store.database.transaction(write=True) as cursor:
            rows.create_table(cursor)
            rows.ensure(cursor, "recall")
        yield rows


def test_a_batch_moves_its_views_together_or_not_at_all(tracking: ViewTracking) -> None:
    first, later = datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC)
    database = tracking.database
    with database.transaction(write=True) as cursor:
        assert tracking.lock(cursor, ["rotation", "recall"]) == {"recall": 0, "rotation": 0}
        tracking.advance(cursor, 5, {"recall": first, "rotation": None}, later)
    with database.transaction(write=True) as cursor:
        assert tracking.lock(cursor, ["recall", "rotation"]) == {"recall": 5, "rotation": 5}
        tracking.advance(cursor, 7, {"recall": None}, later)
    with pytest.raises(IntegrityError, match="recall"), \
            database.transaction(write=True) as cursor:
        tracking.advance(cursor, 6, {"recall": later, "rotation": later}, later)
    assert tracking.notification_ids(["recall", "rotation"]) == {"recall": 7, "rotation": 5}
    recall, rotation = tracking.position("recall"), tracking.position("rotation")
    assert (recall.event_at, recall.applied_at) == (first, later)
    assert rotation.event_at is None
