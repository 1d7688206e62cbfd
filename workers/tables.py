"""Playing tables: a task plays one bot table up to a given coup.

The tournament director sends `play_table(database_url, table_id, until, seed_hex)` for every
table at each step of a round, then reads the store to see the tables arrive. The bots'
choices and command ids follow from the seed and the table's version (`infra.autoplay`), so
a task delivered twice, or killed and redelivered, plays the same commands, each applied once.
"""

from __future__ import annotations

import uuid
from functools import lru_cache

import structlog

from infra.autoplay import play_coups
from infra.service import TableService, seeds_from
from workers.app import PLAY_TABLE, app
from workers.transient import RETRY_OPTIONS

log = structlog.get_logger("sabot.workers.tables")


@lru_cache(maxsize=8)
def _service(database_url: str, seed_hex: str) -> TableService:
    service = TableService(url=database_url)
    service.seed_source = seeds_from(bytes.fromhex(seed_hex))
    return service


@app.task(name=PLAY_TABLE, **RETRY_OPTIONS)
def play_table(database_url: str, table_id: str, until: int, seed_hex: str) -> int:
    """Play the table until it has closed coup `until`; returns the events recorded."""
    service = _service(database_url, seed_hex)
    events = play_coups(service, uuid.UUID(table_id), bytes.fromhex(seed_hex), "bots", until)
    log.info("table played", table_id=table_id, until=until, events=events)
    return events
