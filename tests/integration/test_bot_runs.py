"""A house table's bot steps saved in runs (`TableService.execute_run`, `autoplay.play_run`):
the same game and the same record as one command a transaction, in far fewer transactions;
a run that another writer overtakes between its decision and its save writes nothing, and
play goes on from the store, nothing lost, nothing twice; a run writes and sends the effects
of the table as it leaves it, once. On SQLite and PostgreSQL."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from domain.table.aggregate import Table
from domain.table.commands import TableCommand
from domain.table.room import TournamentPaused
from infra.audit.verify import Problem, verify
from infra.services import autoplay
from infra.services.autoplay import play_run, play_step
from infra.services.tables import TableService, describe
from infra.services.tournaments import Director, Tournaments
from infra.store.outbox import Wake, follow_ups
from tests.integration.test_audit import nid_column, sql
from tests.integration.test_director import prepared, record
from tests.integration.test_outbox import outbox

BOTS = "bots"  # the prefix of the director's bot commands (`StoreDesk.deal_house`)


def played(url: str) -> tuple[TableService, uuid.UUID, int]:
    """A tournament of house bots, directed to its end in this process; the transactions
    that wrote events (the store's inserts)."""
    service, tournament_id = prepared(url)
    recorder: Any = service.recorder
    insert, inserts = recorder.insert_events, [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        inserts[0] += 1
        return insert(*args, **kwargs)

    recorder.insert_events = counted
    Director(service).run(tournament_id)
    return service, tournament_id, inserts[0]


def table_ids(service: TableService, tournament_id: uuid.UUID) -> list[uuid.UUID]:
    state = Tournaments(service).state(tournament_id)
    return [Table.create_id(state.table_name(n)) for n in range(1, state.tables_opened + 1)]


def events(service: TableService, table_id: uuid.UUID) -> list[dict[str, Any]]:
    """A table's events, topic and fields (the time each was recorded aside)."""
    return [{k: v for k, v in describe(e).items() if k != "timestamp"}
            for e in service.events_of(table_id)]


def command_log(service: TableService) -> dict[str, tuple[uuid.UUID, int, int]]:
    database = service.database
    with database.transaction(write=False) as cursor:
        rows = database.execute(cursor, "SELECT command_id, originator_id, first_version,"
                                " last_version FROM {command_log}").fetchall()
    return {row["command_id"]: (database.from_db_id(row["originator_id"]),
                                row["first_version"], row["last_version"]) for row in rows}


def test_runs_record_the_game_and_the_command_log_of_one_command_a_transaction(
        database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as one_at_a_time:
        one_at_a_time.setattr(autoplay, "RUN", 0)  # no run: every step is `play_step`
        alone, alone_id, alone_inserts = played(f"sqlite:///{tmp_path}/one-a-transaction.db")
    batched, batched_id, batched_inserts = played(database_url)
    try:
        assert record(batched, batched_id) == record(alone, alone_id)
        tables = table_ids(batched, batched_id)
        assert len(tables) >= 2 and tables == table_ids(alone, alone_id)
        for table_id in tables:
            assert events(batched, table_id) == events(alone, table_id)
        log = command_log(batched)
        assert log == command_log(alone)  # each command id once, with its own versions
        at_tables = sorted((first, last) for oid, first, last in log.values() if oid in tables)
        assert len(at_tables) > 500
        # every table command its versions: together, every event of every table, once
        assert sum(last - first + 1 for first, last in at_tables) == sum(
            len(batched.events_of(t)) for t in tables)
        assert alone_inserts > len(at_tables)
        assert batched_inserts * 3 < alone_inserts  # a run a coup
    finally:
        alone.close()
        batched.close()
    report = verify(database_url)  # signatures, command seals, Merkle tree, checkpoints
    assert report.ok, report.findings
    # a signature row deleted inside a run (a coup's: its settling is never its end) is
    # missed as one deleted after a lone command
    [(n,)] = sql(database_url, "SELECT MIN(c.notification_id) FROM stored_events e JOIN"
                 f" event_chain c ON c.notification_id = e.{nid_column(database_url)}"
                 " WHERE e.topic LIKE ?", ("%CoupSettled",))
    assert (n,) in sql(database_url, "SELECT notification_id FROM chain_signatures")
    sql(database_url, "DELETE FROM chain_signatures WHERE notification_id = ?", (n,))
    assert Problem.SIGNATURE_MISSING in {f.problem for f in verify(database_url).findings}


def started_table(url: str) -> tuple[TableService, Director, uuid.UUID, uuid.UUID]:
    """A tournament of house bots directed until its first coup is dealt at its tables."""
    service, tournament_id = prepared(url)
    director = Director(service)
    for _ in range(20):
        director.tick(tournament_id)
        tables = director.tournaments.tables(tournament_id)
        if tables and all(t.coup_number for t in tables.values()):
            break
    table_id = table_ids(service, tournament_id)[0]
    return service, director, tournament_id, table_id


def overtaken(service: TableService, monkeypatch: pytest.MonkeyPatch, after: int,
              write: Callable[[], object]) -> list[TableCommand]:
    """The next run of `service` calls `write` (another process's write) once it has decided
    `after` commands, before it saves; the commands it decided."""
    decided: list[TableCommand] = []
    run = service.execute_run

    def meddled(table_id: uuid.UUID, choose: Callable[[Table], TableCommand | None],
                most: int) -> list[Any]:
        def choosing(table: Table) -> TableCommand | None:
            if len(decided) == after:
                write()
            command = choose(table)
            if command is not None:
                decided.append(command)
            return command

        monkeypatch.undo()  # the runs after this one as they are
        return run(table_id, choosing, most)

    monkeypatch.setattr(service, "execute_run", meddled)
    return decided


def contiguous(service: TableService, table_id: uuid.UUID) -> None:
    """The table's command log covers each of its events once, in order."""
    ranges = sorted((first, last) for oid, first, last in command_log(service).values()
                    if oid == table_id)
    version = 0
    for first, last in ranges:
        assert first == version + 1 and last >= first, ranges
        version = last
    assert version == service.table(table_id).version == len(service.events_of(table_id))


def test_a_run_overtaken_by_the_same_step_elsewhere_writes_nothing_and_play_goes_on(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    service, director, tournament_id, table_id = started_table(database_url)
    other = TableService(url=database_url)  # another director's process, a moment behind
    try:
        seed = director.tournaments.master(tournament_id)
        before = service.table(table_id)
        coup = before.state.coup_number
        elsewhere: list[Any] = []
        decided = overtaken(service, monkeypatch, 3, lambda: elsewhere.append(
            play_step(other, table_id, seed, BOTS)))
        run = play_run(service, table_id, seed, BOTS, coup + 1)
        assert len(decided) > 3  # the run went on deciding, then lost its save
        [step] = elsewhere
        assert step.events and step.version == before.version + len(step.events)
        # the other process took the run's first step, under the same id
        assert service.recorded_command(decided[0].command_id) == (
            table_id, before.version + 1, step.version)
        # the run saved nothing; the one-command path met the step the other took, and
        # answered it as it was answered (a redelivered step's answer)
        assert [(r.version, r.events) for r in run] == [(step.version, step.events)]
        assert all(service.recorded_command(c.command_id) is None for c in decided[1:])
        autoplay.play_coups(service, table_id, seed, BOTS, coup + 2)
        assert service.state(table_id).coup_number == coup + 2
        contiguous(service, table_id)
    finally:
        other.close()
        service.close()
    assert verify(database_url).ok


def test_a_run_overtaken_by_a_pause_writes_nothing_and_plays_nothing_after_it(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    service, director, tournament_id, table_id = started_table(database_url)
    other = TableService(url=database_url)  # the organiser's replica
    try:
        seed = director.tournaments.master(tournament_id)
        before = service.table(table_id).version
        decided = overtaken(service, monkeypatch, 5, lambda: Director(other).tournaments.pause(
            tournament_id, command_id="pause"))
        with pytest.raises(TournamentPaused):  # the step after the run: decided in the pause
            play_run(service, table_id, seed, BOTS, service.state(table_id).coup_number + 1)
        assert len(decided) > 5
        assert service.table(table_id).version == before  # nothing written at the table
        assert all(service.recorded_command(c.command_id) is None for c in decided)
        assert director.tournaments.state(tournament_id).paused
        contiguous(service, table_id)
    finally:
        other.close()
        service.close()


def test_a_run_writes_and_sends_the_effects_of_the_table_it_leaves_once(
        database_url: str) -> None:
    service, director, tournament_id, table_id = started_table(database_url)
    try:
        seed = director.tournaments.master(tournament_id)
        woken: list[Wake] = []
        service.effects.on(Wake, woken.append)
        written = len(outbox(service))
        run = play_run(service, table_id, seed, BOTS, service.state(table_id).coup_number + 1)
        assert len(run) > 1
        rows = outbox(service)[written:]
        # under the run's last command id: the effects one command alone leaving the table
        # there would have written (a Wake of its last version, and its clocks)
        [last] = [cid for cid, (oid, _, version) in command_log(service).items()
                  if oid == table_id and version == run[-1].version]
        assert [row["command_id"] for row in rows] == [last] * len(rows)
        assert [row["effect"] for row in rows] == follow_ups(service.table(table_id))
        assert woken == [Wake(table_id, run[-1].version)]
    finally:
        service.close()
