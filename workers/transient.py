"""Failures worth retrying: the database is unreachable, locked or restarting, or other
writers kept winning the race for a table. A task retries them with exponential backoff
(1 s, 2 s, 4 s, ... capped at a minute, with jitter), up to `MAX_RETRIES` times; anything
else (a rule violation, an unknown table) fails at once, since retrying cannot fix it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import psycopg
from eventsourcing import persistence

from infra.services.tables import Conflict

MAX_RETRIES = 8

TRANSIENT: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,
    sqlite3.OperationalError,
    persistence.OperationalError,
    persistence.InterfaceError,
    Conflict,
)

RETRY_OPTIONS: dict[str, Any] = {
    "autoretry_for": TRANSIENT,
    "retry_backoff": 1,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": MAX_RETRIES,
    "acks_late": True,
}
