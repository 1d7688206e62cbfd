"""Benchmarks run only when asked for with `-m bench` (`make bench`), never in `make test`."""

from __future__ import annotations

import pytest


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
