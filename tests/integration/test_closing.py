"""Closing is explicit: an application the garbage collector takes does no I/O (no last
checkpoint, no wait for the writers in flight), and `close()` writes its last checkpoint.

Issue 30: a collected application closed itself in `__del__`, whose checkpoint waited for the
writers in flight, one of them the very thread the collector ran in: it waited for itself.
"""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

import pytest

from domain.game.settings import Variant
from infra.store.checkpoints import checkpoints, read_lines
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table

pytestmark = pytest.mark.postgres


def test_a_collected_application_writes_nothing_and_a_closed_one_its_last_checkpoint(
        postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.checkpoints"
    monkeypatch.setenv("SABOT_CHECKPOINTS", str(path))
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", "3600")  # no timer fires during the test
    service = a_service(postgres_url)
    open_table(service, "forgotten", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
    checkpointer = service.recorder.checkpointer()  # type: ignore[attr-defined]
    collected = weakref.ref(service)
    del service
    gc.collect()
    assert collected() is None  # taken by the collector...
    assert not path.exists()  # ...which wrote no checkpoint
    with a_service(postgres_url) as closed:
        open_table(closed, "closed", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
        events = closed.database.read_one("SELECT count(*) AS n FROM {stored_events}")["n"]
    written = checkpoints(read_lines(path))
    assert [c.size for c in written] == [events]  # written by close(), every event in it
    checkpointer.close()  # the forgotten one's, explicitly: nothing new to sign
    checkpointer.database.datastore.close()
    assert len(checkpoints(read_lines(path))) == 1
