"""The preview against the store: its in-memory run is the tournament the real director plays
through the store with the same seed; and `sabot tournament preview` on the command line."""

from __future__ import annotations

import json

import pytest

from api.cli import main
from domain.tournament.presets import preset
from domain.tournament.settings import TournamentSettings
from infra.services.preview import Run, play_once, step_seconds, summary
from infra.services.tables import TableService
from infra.services.tournaments import Director


def play_on_the_store(url: str, settings: TournamentSettings, players: int, seed: bytes,
                      pace: int) -> Run:
    """The run the preview plays in memory, played by the real director through a store on a
    clock of `pace` seconds a step (the preview's way before the pure engine)."""
    service = TableService(url=url, secret_key=bytes(32))
    try:
        now = [0.0]
        director = Director(service, clock=lambda: now[0])
        tournaments = director.tournaments
        tournament_id = tournaments.create("preview", settings, seed=seed, command_id="create")
        for n in range(players):
            tournaments.register(tournament_id, f"bot-{n + 1:03d}", bot=True,
                                 command_id=f"register-{n}")
        tournaments.start(tournament_id, command_id="start")

        steps: set[tuple[int, int]] = set()  # (round, step): every step started so far

        def tick() -> None:
            state = tournaments.state(tournament_id)
            if state.step is not None and (state.round, state.step.number) not in steps:
                steps.add((state.round, state.step.number))
                now[0] += step_seconds(state, tournaments.tables(tournament_id).values(), pace)

        director.run(tournament_id, on_tick=tick, idle=0.0)
        return summary(service.events_of(tournament_id), pace, now[0])
    finally:
        service.close()


@pytest.mark.parametrize(("name", "players", "overrides"), [
    ("punto-banco-heats", 12, {"coups_per_round": 3, "tables": 2, "minutes_per_round": 2}),
    ("chemin-de-fer-freeze-out", 6, {"coups_per_round": 2}),
])
def test_the_preview_plays_the_tournament_the_director_plays_through_the_store(
        sqlite_url: str, name: str, players: int, overrides: dict[str, int]) -> None:
    settings = preset(name, **overrides)
    in_memory = play_once(settings, players, b"twin", 60)
    assert in_memory == play_on_the_store(sqlite_url, settings, players, b"twin", 60)
    assert in_memory.coups > 0 and in_memory.spreads[0].players == players


def test_sabot_tournament_preview(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tournament", "preview", "--preset", "chemin-de-fer-freeze-out",
                 "--players", "6", "--runs", "1", "--coups-per-round", "2", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["runs"] == 1 and found["coups"]["mean"] > 0
    assert found["spreads"][0]["players"] == 6


def test_a_chemin_de_fer_freeze_out_balances_its_tables_after_a_tie() -> None:
    """A tie leaves the punters' stakes standing for the coup played again; a player the
    director moves then takes theirs back (`TableState.adjust_chips`). The move was refused
    ("chips in play") and the tournament stopped: this run of 60 players moves one so."""
    run = play_once(preset("chemin-de-fer-freeze-out"), 60, (0).to_bytes(4, "big"), 60)
    assert run.spreads[-1].players <= 6 and run.coups > 0
