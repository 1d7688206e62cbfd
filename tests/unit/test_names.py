"""Names people give: trimmed, 1 to 100 printable characters, and a player's unique within
its tournament whatever the case; a refused name changes nothing."""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.limits import name_key, taken_by, trimmed_name
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


def test_a_name_is_nfc_and_a_slash_or_a_control_character_is_named() -> None:
    decomposed = "e\u0301mile"
    assert trimmed_name(decomposed) == "\u00e9mile"
    for bad, named in (("a/b", "'/'"), ("bell\x07", "U+0007"), ("a/b\x1b", "U+001B, '/'")):
        with pytest.raises(RuleViolation) as caught:
            trimmed_name(bad, "player's name")
        assert caught.value.message == f"a player's name may not contain {named}"


def test_names_differing_in_form_case_or_width_are_one_name() -> None:
    assert name_key("\uff41nn") == name_key("ANN") == name_key("ann")
    assert taken_by("FRIDAY-EVE", ["friday-eve", "other"]) == "friday-eve"
    assert taken_by("ann", ["ann"]) is None  # itself: a re-entry, not another's
    tournament = registered(4)
    execute(tournament, RegisterPlayer(player="\u00e9mile", **org("emile")))
    execute(tournament, RegisterPlayer(player="ann", **org("ann")))
    for n, (name, rule) in enumerate([("e\u0301mile", "already-registered"),
                                      ("\u00c9MILE", "name-taken"),
                                      ("\uff41nn", "name-taken")]):
        refused(tournament, lambda name=name, n=n: execute(
            tournament, RegisterPlayer(player=name, **org(f"same-{n}"))), RuleViolation, rule)
    assert [p for p in tournament.state.entrants if not p.startswith("p0")] == [
        "\u00e9mile", "ann"]
