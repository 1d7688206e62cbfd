"""Readers woken by the writers' commits (`infra.store.notices`): on SQLite by the writer's own
process, in-process; the views' follower then runs at once instead of at its next look. A
table's live wake-ups through PostgreSQL when there is no Redis."""

from __future__ import annotations

import threading
import time
import uuid

import pytest

from api.live import notice_wake
from domain.game.settings import Variant
from infra.store import notices
from infra.store.live_push import LIVE, woken
from infra.store.notices import Listener
from infra.store.outbox import Wake
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


@pytest.mark.postgres
def test_wake_ups_go_through_postgres_without_redis(postgres_url: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Redis, an API process's wake-ups reach the others as the store's notices
    (`infra.store.live_push.NoticeWake`), which their `Heard` listens to."""
    monkeypatch.delenv("SABOT_BROKER_URL", raising=False)
    heard: list[str] = []
    arrived = threading.Event()

    def on_payload(payload: str) -> None:
        heard.append(payload)
        arrived.set()

    with a_service(postgres_url) as service:
        notice = notice_wake(service)
        assert notice is not None
        service.effects.on(Wake, notice)  # as the API's `wake_through` sends its own
        listener = Listener(service.database, LIVE, lambda: None, on_payload)
        listener.start()
        try:
            deadline = time.monotonic() + 30
            table_id = None
            while not arrived.is_set():  # the listener's LISTEN may come after a first wake-up
                assert time.monotonic() < deadline, "no wake-up heard"
                table_id = open_table(service, f"live-{len(heard)}-{time.monotonic_ns()}",
                                      Variant.PUNTO_BANCO, players=1)
                arrived.wait(0.5)
        finally:
            listener.close()
        [table, version, _] = heard[-1].split(" ")
        assert uuid.UUID(table) == table_id and int(version) >= 1
        assert woken(heard[-1]) is None  # this process's own: its streams were woken already
        assert woken(f"{table} {version} another") == (table_id, int(version))
