"""`sabot tournament ...`: the organiser's commands on the command line mirror HTTP: create
from a preset, register, start, follow, results, publish; the same JSON as the API; each
command that changes a tournament says what it did in one line, by name; refusals are one
line naming what was typed, and exit 1."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import msgspec
import pytest

from api.cli import main
from domain.tournament.aggregate import Tournament
from domain.tournament.presets import PRESETS
from domain.tournament.seating import smallest_field
from infra.services.tables import TableService
from infra.services.tournaments import Director, Tournaments
from tests.e2e.test_logs import KEY, Served


def cli(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> str:
    assert main(["tournament", *args]) == code
    captured = capsys.readouterr()
    return captured.out if code == 0 else captured.err


def as_json(text: str) -> Any:
    return json.loads(text)


def test_an_organiser_runs_a_tournament_from_the_command_line(
        sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--database", sqlite_url]
    presets = as_json(cli(capsys, "presets", "--json", *db))
    assert set(presets) == set(PRESETS) and presets["punto-banco-heats"]["stages"]
    created = cli(capsys, "create", "--preset", "chemin-de-fer-freeze-out", "--name",
                  "club", "--coups-per-round", "2", "--tables", "2", "--seed", "c1", *db)
    assert created.startswith("created tournament club (chemin-de-fer), id ")
    assert created.count("\n") == 1
    tournament_id = created.split()[-1]
    for n in range(6):
        assert cli(capsys, "register", "club", f"p{n}", "--bot", *db) \
            == f"registered house bot p{n} in club\n"
    assert cli(capsys, "register", tournament_id, "ann", *db) == "registered ann in club\n"
    assert cli(capsys, "unregister", "club", "ann", *db) == "unregistered ann from club\n"
    assert cli(capsys, "unregister", "club", "p5", *db) == "unregistered p5 from club\n"
    err = cli(capsys, "register", "club", "p0", *db, code=1)
    assert err.count("\n") == 1 and "[already-registered]" in err
    # an unknown tournament is named as typed, not by the UUID its name stands for
    for typed in ("clubb", "00000000-0000-0000-0000-000000000000"):
        for command in (["register", typed, "p9"], ["start", typed], ["results", typed]):
            assert cli(capsys, *command, *db, code=1) \
                == f"sabot: no tournament {typed!r} [unknown-tournament]\n", command
    assert cli(capsys, "start", "club", *db) \
        == "started club (now running): 5 players drawn to 2 tables\n"
    assert "[out-of-turn]" in cli(capsys, "start", "club", *db, code=1)
    assert cli(capsys, "pause", "club", *db) == "paused club (now paused)\n"
    assert cli(capsys, "resume", "club", *db) == "resumed club (now running)\n"
    assert cli(capsys, "intervene", "club", "correct-chips", "p1", "--delta", "50", "--reason",
               "miscount", *db) == "recorded correct-chips of p1 +50 chips in club: miscount\n"
    shown = as_json(cli(capsys, "show", "club", "--json", *db))
    assert shown["id"] == tournament_id and shown["status"] == "running"
    assert shown["entrants"] == shown["players_left"] == 5
    listed = as_json(cli(capsys, "list", "--json", *db))
    assert [(t["name"], t["status"]) for t in listed] == [("club", "running")]

    service = TableService(url=sqlite_url)
    Director(service).run(Tournaments(service).ids()[0])
    tournaments = Tournaments(service)
    api_shape = msgspec.to_builtins(tournaments.view(tournaments.ids()[0]))
    shown = as_json(cli(capsys, "show", tournament_id, "--json", *db))
    assert shown.keys() == api_shape.keys() and shown["status"] == "finished"
    results = as_json(cli(capsys, "results", "club", "--json", *db))
    assert results["winner"] == shown["winner"] == results["positions"][0]["player"]
    assert sorted(p["position"] for p in results["positions"] if p["tied"] == 1)[0] == 1
    assert sum(p["prize"] for p in results["positions"]) == results["prize_pool"] == 5 * 50
    standings = as_json(cli(capsys, "standings", "club", "--json", *db))
    assert [s["player"] for s in standings] == [p["player"] for p in results["positions"]]
    assert main(["standings", "club", "--json", *db]) == 0
    page_order = as_json(capsys.readouterr().out)
    assert [s["player"] for s in page_order] == [s["player"] for s in standings]
    text = cli(capsys, "results", "club", *db)
    assert f"winner {results['winner']}" in text
    assert results["published"] is False  # provisional until the organiser publishes
    assert cli(capsys, "publish", "club", *db).strip() == "club: results published"
    published = as_json(cli(capsys, "results", "club", "--json", *db))
    assert published["published"] is True and published["published_by"] == "@organiser"
    assert "[results-published]" in cli(capsys, "publish", "club", *db, code=1)


def test_a_format_file_that_cannot_be_played_is_refused(
        sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(msgspec.json.encode(msgspec.structs.replace(
        PRESETS["punto-banco-heats"], prizes=(6000, 3000))))
    err = cli(capsys, "create", "--format", str(bad), "--database", sqlite_url, code=1)
    assert "[tournament-prizes]" in err
    assert "unknown-preset" not in err
    assert cli(capsys, "list", "--database", sqlite_url) == ""


def test_an_empty_name_is_refused_not_replaced(
        sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--name ""` is a name typed empty, refused as the API refuses it, never one invented."""
    for typed in ("", "   "):
        err = cli(capsys, "create", "--name", typed, "--database", sqlite_url, code=1)
        assert "tournament's name" in err
    assert cli(capsys, "list", "--database", sqlite_url) == ""


def test_the_presets_say_their_rounds_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    listed = cli(capsys, "presets")
    assert "(1 rounds)" not in listed
    assert all(f"({s.rounds} round{'s' if s.rounds != 1 else ''})" in listed
               for settings in PRESETS.values() for s in settings.plan() if s.rounds)
    lines = {line.split()[0]: line for line in listed.splitlines()}
    for name, settings in PRESETS.items():  # the smallest field the draw takes
        assert lines[name].endswith(f"; from {smallest_field(settings)} players"), lines[name]


def test_a_tournament_is_cancelled_before_its_start_and_archived_after_its_finish(
        sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--database", sqlite_url]
    for name in ("trial", "club"):
        cli(capsys, "create", "--preset", "chemin-de-fer-freeze-out", "--name", name,
            "--coups-per-round", "2", "--tables", "1", "--seed", "c1", *db)
        for n in range(3):
            cli(capsys, "register", name, f"p{n}", "--bot", *db)
    assert cli(capsys, "cancel", "trial", *db) == "trial: cancelled\n"
    assert "[tournament-cancelled]" in cli(capsys, "cancel", "trial", *db, code=1)
    assert "[out-of-turn]" in cli(capsys, "archive", "club", *db, code=1)  # not finished
    cli(capsys, "start", "club", *db)
    assert "[out-of-turn]" in cli(capsys, "cancel", "club", *db, code=1)  # started
    service = TableService(url=sqlite_url)
    Director(service).run(Tournament.create_id("club"))
    assert as_json(cli(capsys, "show", "club", "--json", *db))["archived"] is False
    assert cli(capsys, "archive", "club", *db) == "club: archived\n"
    assert as_json(cli(capsys, "show", "club", "--json", *db))["archived"] is True
    assert as_json(cli(capsys, "list", "--json", *db)) == []
    every = as_json(cli(capsys, "list", "--all", "--json", *db))
    assert [(t["name"], t["status"]) for t in every] == [("trial", "cancelled"),
                                                         ("club", "finished")]
    assert "trial" in cli(capsys, "list", "--all", *db)


def test_create_takes_the_clocks_the_dealing_and_any_field_over_a_preset(
        sqlite_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    db = ["--database", sqlite_url]
    created = cli(capsys, "create", "--preset", "punto-banco-eight", "--name", "eve",
                  "--dealing", "croupier", "--minutes-per-round", "30", "--bet-seconds", "45",
                  "--set", "tie_break=share", "--set", "prizes=[6000, 4000]", "--json", *db)
    tournament_id = as_json(created)["id"]
    service = TableService(url=sqlite_url)
    try:
        settings = Tournaments(service).state(uuid.UUID(tournament_id)).settings
    finally:
        service.close()
    expected = msgspec.structs.replace(
        PRESETS["punto-banco-eight"], dealing="croupier", minutes_per_round=30, bet_seconds=45,
        tie_break="share", prizes=(6000, 4000))
    assert msgspec.to_builtins(settings) == msgspec.to_builtins(expected)
    with pytest.raises(SystemExit, match="no format field 'colour'"):
        main(["tournament", "create", "--preset", "punto-banco-eight", "--set", "colour=red",
              *db])
    err = cli(capsys, "create", "--preset", "punto-banco-eight", "--bet-seconds", "5000", *db,
              code=1)
    assert "[settings-bet-clock]" in err


def test_sign_in_slips_lead_to_the_address_serve_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`sabot serve` records its public URL in the store; the slips the CLI makes lead there
    (they said port 8000 whatever port serve used), unless `--url` or `SABOT_PUBLIC_URL` says
    another."""
    url = f"sqlite:///{tmp_path}/store.db"
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY)
    monkeypatch.delenv("SABOT_PUBLIC_URL", raising=False)
    db = ["--database", url]
    cli(capsys, "create", "--preset", "punto-banco-heats", "--name", "friday", *db)
    cli(capsys, "register", "friday", "ann", *db)
    served = Served(tmp_path, url)
    try:
        assert not served.url.endswith(":8000")
        made = cli(capsys, "sign-in", "friday", "ann", *db)
        assert f"{served.url}/sign-in?code=" in made, made
    finally:
        served.stop()
    assert "http://room/sign-in?code=" in cli(capsys, "sign-in", "friday", "ann",
                                              "--url", "http://room", *db)
    monkeypatch.setenv("SABOT_PUBLIC_URL", "https://hall.example")
    assert "https://hall.example/sign-in?code=" in cli(capsys, "sign-in", "friday", "ann", *db)
