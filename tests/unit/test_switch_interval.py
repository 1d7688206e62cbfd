"""A `sabot` process hands the GIL over every `SWITCH_INTERVAL`, not CPython's 5 ms, so that its
threads waiting on the network get it back soon after their answer; a caller of `main` in its
own process (a test) keeps its own."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from api.cli import SWITCH_INTERVAL, main


@pytest.fixture
def interval() -> Iterator[float]:
    before = sys.getswitchinterval()
    yield before
    sys.setswitchinterval(before)


def test_a_sabot_process_passes_the_gil_sooner(interval: float,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGAPPNAME", "test")
    assert main(["odds", "punto-banco", "--json"]) == 0
    assert sys.getswitchinterval() == interval
    monkeypatch.setattr(sys, "argv", ["sabot", "odds", "punto-banco", "--json"])
    assert main() == 0
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL) != interval
