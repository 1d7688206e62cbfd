"""Benchmark of the command line's start: `sabot --help` against `python -c "import
argparse"`, both fresh processes of the same interpreter, best of several runs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bench.harness import Results, at_most, sized

SABOT = Path(sys.executable).with_name("sabot")


def best_start(argv: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.bench
def test_bench_sabot_help(results: Results) -> None:
    repeat = sized(7, 3)
    argparse_only = best_start([sys.executable, "-c", "import argparse"], repeat)
    sabot_help = best_start([str(SABOT), "--help"], repeat)
    results.report("sabot --help", sabot_help * 1000, "ms", baseline=argparse_only * 1000,
                   baseline_label="python -c 'import argparse'", goal=at_most(3))
