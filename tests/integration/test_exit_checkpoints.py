"""Every command that writes events leaves, at its exit, a checkpoint covering them: `sabot
play` (whose store used to be closed under its last checkpoint: `no checkpoint written ...:
Pool is closed`), `sabot demo` and `sabot tournament` commands, run as the processes they
are, with a checkpoint timer that fires near their end (5 s: `sabot play`'s 40 coups take
about 6 s; before the fix, its last checkpoint was lost about one run in two).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import main
from infra.store.checkpoints import checkpoint_path, last_checkpoint
from infra.store.opening import open_store
from tests.integration.test_audit import sql


def sabot(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    settings = {**os.environ, "SABOT_CHECKPOINT_SECONDS": "5", **env}
    settings.pop("SABOT_BROKER_URL", None)  # the demo's embedded broker and worker
    done = subprocess.run([sys.executable, "-m", "api.cli", *args], cwd=cwd, env=settings,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "no checkpoint written" not in done.stderr, done.stderr
    return done


def covered_at_exit(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The last checkpoint holds every stored event; verify finds it all anchored."""
    with open_store(url, create=False) as store:
        path = checkpoint_path(store.database)
    assert path is not None
    last = last_checkpoint(path)
    ((events,),) = sql(url, "SELECT COUNT(*) FROM stored_events")
    assert events > 0 and last is not None and last.size == events
    assert main(["audit", "verify", "--database", url]) == 0, capsys.readouterr().out


def test_sabot_play_checkpoints_at_exit(database_url: str, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # PostgreSQL's key and checkpoints: .sabot/ here
    sabot("play", "--coups", "40", "--seed", "2a", "--json", "--database", database_url,
          cwd=tmp_path)
    covered_at_exit(database_url, capsys)


def test_sabot_demo_checkpoints_at_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"sqlite:///{tmp_path}/demo.db"
    sabot("demo", "--tables", "2", "--players", "8", "--coups-per-round", "4", "--seed", "0c",
          "--json", "--database", url, cwd=tmp_path)
    covered_at_exit(url, capsys)


def test_sabot_tournament_commands_checkpoint_at_exit(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    db = ["--database", f"sqlite:///{tmp_path}/club.db"]
    sabot("tournament", "create", "--preset", "chemin-de-fer-freeze-out", "--name", "club",
          "--tables", "2", "--seed", "c1", *db, cwd=tmp_path)
    covered_at_exit(db[1], capsys)
    sabot("tournament", "register", "club", "p0", "--bot", *db, cwd=tmp_path)
    covered_at_exit(db[1], capsys)
