"""Playing tables: a task plays one bot table up to a given coup.

The tournament director sends `play_table(database_url, table_id, until, seed_hex)` for every
table at each step of a round, then reads the store to see the tables arrive. The bots'
choices and command ids follow from the seed and the table's version (`infra.autoplay`), so
a task delivered twice, or killed and redelivered, plays the same commands, each applied once.
"""

from __future__ import annotations

import uuid

import structlog

from infra.autoplay import play_coups
from workers.app import PLAY_TABLE, app
from workers.services import table_service
from workers.transient import RETRY_OPTIONS

log = structlog.get_logger("sabot.workers.tables")


@app.task(name=PLAY_TABLE, **RETRY_OPTIONS)
def play_table(database_url: str, table_id: str, until: int, seed_hex: str) -> int:
    """Play the table until it has closed coup `until`; returns the events recorded."""
    service = table_service(database_url, seed_hex=seed_hex)
    events = play_coups(service, uuid.UUID(table_id), bytes.fromhex(seed_hex), "bots", until)
    log.info("table played", table_id=table_id, until=until, events=events)
    return events
