"""A format's preview: whole tournaments of bots on throwaway stores, summarised."""

from __future__ import annotations

import json

import pytest

from api.cli import main
from domain.presets import preset
from infra.preview import preview


def test_a_preview_reports_duration_stacks_at_the_cuts_and_play_offs() -> None:
    heats = preset("punto-banco-heats", coups_per_round=3, tables=2)
    seen: list[int] = []
    found = preview(heats, 12, 2, seed=b"look", pace=60, on_run=lambda run: seen.append(run.coups))
    assert found.runs == len(found.each) == len(seen) == 2
    assert found.coups.mean == 3 * 4 and found.minutes.mean == 12.0  # 4 rounds of 3 coups
    assert [s.stage for s in found.spreads] == ["heats", "heats", "semi-final", "final"]
    players = [s.players for s in found.spreads]
    assert players[0] == 12 and players == sorted(players, reverse=True) and players[-1] == 4
    assert all(s.smallest <= s.median <= s.largest for s in found.spreads)
    assert found.runs_with_playoff <= found.runs and found.playoffs >= found.runs_with_playoff
    again = preview(heats, 12, 2, seed=b"look", pace=60)
    assert again.each == found.each  # the same seeds play the same runs


def test_sabot_tournament_preview(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "preview", "--preset", "chemin-de-fer-freeze-out",
                 "--players", "6", "--runs", "1", "--coups-per-round", "2", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["runs"] == 1 and found["coups"]["mean"] > 0
    assert found["spreads"][0]["players"] == 6
