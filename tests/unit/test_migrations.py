"""The migrations' list: numbered 1, 2, ... in order (`upgrade` applies `STEPS[version:]`),
each with a title, and the refusal of a newer store in one line."""

from __future__ import annotations

from infra.store import migrations


def test_steps_are_numbered_in_order_from_one() -> None:
    assert [step.VERSION for step in migrations.STEPS] == list(
        range(1, len(migrations.STEPS) + 1))
    assert len(migrations.STEPS) == migrations.LATEST
    assert all(step.TITLE and "\n" not in step.TITLE for step in migrations.STEPS)


def test_a_newer_store_is_refused_in_one_line() -> None:
    error = migrations.SchemaTooNew(migrations.LATEST + 3)
    assert str(error) == (f"store schema {migrations.LATEST + 3} is newer than this Sabot "
                          f"({migrations.LATEST}): upgrade Sabot")
