"""Benchmarks run only when asked for with `-m bench` (`make bench`), never in `make test`.

Every benchmark reports its rows to the session's `results`; at the end of the session they
are printed as one table and written as JSON (`SABOT_BENCH_JSON`, default .sabot/bench.json).
"""

from __future__ import annotations

import pytest

from tests.bench.harness import JSON_PATH, QUICK, Results, format_table

RESULTS = Results()


def _benchmarks_selected(config: pytest.Config) -> bool:
    expression = str(config.getoption("-m") or "")
    return "bench" in expression and "not bench" not in expression


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _benchmarks_selected(config):
        return
    skip = pytest.mark.skip(
        reason="a benchmark: run with `make bench` (pytest tests/bench -m bench)"
    )
    for item in items:
        if item.get_closest_marker("bench") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def results() -> Results:
    return RESULTS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RESULTS.rows:
        return
    mode = "quick mode (small sizes)" if QUICK else "full sizes"
    for line in format_table(f"Benchmarks, {mode}: ratio = value / baseline of the same run",
                             RESULTS.table()):
        terminalreporter.write_line(line)
    RESULTS.write_json(JSON_PATH)
    terminalreporter.write_line(f"written to {JSON_PATH}")
