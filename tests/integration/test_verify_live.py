"""`sabot audit verify` and the scheduled audit on a live store: two `sabot play` processes
write to the same store while both run again and again; neither ever reports a discrepancy.

Before verify read one snapshot (`Database.snapshot`), its checks each read the store afresh:
an event committed after the walk's head was found by the command-log check before (or
without) its log row, and reported as `command not logged`. Exit 3 (intact, some events not
yet in a checkpoint) is what a live store shows between checkpoints: not a discrepancy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from api.cli import main
from api.commands.audit import UNANCHORED
from infra.store.opening import open_store
from workers.audits import verify_store


def writers(url: str, cwd: Path) -> list[subprocess.Popen[str]]:
    env = {**os.environ, "SABOT_CHECKPOINT_SECONDS": "1"}
    env.pop("SABOT_BROKER_URL", None)
    return [subprocess.Popen([sys.executable, "-m", "api.cli", "play", "--coups", "60",
                              "--seed", seed, "--json", "--database", url],
                             cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for seed in ("1a", "2b")]


@pytest.mark.parametrize("store", ["postgres_url", "sqlite_url"])
def test_verify_while_two_processes_write_reports_no_discrepancy(
        store: str, request: pytest.FixtureRequest, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    url = str(request.getfixturevalue(store))
    monkeypatch.chdir(tmp_path)  # the store's key and checkpoints: .sabot/ here, shared
    monkeypatch.setenv("SABOT_DATABASE_URL", url)
    open_store(url).close()  # the schema, before two writers race to create it
    processes = writers(url, tmp_path)
    runs, heads = 0, set()
    try:
        while any(p.poll() is None for p in processes) or runs < 2:
            code = main(["audit", "verify", "--database", url])
            out = capsys.readouterr().out
            assert code in (0, UNANCHORED), out
            summary = verify_store()
            assert summary["ok"], summary
            heads.add(summary["head_notification_id"])
            runs += 1
    finally:
        for process in processes:
            _, err = process.communicate(timeout=300)
            assert process.returncode == 0, err
    assert len(heads) > 2  # verified while the store grew, not only before or after
    assert main(["audit", "verify", "--database", url]) == 0, capsys.readouterr().out
