"""Migration 1: Sabot's tables as they were before versioned migrations.

The ledger (`infra.store.ledger`: `event_chain`, `command_log`, `chain_signatures`, `signing_keys`,
`merkle_tree`), the outbox (`infra.store.outbox`), the seed vault (`infra.store.vault`), the
directors' leases (`infra.store.leases`), the API's tokens and idempotency keys (`api.tokens`,
`api.idempotency`) and the workers' heartbeats (`workers.heartbeat`).

Every statement is idempotent (`IF NOT EXISTS`, columns added when missing), so that it also
adopts a store written before versions were recorded, whatever it had by then: one chained
before partitions gets the partition columns (every old row in the main partition), one
chained before the Merkle tree gets its tree built from its events; tokens issued before
they expired get the lifecycle columns; an outbox made before its expiry gets the dispatch
time.
"""

from __future__ import annotations

from typing import Any

from infra.store.database import Database
from infra.store.ledger import select_events
from infra.store.merkle import Frontier, event_leaf

VERSION = 1
TITLE = "Sabot's tables as before versioned migrations"

TABLES: dict[str, tuple[str, ...]] = {
    "sqlite": (
        "CREATE TABLE IF NOT EXISTS {event_chain} ("
        " notification_id INTEGER PRIMARY KEY,"
        " originator_id TEXT NOT NULL,"
        " originator_version INTEGER NOT NULL,"
        " stream_digest BLOB NOT NULL,"
        " global_digest BLOB NOT NULL,"
        " partition_key TEXT NOT NULL DEFAULT '',"
        " UNIQUE (originator_id, originator_version))",
        "CREATE TABLE IF NOT EXISTS {command_log} ("
        " command_id TEXT PRIMARY KEY,"
        " originator_id TEXT NOT NULL,"
        " first_version INTEGER NOT NULL,"
        " last_version INTEGER NOT NULL,"
        " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        "CREATE TABLE IF NOT EXISTS {chain_signatures} ("
        " notification_id INTEGER PRIMARY KEY,"
        " key_id TEXT NOT NULL,"
        " signature BLOB NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {signing_keys} ("
        " key_id TEXT PRIMARY KEY,"
        " public_key BLOB NOT NULL,"
        " recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        "CREATE TABLE IF NOT EXISTS {merkle_tree} ("
        " id INTEGER PRIMARY KEY CHECK (id = 1),"
        " size INTEGER NOT NULL,"
        " head INTEGER NOT NULL,"
        " frontier BLOB NOT NULL,"
        " partitions TEXT NOT NULL DEFAULT '')",
        "CREATE TABLE IF NOT EXISTS {outbox} ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " command_id TEXT NOT NULL,"
        " kind TEXT NOT NULL,"
        " effect BLOB NOT NULL,"
        " dispatched INTEGER NOT NULL DEFAULT 0,"
        " dispatched_at REAL)",
        "CREATE TABLE IF NOT EXISTS {shoe_seeds} ("
        " shoe_id TEXT PRIMARY KEY,"
        " sealed BLOB NOT NULL,"
        " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        "CREATE TABLE IF NOT EXISTS {api_tokens} ("
        " token_hash TEXT PRIMARY KEY,"
        " role TEXT NOT NULL,"
        " player TEXT,"
        " tables TEXT NOT NULL DEFAULT '',"
        " created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
    ),
    "postgres": (
        "CREATE TABLE IF NOT EXISTS {event_chain} ("
        " notification_id bigint PRIMARY KEY,"
        " originator_id uuid NOT NULL,"
        " originator_version bigint NOT NULL,"
        " stream_digest bytea NOT NULL,"
        " global_digest bytea NOT NULL,"
        " partition_key TEXT NOT NULL DEFAULT '',"
        " UNIQUE (originator_id, originator_version))",
        "CREATE TABLE IF NOT EXISTS {command_log} ("
        " command_id text PRIMARY KEY,"
        " originator_id uuid NOT NULL,"
        " first_version bigint NOT NULL,"
        " last_version bigint NOT NULL,"
        " recorded_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE IF NOT EXISTS {chain_signatures} ("
        " notification_id bigint PRIMARY KEY,"
        " key_id text NOT NULL,"
        " signature bytea NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {signing_keys} ("
        " key_id text PRIMARY KEY,"
        " public_key bytea NOT NULL,"
        " recorded_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE IF NOT EXISTS {merkle_tree} ("
        " id integer PRIMARY KEY CHECK (id = 1),"
        " size bigint NOT NULL,"
        " head bigint NOT NULL,"
        " frontier bytea NOT NULL,"
        " partitions TEXT NOT NULL DEFAULT '')",
        "CREATE TABLE IF NOT EXISTS {outbox} ("
        " id bigserial PRIMARY KEY,"
        " command_id text NOT NULL,"
        " kind text NOT NULL,"
        " effect bytea NOT NULL,"
        " dispatched boolean NOT NULL DEFAULT false,"
        " dispatched_at double precision)",
        "CREATE TABLE IF NOT EXISTS {shoe_seeds} ("
        " shoe_id text PRIMARY KEY,"
        " sealed bytea NOT NULL,"
        " created_at timestamptz NOT NULL DEFAULT now())",
        "CREATE TABLE IF NOT EXISTS {api_tokens} ("
        " token_hash text PRIMARY KEY,"
        " role text NOT NULL,"
        " player text,"
        " tables text NOT NULL DEFAULT '',"
        " created_at timestamptz NOT NULL DEFAULT now())",
    ),
}
SHARED = (  # the same text on both databases
    "CREATE TABLE IF NOT EXISTS {tournament_leases} ("
    " tournament_id TEXT PRIMARY KEY, holder TEXT NOT NULL, epoch BIGINT NOT NULL,"
    " expires DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {api_idempotency} ("
    " scoped_key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, status INTEGER,"
    " body TEXT, claimed_ms BIGINT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {worker_heartbeats} (worker TEXT PRIMARY KEY,"
    " queue TEXT NOT NULL, beat_ms BIGINT NOT NULL)",
)
ADDED_COLUMNS = (  # to tables created before these columns were
    ("event_chain", "partition_key TEXT NOT NULL DEFAULT ''"),  # every old row in `MAIN`
    ("merkle_tree", "partitions TEXT NOT NULL DEFAULT ''"),
    ("api_tokens", "expires_at TEXT"),  # ISO 8601 text, UTC; none: created_at + 90 days
    ("api_tokens", "revoked_at TEXT"),
    ("outbox", "dispatched_at DOUBLE PRECISION"),  # SQLite: REAL; old rows: expire at once
)
INDEXES = (
    "CREATE INDEX IF NOT EXISTS event_chain_partition"
    " ON {event_chain} (partition_key, notification_id)",
    "CREATE INDEX IF NOT EXISTS outbox_pending ON {outbox} (id) WHERE NOT dispatched",
    "CREATE INDEX IF NOT EXISTS outbox_dispatched ON {outbox} (dispatched_at) WHERE dispatched",
)


def apply(database: Database, cursor: Any) -> None:
    for statement in (*TABLES[database.dialect], *SHARED):
        database.execute(cursor, statement)
    for table, column in ADDED_COLUMNS:
        add_column(database, cursor, table, column)
    for statement in INDEXES:
        database.execute(cursor, statement)
    if database.execute(cursor, "SELECT 1 FROM {merkle_tree}").fetchone() is None:
        tree, head = Frontier(), 0  # chained before the tree and the signatures: as stored
        for event in select_events(database, cursor, 0, None):
            tree.append(event_leaf(event.notification_id, event.canonical()))
            head = event.notification_id
        database.execute(cursor, "INSERT INTO {merkle_tree} (id, size, head, frontier)"
                         " VALUES (1, ?, ?, ?)", (tree.size, head, tree.to_bytes()))


def add_column(database: Database, cursor: Any, table: str, column: str) -> None:
    """`ALTER TABLE table ADD COLUMN column` unless it has it (SQLite has no `IF NOT
    EXISTS` there)."""
    if database.dialect == "postgres":
        database.execute(cursor, f"ALTER TABLE {{{table}}} ADD COLUMN IF NOT EXISTS {column}")
    elif not database.execute(cursor, f"SELECT 1 FROM pragma_table_info('{table}')"
                              " WHERE name = ?", (column.split()[0],)).fetchone():
        database.execute(cursor, f"ALTER TABLE {{{table}}} ADD COLUMN {column}")
