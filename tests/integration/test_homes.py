"""Tournaments spread over several PostgreSQL databases (`SABOT_PARTITION_DATABASES`): each
partition in the home the directory records, read back from any process, projected and
verified across every home. The homes are real databases created on the test server."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from api.cli import main
from domain.game.settings import TableSettings, Variant
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.errors import ServiceUnavailable
from infra.services.tables import TableService
from infra.store.database import Database
from infra.store.homes import MAIN_HOME, SETTING, BadHomes, chosen_home, directory
from infra.store.outbox import Wake
from infra.store.routing import SpansHomes
from projections.registry import VIEWS
from projections.runner import Runner
from tests.integration.test_outbox import a_table
from tests.integration.test_projections import dump
from tests.integration.test_tournament_run import run_tournament

CUPS = ("cup-a", "cup-b", "cup-c", "cup-d")
COMPARED_VIEWS = ("standings", "rotation")


@pytest.fixture
def homes(new_database: Callable[[], str], postgres_url: str, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The main store (a schema of the test database) and two home databases, east and west,
    named by the setting; checkpoints and keys in a folder of the test's own."""
    monkeypatch.chdir(tmp_path)
    urls = {"east": new_database(), "west": new_database()}
    monkeypatch.setenv(SETTING, ",".join(f"{name}={url}" for name, url in urls.items()))
    return {MAIN_HOME: postgres_url, **urls}


def play(url: str) -> dict[str, uuid.UUID]:
    """The four cups, each played to its end by the director; their ids by name."""
    cups = {}
    for name in CUPS:
        tournaments, cups[name], _ = run_tournament(url, name.encode(), players=10, name=name)
        tournaments.service.close()  # its pools: one a home
    return cups


def rows(url: str, sql: str) -> list[Any]:
    base, _, schema = url.partition("?schema=")
    with psycopg.connect(base) as connection:
        if schema:
            connection.execute(f'SET search_path TO "{schema}"')
        return list(connection.execute(sql).fetchall())


def test_each_tournament_lives_in_the_home_its_directory_records(homes: dict[str, str]) -> None:
    cups = play(homes[MAIN_HOME])
    with TableService(url=homes[MAIN_HOME]) as service:
        recorded = directory(service.database)
    partitions = {name: str(cup) for name, cup in cups.items()}
    assert all(recorded[p] == chosen_home(p, ["main", "east", "west"])
               for p in partitions.values())
    assert len(set(recorded[p] for p in partitions.values())) >= 2  # spread, not piled up
    for home, url in homes.items():
        held = {key for (key,) in rows(url, "SELECT DISTINCT partition_key FROM event_chain")}
        assert held == {p for p in partitions.values() if recorded[p] == home}, home
        mine = [p for p in partitions.values() if recorded[p] == home]
        events = rows(url, "SELECT COUNT(*) FROM stored_events")[0][0]
        assert (events > 0) == bool(mine), home


def test_any_process_reads_each_tournament_from_its_home(homes: dict[str, str]) -> None:
    cups = play(homes[MAIN_HOME])
    with TableService(url=homes[MAIN_HOME]) as fresh:  # a process that never wrote them
        for name, cup in cups.items():
            tournament = fresh.load(cup, "tournament")
            assert isinstance(tournament, Tournament)
            assert tournament.state.phase.value == "finished", name
            assert len(tournament.state.results()) == 10


def test_a_save_spanning_two_homes_is_refused_and_writes_nothing(homes: dict[str, str]) -> None:
    with TableService(url=homes[MAIN_HOME]) as service:
        owners = {}
        for name in (f"cup-{n}" for n in range(40)):  # two tournaments of different homes
            home = chosen_home(str(Tournament.create_id(name)), ["main", "east", "west"])
            owners.setdefault(home, name)
            if len(owners) == 2:
                break
        def tables() -> list[Table]:
            return [Table(name=f"table-of-{cup}", settings=TableSettings.default(
                Variant.PUNTO_BANCO), tournament=cup, actor="@organiser",
                command_id=f"open-{cup}") for cup in owners.values()]

        with pytest.raises(SpansHomes, match="cannot span databases"):
            service.save(*tables(), command_id="both")
        assert not any(service.exists(table.id) for table in tables())
        assert service.recorded_command("both") is None
        for n, table in enumerate(tables()):  # each apart is fine
            service.save(table, command_id=f"one-{n}")
            assert service.exists(table.id)


def test_adding_a_home_moves_nothing_already_written(homes: dict[str, str],
                                                     new_database: Callable[[], str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cups = play(homes[MAIN_HOME])
    with TableService(url=homes[MAIN_HOME]) as service:
        before = directory(service.database)
    north = new_database()
    monkeypatch.setenv(SETTING, f"east={homes['east']},west={homes['west']},north={north}")
    with TableService(url=homes[MAIN_HOME]) as service:
        for cup in cups.values():
            assert service.load(cup, "tournament").state.phase.value == "finished"
        later = [f"late-{n}" for n in range(12)]
        for name in later:
            service.save(Table(name=name, settings=TableSettings.default(Variant.PUNTO_BANCO),
                               tournament=None, actor="@organiser", command_id=f"open-{name}"),
                         command_id=f"open-{name}")
        after = directory(service.database)
    assert {k: v for k, v in after.items() if k in before} == before
    assert "north" in {after[str(Table.create_id(name))] for name in later}


def test_views_over_every_home_equal_those_of_one_database(
        homes: dict[str, str], new_database: Callable[[], str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    play(homes[MAIN_HOME])
    with TableService(url=homes[MAIN_HOME]) as spread:
        runner = Runner(spread, VIEWS, batch_size=200)
        runner.rebuild_together([view.name for view in VIEWS])
        spread_views = {name: dump(runner, name) for name in COMPARED_VIEWS}
        assert runner.lag("standings").behind == 0
    monkeypatch.delenv(SETTING)
    single = new_database()
    play(single)
    with TableService(url=single) as alone:
        runner = Runner(alone, VIEWS, batch_size=200)
        runner.rebuild_together([view.name for view in VIEWS])
        assert {name: dump(runner, name) for name in COMPARED_VIEWS} == spread_views
    assert spread_views["standings"]["view_standings"]  # something to compare


def verify(url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(["audit", "verify", "--json", "--database", url])
    return code, json.loads(capsys.readouterr().out)


def test_verify_checks_every_home_and_names_the_home_of_a_break(
        homes: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    cups = play(homes[MAIN_HOME])
    with TableService(url=homes[MAIN_HOME]) as service:
        recorded = directory(service.database)
    code, report = verify(homes[MAIN_HOME], capsys)
    assert code == 0, report
    assert sorted(report["homes"]) == ["east", "west"]
    assert report["ok"] and all(home["ok"] for home in report["homes"].values())
    assert sum(home["events"] for home in report["homes"].values()) + report["events"] > 0
    victim = next(name for name, cup in cups.items() if recorded[str(cup)] != MAIN_HOME)
    partition = str(cups[victim])
    home = recorded[partition]
    with psycopg.connect(homes[home]) as connection:
        connection.execute(
            "UPDATE stored_events SET state = state || '\\x00'::bytea WHERE notification_id ="
            " (SELECT MIN(notification_id) FROM event_chain WHERE partition_key = %s"
            " AND originator_version > 3)", (partition,))
    code, report = verify(homes[MAIN_HOME], capsys)
    assert code == 1
    broken = report["homes"][home]
    assert not broken["ok"] and broken["first_break"]["partition"] == partition
    others = [h for h in report["homes"] if h != home]
    assert all(report["homes"][h]["ok"] for h in others) and report["ok"]


def test_a_bad_setting_is_one_line_without_its_password(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    TableService(url=postgres_url).close()  # a store to verify
    for value, said in (("east=postgresql://sabot:s3cret@db/x,west", "NAME=URL"),
                        ("east=mysql://sabot:s3cret@db/x", "must be a PostgreSQL URL"),
                        ("main=postgresql://sabot:s3cret@db/x", "not 'main'"),
                        ("a=postgresql://db/x,a=postgresql://db/y", "named twice")):
        monkeypatch.setenv(SETTING, value)
        assert main(["audit", "verify", "--database", postgres_url]) == 2
        err = capsys.readouterr().err
        assert said in err and "s3cret" not in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1, err
        with pytest.raises(BadHomes, match=said):
            TableService(url=postgres_url)


def test_a_home_that_does_not_answer_is_named_without_its_password(
        postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SETTING, "east=postgresql://sabot:s3cret@127.0.0.1:1/x")
    with pytest.raises(ServiceUnavailable) as raised:
        TableService(url=postgres_url)
    said = str(raised.value)
    assert "127.0.0.1:1/x" in said and "s3cret" not in said, said
    assert rows(postgres_url, "SELECT COUNT(*) FROM information_schema.tables WHERE"
                f" table_schema = '{postgres_url.partition('?schema=')[2]}'")[0][0] == 0


def test_a_tournament_in_a_home_exports_and_its_coups_give_dossiers_checked_offline(
        homes: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cups = play(homes[MAIN_HOME])
    with TableService(url=homes[MAIN_HOME]) as service:
        recorded = directory(service.database)
    name, cup = next((n, c) for n, c in cups.items() if recorded[str(c)] != MAIN_HOME)
    home_url = homes[recorded[str(cup)]]
    table = next(str(oid) for (oid,) in rows(
        home_url, "SELECT originator_id FROM stored_events WHERE originator_version = 1 AND"
        " topic = 'domain.table_aggregate:Table.Opened' ORDER BY notification_id"))
    db = ["--database", homes[MAIN_HOME]]
    assert main(["audit", "checkpoint", *db]) == 0
    out = tmp_path / "bundle"
    assert main(["audit", "export", "--tournament", name, "--out", str(out), *db]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scope"]["tournament"] == name
    assert main(["audit", "check-dossier", str(out)]) == 0
    dossier = tmp_path / "coup-1.json"
    assert main(["audit", "dossier", table, "1", "--out", str(dossier), *db]) == 0
    assert json.loads(dossier.read_text())["coup"] == 1
    assert main(["audit", "check-dossier", str(dossier)]) == 0
    capsys.readouterr()
    assert main(["audit", "export", "--out", str(tmp_path / "all"), *db]) == 2
    assert "export one --tournament or --table" in capsys.readouterr().err


def test_a_command_s_effects_are_recorded_sent_and_marked_in_its_table_s_home(
        homes: dict[str, str]) -> None:
    name = next(n for n in (f"table-{k}" for k in range(40))
                if chosen_home(str(Table.create_id(n)), ["main", "east", "west"]) != MAIN_HOME)
    with TableService(url=homes[MAIN_HOME]) as service:
        woken: list[Wake] = []
        service.effects.on(Wake, woken.append)
        table_id = a_table(service, name)
        home = service.home_database(table_id)
        assert home is not service.database
        marked = {database: [bool(r["dispatched"]) for r in rows_of(
            database, "SELECT dispatched FROM {outbox} ORDER BY id")]
            for database in (home, service.database)}
    assert woken and {w.table_id for w in woken} == {table_id}
    assert marked[home] == [True] * len(woken)  # each sent, and marked where it was recorded
    assert marked[service.database] == []


def rows_of(database: Database, sql: str) -> list[Any]:
    with database.transaction(write=False) as cursor:
        return list(database.execute(cursor, sql).fetchall())
