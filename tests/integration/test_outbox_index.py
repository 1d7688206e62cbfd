"""Marking a command's effects dispatched reads that command's rows by the outbox's index
(migration 6), never the whole outbox, which keeps a day of dispatched effects: the
database's plan of the mark, with the outbox full, and the mark still marking."""

from __future__ import annotations

import json

from infra.store.outbox import Dispatcher, Wake
from tests.integration.test_outbox import a_service, a_table, outbox

HELD = 20_000  # dispatched effects kept in the outbox (an installation's: millions)
MARK = ("UPDATE {outbox} SET dispatched = ?, dispatched_at = ? WHERE command_id = ?"
        " AND kind IN (?)")  # `Dispatcher._mark` of one command's wake-up


def test_a_command_s_effects_are_marked_by_the_index(database_url: str) -> None:
    with a_service(database_url) as service:
        table_id = a_table(service, "ix")
        database = service.database
        with database.transaction(write=True) as cursor:
            cursor.executemany(database.sql("INSERT INTO {outbox} (command_id, kind, effect,"
                                            " dispatched) VALUES (?, 'wake', ?, ?)"),
                               [(f"held:{n}", b"\x00", True) for n in range(HELD)])
            database.execute(cursor, "ANALYZE {outbox}")
        with database.transaction(write=False) as cursor:
            if database.dialect == "postgres":
                plan = json.dumps(database.execute(
                    cursor, "EXPLAIN (FORMAT JSON) " + MARK, (True, 0.0, "ix:seat", "wake")
                ).fetchone()["QUERY PLAN"])
                assert '"Index Name": "outbox_command"' in plan, plan
                assert "Seq Scan" not in plan, plan
            else:
                plan = " ".join(row["detail"] for row in database.execute(
                    cursor, "EXPLAIN QUERY PLAN " + MARK, (True, 0.0, "ix:seat", "wake")
                ).fetchall())
                assert "USING INDEX outbox_command" in plan, plan
        dispatcher = Dispatcher(database)
        dispatcher.on(Wake, lambda wake: None)
        dispatcher.dispatch("ix:seat", [Wake(table_id, 2)])
        seat = [row for row in outbox(service) if row["command_id"] == "ix:seat"]
        assert seat and all(row["dispatched"] for row in seat)
