"""Reads of the streams that no longer grow with the log (issue 36), on SQLite and PostgreSQL:

- the version each of several streams is at, in one statement (`ledger.stream_versions`; a
  save's check that the streams its decision read have not moved, `ask_versions`): each
  stream's last version sought at the end of its index, a stream with no event left out (it
  read every event of the streams asked: a director's look at its tables grew with their
  coups);
- the streams created by a topic (`streams_with`: the lobby, the list of tables) read from the
  index of the streams' first events (migration 11), not by a scan of the whole log."""

from __future__ import annotations

import uuid

import pytest
from eventsourcing.utils import get_topic

from domain.game.settings import Variant
from domain.table.aggregate import Table
from infra.store import ledger
from infra.store.ledger import ReadAt, StreamMoved
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table, play


def test_each_stream_s_last_version_and_none_for_a_stream_never_written(
        database_url: str) -> None:
    service = a_service(database_url)
    try:
        played = open_table(service, "played", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
        play(service, played, 3, prefix="played")
        opened = open_table(service, "opened", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
        never = uuid.uuid4()
        database = service.database
        versions = ledger.stream_versions(database, [played, opened, never])
        assert versions == {played: service.table(played).version,
                            opened: service.table(opened).version}
        assert versions[played] > versions[opened] > 1
        assert ledger.stream_versions(database, []) == {}
        read = [ReadAt(played, versions[played]), ReadAt(opened, versions[opened] - 1)]
        with database.transaction(write=False) as cursor:
            ledger.ask_versions(database, cursor, read)
            with pytest.raises(StreamMoved, match=str(opened)):
                ledger.check_versions(database, cursor.fetchall(), read)
    finally:
        service.close()


def test_the_tables_created_are_listed_from_the_index_of_first_events(
        database_url: str) -> None:
    service = a_service(database_url)
    try:
        tables = [open_table(service, name, Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
                  for name in ("first", "second")]
        play(service, tables[0], 2, prefix="first")
        topic = get_topic(Table.Opened)
        assert service.streams_with(topic) == tables
        database = service.database
        postgres = database.dialect == "postgres"
        with database.transaction(write=False) as cursor:
            if postgres:  # a table this small is scanned unless told not to
                database.execute(cursor, "SET LOCAL enable_seqscan = off")
            plan = database.execute(
                cursor, ("EXPLAIN" if postgres else "EXPLAIN QUERY PLAN")
                + " SELECT originator_id FROM {stored_events} WHERE topic = ?"
                " AND originator_version = 1 ORDER BY {nid}", (topic,)).fetchall()
        text = " ".join(str(value) for row in plan for value in dict(row).values())
        assert "stored_events_created" in text, text
    finally:
        service.close()
