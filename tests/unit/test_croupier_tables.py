"""A tournament of house- and croupier-dealt tables: with `dealing: automatic`, croupiers
deal the first `croupier_tables` tables by number and the house the others; with `dealing:
croupier`, every table; a count beyond the tournament's tables is refused by name."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.tournament.formats import Dealing, Stage
from tests.unit.test_formats import LEVELS, Run, fmt

ONE_ROUND = Stage(name="only", rounds=1, limits=LEVELS)


def test_the_first_tables_by_number_are_the_croupiers() -> None:
    settings = fmt(ONE_ROUND, tables=3, croupier_tables=2).check()
    assert [settings.croupier_deals(n) for n in (1, 2, 3)] == [True, True, False]
    assert not fmt(ONE_ROUND, tables=3).check().croupier_deals(1)  # none by default


def test_with_croupier_dealing_every_table_is_the_croupiers_whatever_the_count() -> None:
    settings = fmt(ONE_ROUND, tables=3, dealing=Dealing.CROUPIER, croupier_tables=1).check()
    assert all(settings.croupier_deals(n) for n in (1, 2, 3))


def test_a_drawn_table_is_read_by_its_name() -> None:
    run = Run(fmt(ONE_ROUND, tables=2, croupier_tables=1), 8).start()
    assert run.s.tables == ["cup-table-1", "cup-table-2"]
    assert [run.s.croupier_deals(name) for name in run.s.tables] == [True, False]
    assert not run.s.croupier_deals("cup-playoff-1-1")  # the house deals a play-off


@pytest.mark.parametrize("count", [-1, 3])
def test_a_count_outside_the_tables_is_refused_by_name(count: int) -> None:
    with pytest.raises(RuleViolation) as caught:
        fmt(ONE_ROUND, tables=2, croupier_tables=count).check()
    assert caught.value.rule == "tournament-croupier-tables"
