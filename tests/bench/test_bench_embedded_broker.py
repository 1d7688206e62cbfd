"""Soak of the embedded broker: kombu's `filesystem://` against Sabot's `sabotfs://`.

One producer process writes messages as fast as it can while this process drains the same
folder: kombu's own transport lets the consumer move and read a file before it is fully
written (kombu issue 1551: a half-read message, JSONDecodeError); `sabotfs://` writes aside
and renames, so every message arrives whole. Then `DEMOS` embedded demos run in a row (each
with its real worker), and none may crash. The table gives messages lost or broken for each
transport, and the demos' mean time with its ratio to the calibration workload.
`SABOT_SOAK_DEMOS` sets the demos for a long soak (default: 3, quick mode 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty

import pytest
from kombu import Connection

from tests.bench.harness import Results, at_most, baseline_seconds, sized

MESSAGES = sized(3000, 500)
DEMOS = int(os.environ.get("SABOT_SOAK_DEMOS", sized(3, 1)))
PRODUCER = """
import sys
from kombu import Connection
import workers.embedded_broker  # registers sabotfs://
folder = sys.argv[2]
options = {"data_folder_in": folder, "data_folder_out": folder,
           "control_folder": folder + "-control"}
with Connection(sys.argv[1] + "://", transport_options=options) as connection:
    queue = connection.SimpleQueue("soak")
    for n in range(int(sys.argv[3])):
        queue.put({"n": n, "padding": "x" * 4096})
"""


def soak(transport: str, folder: Path) -> dict[str, int]:
    folder.mkdir()
    producer = subprocess.Popen([sys.executable, "-c", PRODUCER, transport, str(folder),
                                 str(MESSAGES)])
    # the exchange's bindings go beside the messages, not into the working directory
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder),
               "control_folder": f"{folder}-control"}
    whole, broken = 0, 0
    with Connection(f"{transport}://", transport_options=options) as connection:
        queue = connection.SimpleQueue("soak")
        while producer.poll() is None or any(folder.iterdir()):
            try:
                queue.get(block=False).ack()
                whole += 1
            except Empty:
                time.sleep(0.0005)
            except (json.JSONDecodeError, ValueError):
                broken += 1
    return {"whole": whole, "broken": broken, "lost": MESSAGES - whole - broken}


@pytest.mark.bench
def test_bench_embedded_broker(tmp_path: Path, results: Results) -> None:
    import workers.embedded_broker  # noqa: F401 - registers sabotfs://

    rows = [soak("filesystem", tmp_path / "kombu"), soak("sabotfs", tmp_path / "sabot")]
    baseline = baseline_seconds()
    crashed, seconds = 0, []
    for n in range(DEMOS):
        home = tmp_path / f"demo-{n}"
        home.mkdir()
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "api.cli", "demo", "--seed", f"{n:02x}",
                               "--json", "--database", f"sqlite:///{home}/demo.db"],
                              cwd=home, capture_output=True, text=True, timeout=600,
                              env={k: v for k, v in os.environ.items()
                                   if k != "SABOT_BROKER_URL"})
        seconds.append(time.perf_counter() - started)
        crashed += done.returncode != 0
    for transport, row in zip(("kombu filesystem://", "sabotfs://"), rows, strict=True):
        results.report(f"embedded broker soak, {MESSAGES:,} messages: broken or lost, "
                       f"{transport}", row["broken"] + row["lost"], "messages",
                       goal=at_most(0, of_ratio=False) if transport == "sabotfs://" else None)
    results.report(f"embedded demo, mean of {DEMOS} in a row ({crashed} crashed)",
                   sum(seconds) / len(seconds), "s", baseline=baseline,
                   baseline_label="sum 10^6 integers")
    sabot = rows[1]
    assert sabot["whole"] == MESSAGES and sabot["broken"] == 0
    assert crashed == 0
