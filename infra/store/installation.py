"""What the installation says of itself, kept in its store for every process to read.

`sabot serve` records the address people open (`PUBLIC_URL`: `SABOT_PUBLIC_URL`, else the
address it listens on), and `sabot tournament sign-in` prints slips that lead there unless
told another `--url`: before, the slips pointed at port 8000 whatever port `serve` used.
"""

from __future__ import annotations

from infra.store.database import Database

PUBLIC_URL = "public_url"


def record(database: Database, name: str, value: str) -> None:
    with database.transaction(write=True) as cursor:
        database.execute(cursor, "INSERT INTO {installation} (name, value) VALUES (?, ?)"
                         " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                         (name, value))


def recorded(database: Database, name: str) -> str | None:
    row = database.read_one("SELECT value FROM {installation} WHERE name = ?", (name,))
    return None if row is None else str(row["value"])
