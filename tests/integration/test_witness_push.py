"""A writer's push to a witness that is down is logged and tried again, from the pusher's own
thread, until the witness (a process of its own, started late) co-signs; the co-signature is
kept beside the checkpoint. The next checkpoint goes with a consistency proof; a writer behind
(the witness co-signed a larger tree) leaves the witness alone."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from infra.store.checkpoint_notes import witness_name
from infra.store.checkpoints import cosigners, last_checkpoint, read_lines
from infra.store.notes import CosignatureVerifier
from infra.store.opening import open_store
from infra.store.signing import create_key
from infra.store.witness_push import Pusher, Witness
from tests.e2e.test_api import free_port
from tests.integration.test_table_service import a_service, play
from tests.integration.test_tamper import Played, played  # noqa: F401 (a fixture)
from tests.integration.test_witness import checkpoint_file


def until(condition: Callable[[], bool], seconds: float = 30.0) -> bool:
    """Whether `condition()` became true within `seconds` (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_a_push_to_a_witness_that_is_down_is_logged_and_retried(
        played: Played, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    path = checkpoint_file(played.url)
    latest = last_checkpoint(path)
    assert latest is not None and latest.note
    key = create_key(tmp_path / "witness.key")
    port = free_port()
    witness = Witness(f"http://127.0.0.1:{port}",
                      CosignatureVerifier(witness_name(key), key.public_key))
    caplog.set_level(logging.WARNING, "sabot.witnesses")
    with open_store(played.url, create=False) as store:
        pusher = Pusher(store.database, path, [witness], retry=0.2, timeout=2.0)
        pusher.checkpointed(latest)  # returns at once; the thread tries, and fails
        assert until(lambda: "not co-signed by witness" in caplog.text)
        assert not cosigners(read_lines(path), latest)
        served = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "audit", "witness", "serve", "--key",
             str(tmp_path / "witness.key"), "--log-key", latest.public_key, "--port",
             str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert until(lambda: bool(cosigners(read_lines(path), latest)))
            with a_service(played.url) as service:  # more events, a larger checkpoint at close
                play(service, played.table_id, 14, prefix="later")
            larger = last_checkpoint(path)
            assert larger is not None and larger.size > latest.size
            pusher.checkpointed(larger)  # from the witness's size: a consistency proof
            assert until(lambda: bool(cosigners(read_lines(path), larger)))
            pusher.close()
            # another writer, behind: the witness co-signed a larger tree, it is left alone
            caplog.clear()
            behind = Pusher(store.database, path, [witness], retry=0.2, timeout=2.0)
            behind.checkpointed(latest)
            behind.close()
            assert behind.push() and "not co-signed" not in caplog.text
        finally:
            served.send_signal(signal.SIGTERM)
            served.communicate(timeout=30)
    lines = read_lines(path)
    assert cosigners(lines, latest) == cosigners(lines, larger) == {key.public_key.hex()}
    assert len([line for line in lines if getattr(line, "size", None) == latest.size
                and getattr(line, "witness", None)]) == 1  # nothing pushed again
