"""What a store written before today's bounds (or a broken view) cannot do any more: an event a
view cannot apply stops that view alone, at that event, says so everywhere and resumes after
a fix; a snapshot that fails after its command committed does not fail the command."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from eventsourcing.utils import get_topic

from api.cli import main
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from infra.services.tables import TableService, seeds_from
from infra.store.opening import open_store
from projections.registry import NAMES, VIEWS
from projections.rotation import RotationView, rotation
from projections.runner import Runner
from projections.view import Event, ProjectionFailed

SECRET = bytes(range(32))
SEATED = get_topic(Table.PlayerSeated)
FOLDING = [view.name for view in VIEWS if SEATED in view.topics]
"""The views that fold tables, so that a seat they cannot hold stops them."""


@pytest.fixture
def service(database_url: str) -> Any:
    svc = TableService(url=database_url, secret_key=SECRET)
    svc.seed_source = seeds_from(b"poison")
    yield svc
    svc.close()


def seated(service: TableService, name: str, players: int = 2) -> Any:
    table_id = service.open_table(name, TableSettings.default(Variant.PUNTO_BANCO),
                                  command_id=f"{name}:open").table_id
    for i in range(players):
        service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{i}",
                                               player=f"p{i}", chips=1000))
    return table_id


def poison(service: TableService, table_id: Any) -> int:
    """A seat of 2^63 chips written past the domain, as a store written before the bounds
    holds one: the table can no longer be folded."""
    version = service.table(table_id).version
    event = Table.PlayerSeated(originator_id=table_id, originator_version=version + 1,
                               timestamp=datetime.now(UTC), player="huge",
                               chips=2**63, side=None, standing=False, actor="@organiser",
                               command_id="poison")
    service.save(event, command_id="poison")
    return max(n.id for n in service.recorder.select_notifications(start=1, limit=10_000))


def test_a_poison_event_stops_its_view_alone_says_so_and_resumes(
    service: TableService, database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    good = seated(service, "good")
    bad = seated(service, "bad")
    poisoned = poison(service, bad)
    service.execute(good, c.SeatPlayer(command_id="late", player="late", chips=10))
    runner = Runner(service, VIEWS, batch_size=50)
    assert FOLDING
    for name in FOLDING:  # each stops there, on its own
        with pytest.raises(ProjectionFailed, match=f"event {poisoned}"):
            runner.catch_up(name)
        lag = runner.lag(name)
        assert (lag.position, lag.stopped_at) == (poisoned - 1, poisoned)  # all before it
        assert "chips" in (lag.error or "")
    found = rotation(service.database, good)
    assert found is not None and len(found.seated) == 2  # the rows before it still answer

    db = ["--database", database_url]
    assert main(["projections", "status", *db]) == 2
    assert f"STOPPED at event {poisoned}" in capsys.readouterr().out
    assert main(["projections", "rebuild", "--json", *db]) == 2
    out, err = capsys.readouterr()
    assert set(json.loads(out)) == set(NAMES) - set(FOLDING)  # the others are rebuilt
    assert f"stopped at event {poisoned}" in err
    assert len(err.strip().splitlines()) == len(FOLDING)  # one line a stopped view

    class Fixed(RotationView):
        """The fix: this view now passes over the seat it cannot hold."""

        name = "rotation"

        def apply(self, cursor: Any, events: Sequence[Event]) -> None:
            super().apply(cursor, [e for e in events if e.originator_id != bad])

    fixed = Runner(service, [Fixed], batch_size=50)
    fixed.catch_up("rotation")
    lag = fixed.lag("rotation")
    assert lag.stopped_at is None and lag.behind == 0
    found = rotation(service.database, good)
    assert found is not None and len(found.seated) == 3
    assert [f.projection for f in fixed.failures()] == [n for n in sorted(FOLDING)
                                                        if n != "rotation"]


def test_a_failed_snapshot_does_not_fail_its_committed_command(
    service: TableService, monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    table_id = seated(service, "snap", players=1)
    monkeypatch.setattr(type(service), "snapshotting_intervals", {Table: 3})

    def overflow(*_: Any, **__: Any) -> None:
        raise OverflowError("int too big to convert")

    assert service.snapshots is not None
    monkeypatch.setattr(service.snapshots, "put", overflow)
    recorded = service.execute(table_id, c.SeatPlayer(command_id="third", player="p9",
                                                      chips=5))
    assert recorded.version == 3 and recorded.events
    with open_store(database_url, create=False) as store:
        assert store.recorder.recorded_command("third") is not None
    assert len(service.table(table_id).state.seats) == 2
