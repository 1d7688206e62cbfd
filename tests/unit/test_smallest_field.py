"""The smallest field of a format: the fewest entrants its seating draw takes, shown beside
each preset (issue 37: a preset listed no minimum and an organiser learnt it at the start)."""

from __future__ import annotations

import pytest

from domain.tournament.presets import PRESETS
from domain.tournament.seating import field_refusal, smallest_field


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_draw_takes_the_smallest_field_and_refuses_one_player_fewer(name: str) -> None:
    settings = PRESETS[name]
    fewest = smallest_field(settings)
    assert fewest >= 2
    assert field_refusal(settings, fewest) is None
    refused = field_refusal(settings, fewest - 1)
    assert refused is not None and refused.rule in ("too-few-players", "too-many-advancers")


def test_punto_banco_eight_needs_more_players_than_it_advances() -> None:
    settings = PRESETS["punto-banco-eight"]
    heats = settings.plan()[0]
    assert heats.advance is not None
    fewest = smallest_field(settings)
    assert heats.advance.most(1) < fewest  # more play the heats than leave them
