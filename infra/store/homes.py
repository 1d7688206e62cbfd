"""Where each partition of the log lives: the setting that spreads tournaments over databases.

An installation that outgrows one PostgreSQL server names other databases, its *homes*, in
`SABOT_PARTITION_DATABASES`:

    SABOT_PARTITION_DATABASES="east=postgresql://sabot@db-east/sabot,west=postgresql://sabot@db-west/sabot"

The main database (`SABOT_DATABASE_URL`) keeps the `MAIN` partition and everything that is not
a partition's (tokens, idempotency keys, the seed vault, the views), and a directory of where each
partition lives (`partition_homes`, migration 3). A partition's home is chosen once, at its
first write, by rendezvous hashing of its key over the home names (the home whose
SHA-256(name, key) is highest), and recorded: adding a home later moves nothing already
written, and a home's URL may change (a server moved) without losing the map, since the
directory records names. The main database is a home too, named `main`, and takes its share
of new partitions.

Each home is a whole chained store (`infra.store.recorders`): its own notification ids, chains,
signatures, checkpoint file, command ledger and outbox. `infra.store.routing` sends each write to
its partition's home and each read to its stream's; the projections read every home
(`projections.runner`) and `sabot audit verify` verifies each.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

import msgspec

from infra.errors import StoreError
from infra.settings import redact_url
from infra.store.database import Database

SETTING = "SABOT_PARTITION_DATABASES"
MAIN_HOME = "main"


class BadHomes(StoreError):
    """`SABOT_PARTITION_DATABASES` cannot be read."""


class Homes(msgspec.Struct, frozen=True):
    """The named databases partitions may live in, besides the main one (`main`)."""

    urls: dict[str, str]

    @property
    def names(self) -> list[str]:
        """Every home a new partition may go to, `main` first."""
        return [MAIN_HOME, *sorted(self.urls)]


def homes_from(environ: Mapping[str, str] | None = None) -> Homes | None:
    """The homes the setting names, or None when it is unset or empty."""
    text = (os.environ if environ is None else environ).get(SETTING, "").strip()
    if not text:
        return None
    urls: dict[str, str] = {}
    for item in text.split(","):
        name, sep, url = item.strip().partition("=")
        name, url = name.strip(), url.strip()
        if not sep or not name or not url:
            raise BadHomes(f"{SETTING}: expected NAME=URL[,NAME=URL...], got "
                           f"{redact_url(item.strip())!r}")
        if not name.replace("-", "").replace("_", "").isalnum() or name == MAIN_HOME:
            raise BadHomes(f"{SETTING}: a home's name is letters, digits, - and _, not "
                           f"{MAIN_HOME!r}: got {name!r}")
        if name in urls:
            raise BadHomes(f"{SETTING}: home {name!r} is named twice")
        if not url.lower().startswith(("postgresql://", "postgres://")):
            raise BadHomes(f"{SETTING}: home {name!r} must be a PostgreSQL URL, got "
                           f"{redact_url(url)!r}")
        urls[name] = url
    return Homes(urls)


def chosen_home(partition: str, names: list[str]) -> str:
    """The home a new partition goes to: the highest SHA-256(name, partition) (rendezvous
    hashing: a home added later takes new partitions only, about its share of them)."""
    def weight(name: str) -> bytes:
        return hashlib.sha256(f"{name}\x00{partition}".encode()).digest()
    return max(names, key=weight)


def recorded_home(database: Database, cursor: Any, partition: str) -> str | None:
    row = database.execute(cursor, "SELECT home FROM {partition_homes} WHERE partition = ?",
                           (partition,)).fetchone()
    return None if row is None else str(row["home"])


def assign_home(database: Database, partition: str, names: list[str]) -> str:
    """The partition's home: the one recorded, else the one chosen now and recorded (a racing
    writer of the same new partition finds the first one's choice)."""
    with database.transaction(write=True) as cursor:
        found = recorded_home(database, cursor, partition)
        if found is not None:
            return found
        database.execute(cursor, "INSERT INTO {partition_homes} (partition, home) VALUES (?, ?)"
                         " ON CONFLICT (partition) DO NOTHING",
                         (partition, chosen_home(partition, names)))
        found = recorded_home(database, cursor, partition)
    assert found is not None
    return found


def directory(database: Database) -> dict[str, str]:
    """Every recorded partition and its home."""
    with database.transaction(write=False) as cursor:
        rows = database.execute(cursor, "SELECT partition, home FROM {partition_homes}"
                                ).fetchall()
    return {str(row["partition"]): str(row["home"]) for row in rows}
