"""verify has the garbage collector run less often while it runs (its full passes over verify's
own bookkeeping cost a quarter of a complete verify at 100,000 events: the bench
`tests/bench/test_bench_verify_linear.py`), and gives the process its thresholds back, also
when two verifies overlap in two threads or a check fails."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import Any

from infra.audit.report import Finding
from infra.audit.verify import YOUNG_COLLECTION_EVERY, verify
from tests.integration.test_audit import Filled, filled  # noqa: F401 (a fixture)


def test_verify_collects_less_often_and_restores_the_thresholds(
        filled: Filled) -> None:  # noqa: F811
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []
    inside = threading.Barrier(2, timeout=30)

    def check(store: Any) -> Iterator[Finding]:
        inside.wait()  # both verifies are running
        seen.append(gc.get_threshold())
        inside.wait()
        return iter(())

    def failing(store: Any) -> Iterator[Finding]:
        raise RuntimeError("a check that fails")

    other = threading.Thread(target=lambda: verify(filled.url, extra_checks=[check]))
    other.start()
    report = verify(filled.url, extra_checks=[check, failing])
    other.join()
    assert report.findings[-1].check == "failing"  # named, not raised
    assert [threshold[0] for threshold in seen] == [YOUNG_COLLECTION_EVERY] * 2
    assert gc.get_threshold() == before
