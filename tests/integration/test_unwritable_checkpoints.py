"""A writer whose checkpoint file cannot be written (here its folder is a file) keeps writing
events, keeps trying, and says so (`infra.store.checkpointer.anchoring`, what `/ready` and
`/metrics` read: `tests/e2e/test_unanchored.py` has them over HTTP): its failures count up, the
reason is the file system's, one error is logged for the minute. Once the file can be
written, the next attempt anchors every event."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from domain.game.settings import Variant
from infra.store.checkpointer import anchoring
from infra.store.checkpoints import last_checkpoint
from tests.integration.test_audit import sql
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table

RETRY = 0.2


def test_a_writer_that_cannot_write_its_checkpoint_file_keeps_trying_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the checkpoints' folder should be")
    path = blocker / "store.checkpoints"
    monkeypatch.setenv("SABOT_CHECKPOINTS", str(path))
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", str(RETRY))
    url = f"sqlite:///{tmp_path}/store.db"
    service = a_service(url)
    try:
        with caplog.at_level(logging.ERROR, logger="sabot.checkpoints"):
            open_table(service, "t", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
            deadline = time.monotonic() + 20
            while not any(a.database == "store" and a.failures >= 3 for a in anchoring()):
                assert time.monotonic() < deadline, anchoring()
                time.sleep(0.05)
        (state,) = [a for a in anchoring() if a.database == "store"]
        assert state.failing is not None and "Not a directory" in state.failing
        assert state.age is None  # no checkpoint was ever written
        errors = [r for r in caplog.records if "no checkpoint written" in r.getMessage()]
        assert len(errors) == 1, errors  # one a minute, though it failed three times

        blocker.unlink()  # the folder can be made now
        deadline = time.monotonic() + 20
        while next(a for a in anchoring() if a.database == "store").failing is not None:
            assert time.monotonic() < deadline, anchoring()
            time.sleep(0.05)
        ((events,),) = sql(url, "SELECT COUNT(*) FROM stored_events")
        last = last_checkpoint(path)
        assert last is not None and last.size == events
    finally:
        service.close()
    assert not [a for a in anchoring() if a.database == "store"]  # closed: no longer counted
