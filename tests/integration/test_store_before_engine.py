"""A store written before the engine was made faster (issue 39) still verifies.

`fixtures/store_before_engine.tar.gz` was written by commit 966c1af (`sabot play`, seed 39,
three players: punto banco 6 coups, with a snapshot at version 100; chemin de fer, à deux
tableaux and the family game 3 coups each), with `SABOT_SECRET_KEY` = "39" x 32, its signing
key and checkpoint file beside it. Today's `sabot audit verify` recomputes its chains, tree,
signatures and checkpoints and replays its snapshotted table through today's engine.
"""

from __future__ import annotations

import sqlite3
import tarfile
from pathlib import Path

import pytest

from api.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "store_before_engine.tar.gz"


def test_a_store_written_before_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with tarfile.open(FIXTURE) as archive:
        archive.extractall(tmp_path, filter="data")
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as connection:
        snapshots = connection.execute("SELECT count(*) FROM stored_snapshots").fetchone()[0]
    assert snapshots == 1
    monkeypatch.setenv("SABOT_SECRET_KEY", "39" * 32)
    assert main(["audit", "verify", "--database", f"sqlite:///{db}"]) == 0
    out = capsys.readouterr().out
    assert "events:  316 verified" in out
    assert "checkpoints: 4 matched" in out
    assert out.rstrip().endswith("intact")
