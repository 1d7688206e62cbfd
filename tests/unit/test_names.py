"""Names people give: trimmed, 1 to 100 printable characters, and a player's unique within
its tournament whatever the case; a refused name changes nothing."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.limits import trimmed_name
from domain.tournament.commands import RegisterPlayer
from tests.unit.test_tournament import execute, org, refused, registered


def test_a_name_is_trimmed_then_bounded() -> None:
    assert trimmed_name("  Chloé  ") == "Chloé"
    assert trimmed_name("x" * 100) == "x" * 100
    for bad in ("", "   ", "x" * 101, "ann\nbob", "tab\there", "nul\x00"):
        with pytest.raises(RuleViolation) as caught:
            trimmed_name(bad, "player's name")
        assert caught.value.rule == "name-invalid" and "player's name" in caught.value.message


def test_a_player_registers_under_the_trimmed_name_unique_whatever_the_case() -> None:
    tournament = registered(4)
    execute(tournament, RegisterPlayer(player="  chloe ", **org("chloe")))
    assert "chloe" in tournament.state.entrants and " chloe" not in tournament.state.entrants
    for n, (name, rule) in enumerate([("Chloe", "name-taken"), ("CHLOE ", "name-taken"),
                                      ("x" * 500, "name-invalid"), ("   ", "name-invalid"),
                                      (" chloe", "already-registered")]):
        refused(tournament, lambda name=name, n=n: execute(
            tournament, RegisterPlayer(player=name, **org(f"bad-{n}"))), RuleViolation, rule)
