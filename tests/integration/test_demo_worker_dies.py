"""`sabot demo` whose worker is killed outright: it says "no worker alive", naming the
tournament that waits, and exits 1 within 10 s, instead of waiting for a step's timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOUND = 10.0


def test_the_demo_says_no_worker_alive_when_its_worker_dies(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SABOT_BROKER_URL": ""}
    demo = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "demo", "--seed", "0f", "--coups-per-round", "400",
         "--database", f"sqlite:///{tmp_path}/demo.db"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    log = tmp_path / ".sabot" / "demo-worker.log"
    try:
        deadline = time.monotonic() + 60
        while not (log.exists() and "director started" in log.read_text()):
            assert demo.poll() is None and time.monotonic() < deadline, "no director started"
            time.sleep(0.1)
        [worker] = [int(pid) for pid in
                    Path(f"/proc/{demo.pid}/task/{demo.pid}/children").read_text().split()]
        time.sleep(1.0)  # the director is playing
        os.kill(worker, signal.SIGKILL)
        killed = time.monotonic()
        _, err = demo.communicate(timeout=30)
        took = time.monotonic() - killed
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    print(f"no worker alive said {took:.1f} s after the kill")
    assert demo.returncode == 1, err
    assert "no worker alive: tournament demo-chemin-de-fer-0f waits for a director" in err
    assert "Traceback" not in err
    assert took < BOUND, f"said after {took:.1f} s"
