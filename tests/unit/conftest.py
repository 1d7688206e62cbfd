"""The unit suite's process: the cyclic garbage collector skips what collection imported.

Collecting the suite imports the project, hypothesis and every test module (some 120,000
objects a worker), which live to the end of the run; every full collection afterwards walked
them all again, and collection itself ran some 1,400 collections over the growing heap. So the
collector is off while the suite is collected, and what survives it is then frozen
(`gc.freeze`: moved where no collection looks). Garbage made by the tests is collected as
before: a `__del__` that raises still fails the test that caused it.
"""

from __future__ import annotations

import gc

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Off in a process that collects: a worker, or pytest without workers (xdist's
    controller collects nothing, so never reaches `pytest_collection_finish`)."""
    if hasattr(config, "workerinput") or not config.getoption("numprocesses", None):
        gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collected: what is garbage already goes, the rest is frozen, the collector is on."""
    gc.collect()
    gc.freeze()
    gc.enable()
