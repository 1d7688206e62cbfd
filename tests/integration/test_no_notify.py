"""Sabot's PostgreSQL recorder sends no NOTIFY with its transactions (nothing listens, and a
NOTIFY serialises every notifying commit of the server, issue 30), and refuses eventsourcing's
LISTEN-based `subscribe`, which would wait for it: the views follow the committed head."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from infra.errors import StoreError
from tests.integration.test_store import ToyApp, a_toy


def test_a_write_notifies_nobody_and_subscribe_is_refused(
        new_database: Callable[[], str]) -> None:
    url = new_database()  # a database of its own: NOTIFY is per database
    with psycopg.connect(url, autocommit=True) as listener, ToyApp(url=url) as app:
        listener.execute('LISTEN "stored_events"')
        listener.execute("NOTIFY \"stored_events\", 'probe'")  # the channel is heard
        app.save(a_toy(), command_id="c-1")
        app.save(a_toy(), command_id="c-2")
        heard = [n.payload for n in listener.notifies(timeout=1.0, stop_after=3)]
        assert heard == ["probe"]
        assert app.recorded_command("c-2") is not None
        with pytest.raises(StoreError, match="subscribe"):
            app.recorder.subscribe(gt=0)
