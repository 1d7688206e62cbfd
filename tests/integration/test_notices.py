"""Readers woken by the writers' commits (`infra.store.notices`): on SQLite by the writer's own
process, in-process; the views' follower then runs at once instead of at its next look."""

from __future__ import annotations

from domain.game.settings import Variant
from infra.store import notices
from projections.follower import Follower
from projections.registry import VIEWS
from projections.runner import Runner
from tests.integration.test_table_service import a_service, open_table

LONG = 60.0  # the follower's own look: never reached by the test


def test_a_commit_wakes_the_follower_of_its_process(sqlite_url: str) -> None:
    with a_service(sqlite_url) as service:
        follower = Follower(Runner(service, VIEWS), interval=LONG).start()
        views = notices.positions(service.database, notices.VIEWS)
        try:
            open_table(service, "woken", Variant.PUNTO_BANCO, players=2)
            head = follower.runner.head()
            assert views.wait(head, timeout=LONG / 4), views.position  # well before the look
            assert follower.runner.tracking.position("rotation").notification_id >= head
        finally:
            follower.stop()


def test_positions_are_one_a_store(sqlite_url: str) -> None:
    with a_service(sqlite_url) as first, a_service(sqlite_url) as second:
        assert notices.positions(first.database, notices.COMMITS) is \
            notices.positions(second.database, notices.COMMITS)
        assert notices.positions(first.database, notices.COMMITS) is not \
            notices.positions(first.database, notices.VIEWS)
