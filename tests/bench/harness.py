"""Benchmark harness shared by every benchmark: best-of-N timing and the one results table.

Machines are noisy, so a benchmark never asserts a duration: it times its work and a
baseline doing the same job in the same run (the raw driver writing the same rows, a bare
litestar route, eventsourcing's own recorder, a plain Python loop), and reports a row to the
session's `Results`: the measure, its value, the baseline's, their ratio and the issue's goal.
`make bench` prints the rows as one table at the end and writes them as JSON.

`SABOT_BENCH_QUICK=1` (`make bench-quick`, run by `.ci/run`) runs the same code paths on
small sizes, so that a benchmark cannot break unnoticed.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

BASELINE_INTEGERS = 10**6
QUICK = os.environ.get("SABOT_BENCH_QUICK", "") not in ("", "0")
JSON_PATH = Path(os.environ.get("SABOT_BENCH_JSON", ".sabot/bench.json"))


def sized(full: int, quick: int) -> int:
    """`full` in `make bench`, `quick` in the quick mode."""
    return quick if QUICK else full


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


@dataclass(frozen=True)
class Goal:
    """What the issue asks of a row: its ratio (or, without a baseline, its value) at least
    or at most `bound`."""

    at_least: bool
    bound: float
    of_ratio: bool = True

    def text(self, unit: str) -> str:
        sign = ">=" if self.at_least else "<="
        return f"{sign} {self.bound:g}{'x' if self.of_ratio else ' ' + unit}"

    def met(self, value: float, ratio: float | None) -> bool:
        figure = ratio if self.of_ratio else value
        if figure is None:
            return False
        return figure >= self.bound if self.at_least else figure <= self.bound


def at_least(bound: float, *, of_ratio: bool = True) -> Goal:
    return Goal(True, bound, of_ratio)


def at_most(bound: float, *, of_ratio: bool = True) -> Goal:
    return Goal(False, bound, of_ratio)


@dataclass
class Row:
    measure: str
    value: float
    unit: str
    baseline: float | None = None
    baseline_label: str = ""
    ratio: float | None = None
    goal: str = ""
    met: bool | None = None


@dataclass
class Results:
    """Every benchmark's rows, in the order they were reported."""

    rows: list[Row] = field(default_factory=list)

    def report(self, measure: str, value: float, unit: str, *,
               baseline: float | None = None, baseline_label: str = "",
               goal: Goal | None = None) -> Row:
        """Add a row. The ratio is value over baseline (both in `unit`: for a rate, higher is
        better; for a duration, lower)."""
        ratio = value / baseline if baseline else None
        row = Row(measure, value, unit, baseline, baseline_label, ratio,
                  goal.text(unit) if goal else "",
                  goal.met(value, ratio) if goal else None)
        self.rows.append(row)
        return row

    def table(self) -> list[dict[str, str]]:
        return [{
            "measure": row.measure,
            "value": f"{_figure(row.value)} {row.unit}",
            "baseline": (f"{_figure(row.baseline)} {row.unit} ({row.baseline_label})"
                         if row.baseline is not None else "-"),
            "ratio": f"{row.ratio:.2f}x" if row.ratio is not None else "-",
            "goal": row.goal or "-",
            "met?": {True: "yes", False: "NO", None: "-"}[row.met],
        } for row in self.rows]

    def write_json(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"quick": QUICK, "rows": [asdict(r) for r in self.rows]},
                                   indent=2) + "\n")


def _figure(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def format_table(title: str, rows: Sequence[Mapping[str, object]]) -> list[str]:
    """`rows` (dicts sharing the same keys, in column order) as aligned text lines.

    The first column is a label, left-aligned; the others are figures, right-aligned.
    """
    if not rows:
        return [f"{title}: no rows"]
    headers = list(rows[0])
    cells = [[str(row[h]) for h in headers] for row in rows]
    widths = [max(len(h), *(len(line[i]) for line in cells)) for i, h in enumerate(headers)]
    lines = [title, " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)),
             "-+-".join("-" * w for w in widths)]
    for line in cells:
        first, *rest = zip(line, widths, strict=True)
        lines.append(" | ".join([first[0].ljust(first[1]), *(c.rjust(w) for c, w in rest)]))
    return lines
