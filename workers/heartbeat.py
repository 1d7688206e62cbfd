"""Workers that say they are alive, and a refusal to start with the wrong vault key.

Each `sabot worker` process writes its heartbeat every `BEAT_SECONDS` into the
`worker_heartbeats` table of its store (`--database`, else `$SABOT_DATABASE_URL`: the store
the API uses), from a thread of its own, so a worker killed by SIGKILL simply stops beating.
`/ready` reads the table: a worker is alive when it beat within `ALIVE_SECONDS`; when every
worker that ever beat there is older than that, it answers "no worker alive", naming what
waits for one. A store where no worker ever beat reports nothing (an API on its own).

`check_vault_key` runs before a worker starts: if the store holds sealed seeds and the
worker's key (`SABOT_SECRET_KEY`, else `.sabot/secret.key`) does not open them, the worker
refuses to start and says so, instead of running with a key of its own and failing every
deal.
"""

from __future__ import annotations

import os
import socket
import threading
import time

import msgspec

from infra.errors import SealBroken, SettingsError
from infra.store.database import Database
from infra.store.vault import SeedVault

BEAT_SECONDS = 2.0
ALIVE_SECONDS = 10.0
WAITING = "decision deadlines, scheduled audits, dispute replays and tournament tables"
"""What a worker does, so what waits when none is alive."""

class Workers(msgspec.Struct, frozen=True):
    """What `/ready` says of the workers: how many are alive, and when one last beat."""

    alive: int
    last_beat_seconds_ago: float | None
    waiting: str | None = None


def worker_name(queue: str) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{queue}"


def beat(database: Database, name: str, queue: str) -> None:
    with database.transaction(write=True) as cursor:
        database.execute(
            cursor, "INSERT INTO {worker_heartbeats} (worker, queue, beat_ms) VALUES (?, ?, ?)"
            " ON CONFLICT (worker) DO UPDATE SET beat_ms = excluded.beat_ms",
            (name, queue, _ms()))


def start_beating(database: Database, queue: str) -> threading.Event:
    """Beat from a daemon thread until the returned event is set (or the process dies)."""
    name = worker_name(queue)
    beat(database, name, queue)
    stop = threading.Event()

    def run() -> None:
        while not stop.wait(BEAT_SECONDS):
            try:
                beat(database, name, queue)
            except Exception:  # the store is away: beat again when it is back
                continue

    threading.Thread(target=run, name="sabot-heartbeat", daemon=True).start()
    return stop


def workers(database: Database) -> Workers | None:
    """The workers of this store; None when none ever beat here."""
    with database.transaction(write=False) as cursor:
        rows = database.execute(cursor, "SELECT beat_ms FROM {worker_heartbeats}").fetchall()
    if not rows:
        return None
    now = _ms()
    ages = [(now - int(row["beat_ms"])) / 1000 for row in rows]
    alive = sum(age <= ALIVE_SECONDS for age in ages)
    return Workers(alive=alive, last_beat_seconds_ago=round(min(ages), 1),
                   waiting=None if alive else WAITING)


def check_vault_key(database: Database, key: bytes, url: str) -> None:
    """Refuse (`SettingsError`) a key that does not open the seeds this store sealed."""
    vault = SeedVault(database, key)
    with database.transaction(write=False) as cursor:
        row = database.execute(cursor, "SELECT shoe_id FROM {shoe_seeds} LIMIT 1").fetchone()
    if row is None:
        return
    try:
        vault.unseal(row["shoe_id"])
    except SealBroken:
        raise SettingsError(
            f"the vault key of this worker does not open the seeds sealed in {url}: start it "
            "with the key the store was sealed with (SABOT_SECRET_KEY, or .sabot/secret.key)"
        ) from None


def _ms() -> int:
    return int(time.time() * 1000)
