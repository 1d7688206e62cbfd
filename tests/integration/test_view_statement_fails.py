"""A statement of a view that the database refuses, in a batch whose writes travel together
(`Database.pipelined`): the shared batch rolls back whole, the view stops alone at the event
whose rows it could not write, the others go on, and once the cause is gone it passes."""

from __future__ import annotations

from typing import ClassVar
from uuid import UUID

from infra.services.tables import TableService
from infra.store.opening import Store
from projections.registry import NAMES, VIEWS
from projections.rotation import RotationMemo, RotationView
from projections.runner import Runner
from projections.table_fold import Folded
from tests.integration.test_projections import games, service, store  # noqa: F401


class Clashing(RotationView):
    """The rotation view, writing one table's row twice (a duplicate key) at each flush."""

    name = "rotation"
    table: ClassVar[UUID | None] = None

    def flush(self, cursor: object, folded: Folded[RotationMemo]) -> None:
        super().flush(cursor, folded)
        if folded.table_id == type(self).table:
            self.database.execute(cursor, "INSERT INTO {view_rotation} (table_id, table_name,"
                                  " doc) VALUES (?, '', '')", (str(folded.table_id),))


def test_a_refused_statement_stops_its_view_alone(service: TableService,  # noqa: F811
                                                  store: Store) -> None:  # noqa: F811
    tables = games(service)[:2]
    for game in tables:
        game.coups(2)
    Clashing.table = tables[1].table_id
    runner = Runner(store, [Clashing, *(v for v in VIEWS if v.name != "rotation")])
    applied, stopped = runner.catch_up_together(NAMES)
    assert list(stopped) == ["rotation"]
    first = next(n.id for n in store.recorder.select_notifications(start=1, limit=100_000)
                 if n.originator_id == tables[1].table_id)
    assert runner.lag("rotation").stopped_at == first
    assert runner.lag("rotation").position == first - 1
    assert all(runner.lag(name).behind == 0 and applied[name] > 0
               for name in NAMES if name != "rotation")
    Clashing.table = None
    assert runner.catch_up_together(NAMES)[1] == {}
    assert runner.lag("rotation").behind == 0 and runner.lag("rotation").stopped_at is None
