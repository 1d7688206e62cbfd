"""Benchmark harness shared by every benchmark: best-of-N timing, a baseline, a printed table.

Machines are noisy, so a benchmark never asserts a duration: it times its work and a fixed
plain-Python workload in the same run, and reports the ratio of the two.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

BASELINE_INTEGERS = 10**6


def measure(fn: Callable[[], object], repeat: int = 5, number: int = 1) -> float:
    """The best of `repeat` timings of `number` calls to `fn`, in seconds per call."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def baseline_workload(integers: int = BASELINE_INTEGERS) -> int:
    """The calibration workload: sum `integers` integers in a plain Python loop."""
    total = 0
    for i in range(integers):
        total += i
    return total


def baseline_seconds(repeat: int = 5) -> float:
    """The best time of the calibration workload on this machine, now."""
    return measure(baseline_workload, repeat=repeat)


def ratio(seconds: float, baseline: float) -> str:
    """A duration as a multiple of the baseline, e.g. `0.42x`."""
    return f"{seconds / baseline:.2f}x"


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def print_table(title: str, rows: Sequence[Mapping[str, object]]) -> None:
    """Print `rows` (dicts sharing the same keys, in column order) as an aligned text table.

    The first column is a label, left-aligned; the others are figures, right-aligned.
    """
    if not rows:
        print(f"\n{title}: no rows")
        return
    headers = list(rows[0])
    cells = [[str(row[h]) for h in headers] for row in rows]
    widths = [max(len(h), *(len(line[i]) for line in cells)) for i, h in enumerate(headers)]
    rule = "-+-".join("-" * w for w in widths)
    print(f"\n{title}")
    print(" | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print(rule)
    for line in cells:
        first, *rest = zip(line, widths, strict=True)
        print(" | ".join([first[0].ljust(first[1]), *(c.rjust(w) for c, w in rest)]))
