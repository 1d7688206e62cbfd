"""Migration 11: the streams' first events indexed by topic.

The lobby, the list of tables and the disputes find their aggregates by the topic of the event
that created them (`SabotApplication.streams_with`): without an index that read scanned every
event of the store, at every listing a page or a poller asked for (issue 36: in the topology
benchmark every `GET /tables` read the whole log). A partial index holds only the first event
of each stream (version 1), one small entry an aggregate, so writers barely pay for it.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database

VERSION = 11
TITLE = "the streams' first events indexed by topic: listings no longer scan the whole log"


def apply(database: Database, cursor: Any) -> None:
    database.execute(cursor, "CREATE INDEX IF NOT EXISTS stored_events_created"
                     " ON {stored_events} (topic) WHERE originator_version = 1")
