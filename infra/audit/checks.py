"""The checks `sabot audit verify` runs after the chain: what the chain does not cover.

The chain, the signatures and the checkpoints vouch for the stored events. Everything else
the database holds is derived from them or kept beside them, and is checked against them:

* `snapshots_match_events` (`infra.audit.snapshots`): each snapshot is its aggregate
  replayed from its events;
* `vault_matches_events`: every RNG shoe's commitment has a sealed seed in the vault, and
  every seal opens (its MAC holds under the secret key) to a seed whose SHA-256 is the
  commitment it is filed under. Without the secret key (`SABOT_SECRET_KEY` or
  `.sabot/secret.key`) the seals cannot be opened: only their presence is checked;
* `command_log_matches_events`: every command the log records produced the events it names,
  and those events carry its id; every event that carries a command id is in the log;
* `commands_attributed` (`infra.audit.attribution`): an event whose actor is a person came
  from a command that person's own token sent;
* `ViewsMatchEvents`: each projection is rebuilt in memory (an in-memory SQLite copy of
  the events, the projections' own runner, which the caller hands in:
  `infra.audit.ports.ViewRebuild`) up to the position its stored view has reached, and
  its tables (`View.tables`) are compared row by row with the stored ones. A table-folding
  view's working copy of each table (`view_<name>_tables`) is not compared: it is an
  aggregate snapshot stamped with the time it was taken; a wrong one shows in the rows it
  makes next.

Each names what differs (stream, version, command, table, row) and returns `Finding`s.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterator
from typing import Any

import msgspec
from eventsourcing.persistence import StoredEvent
from eventsourcing.sqlite import SQLiteDatastore
from eventsourcing.utils import get_topic

from domain.table.aggregate import Table
from infra.audit.attribution import commands_attributed
from infra.audit.ports import ViewRebuild
from infra.audit.report import PAGE, AuditCheck, Finding, read_rows, stored_event_rows
from infra.audit.snapshots import snapshots_match_events
from infra.errors import SealBroken
from infra.settings import HOME, SECRET_KEY_FILE, load_settings
from infra.store.database import Database, SQLiteDatabase
from infra.store.homes import MAIN_HOME
from infra.store.opening import Store
from infra.store.vault import open_seal

MAX_FINDINGS = 20
_SHUFFLED = get_topic(Table.ShoeShuffled)


def complete_checks(views: ViewRebuild) -> list[AuditCheck]:
    """Every check beyond the chain and the shoes, in the order verify runs them; `views`
    rebuilds the projections (`projections.audit_port.PROJECTIONS`)."""
    return [snapshots_match_events, vault_matches_events, command_log_matches_events,
            commands_attributed, ViewsMatchEvents(views)]


def _secret_key() -> bytes | None:
    if os.environ.get("SABOT_SECRET_KEY") or (HOME / SECRET_KEY_FILE).exists():
        return load_settings().secret_key
    return None


def vault_matches_events(store: Store) -> Iterator[Finding]:
    sealed = {row["shoe_id"]: bytes(row["sealed"]) for row in read_rows(
        store.vault_database, "SELECT shoe_id, sealed FROM {shoe_seeds}")}
    found = 0
    for stored in _shuffles(store):
        event: Any = store.mapper.to_domain_event(stored)
        if not event.physical and event.commitment not in sealed and found < MAX_FINDINGS:
            found += 1
            yield Finding(problem="vault seed missing", detail=f"taille {event.taille}'s "
                          f"commitment {event.commitment[:16]}… has no sealed seed in the vault",
                          originator_id=event.originator_id,
                          originator_version=event.originator_version, check="vault")
    key = _secret_key()
    if key is None:
        return
    for commitment, seal in sorted(sealed.items()):
        try:
            seed = open_seal(key, commitment, seal)
        except SealBroken:
            yield Finding(problem="vault seal broken", detail=f"the seal filed under "
                          f"{commitment[:16]}… fails its MAC: the row was altered or replaced",
                          check="vault")
            continue
        if hashlib.sha256(seed).hexdigest() != commitment:
            yield Finding(problem="vault seed altered", detail=f"the seed filed under "
                          f"{commitment[:16]}… does not hash to that commitment", check="vault")


vault_matches_events.name = "vault"  # type: ignore[attr-defined]


def _shuffles(store: Store) -> list[StoredEvent]:
    database = store.database
    return [
        StoredEvent(originator_id=database.from_db_id(row["originator_id"]),
                    originator_version=row["originator_version"], topic=row["topic"],
                    state=bytes(row["state"]))
        for row in read_rows(database, "SELECT originator_id, originator_version, topic, state"
                         " FROM {stored_events} WHERE topic = ? ORDER BY {nid}", (_SHUFFLED,))
    ]


class _Carried(msgspec.Struct):
    """The command id an event carries, if any (its other fields are skipped unread)."""

    command_id: Any = None


def command_log_matches_events(store: Store) -> Iterator[Finding]:
    database = store.database
    streams = _Streams(database)  # each stream a small number: cheap keys, one UUID each
    log = {row["command_id"]: (streams.number(row["originator_id"]), row["first_version"],
                               row["last_version"])
           for row in read_rows(database, "SELECT command_id, originator_id, first_version,"
                            " last_version FROM {command_log}")}
    decode = msgspec.msgpack.Decoder(_Carried).decode  # the command id alone is decoded
    carried: dict[tuple[int, int], str] = {}
    versions: dict[int, int] = {}
    findings = 0
    for row in stored_event_rows(database):
        stream, version = streams.number(row["originator_id"]), row["originator_version"]
        versions[stream] = version
        try:
            command = decode(row["state"]).command_id
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # not a mapping: an event without a command id
        if not isinstance(command, str) or not command:
            continue
        carried[(stream, version)] = command
        if command not in log and findings < MAX_FINDINGS:
            findings += 1
            yield Finding(problem="command not logged", detail=f"the event carries command "
                          f"{command!r}, which the command log does not hold: the log was "
                          "emptied or edited", originator_id=streams.ids[stream],
                          originator_version=version, notification_id=row["n"],
                          check="commands")
    for command, (stream, first, last) in sorted(log.items()):
        wrong = [v for v in range(first, last + 1)
                 if carried.get((stream, v), command) != command]
        beyond = last > versions.get(stream, 0)
        if (wrong or beyond) and findings < MAX_FINDINGS:
            findings += 1
            version = wrong[0] if wrong else last
            yield Finding(problem="command log altered", detail=f"the log says command "
                          f"{command!r} produced versions {first}..{last}; version {version} "
                          + ("carries another command id" if wrong else "was never stored"),
                          originator_id=streams.ids[stream], originator_version=version,
                          check="commands")


class _Streams:
    """A number for each originator id as the database gives it (the same stream, however its
    id is spelt), and back to its UUID."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.ids: list[uuid.UUID] = []
        self._numbers: dict[uuid.UUID, int] = {}
        self._raw: dict[Any, int] = {}

    def number(self, raw: Any) -> int:
        found = self._raw.get(raw)
        if found is None:
            oid = self.database.from_db_id(raw)
            found = self._raw[raw] = self._numbers.setdefault(oid, len(self.ids))
            if found == len(self.ids):
                self.ids.append(oid)
        return found


command_log_matches_events.name = "commands"  # type: ignore[attr-defined]


class _Copy:
    """An in-memory SQLite copy of a store's events, for a runner to rebuild views in."""

    def __init__(self, store: Store, source: Database) -> None:
        self.mapper = store.mapper
        self.datastore = SQLiteDatastore(f"file:verify-{uuid.uuid4().hex}?mode=memory&cache=shared")
        self.database = SQLiteDatabase(self.datastore)
        self.homes: dict[str, Database] = {MAIN_HOME: self.database}  # every home's copy
        with self.database.transaction(write=True) as cursor:
            cursor.execute("CREATE TABLE stored_events (originator_id TEXT, originator_version"
                           " INTEGER, topic TEXT, state BLOB)")
            after = 0
            while True:
                rows = read_rows(source, "SELECT {nid} AS n, originator_id, originator_version,"
                             " topic, state FROM {stored_events} WHERE {nid} > ?"
                             " ORDER BY {nid} LIMIT ?", (after, PAGE))
                cursor.executemany(
                    "INSERT INTO stored_events (rowid, originator_id, originator_version,"
                    " topic, state) VALUES (?, ?, ?, ?, ?)",
                    [(r["n"], source.from_db_id(r["originator_id"]).hex,
                      r["originator_version"], r["topic"], bytes(r["state"])) for r in rows])
                if len(rows) < PAGE:
                    break
                after = rows[-1]["n"]

    def home_databases(self) -> dict[str, Database]:
        return self.homes

    def close(self) -> None:
        self.datastore.close()


class ViewsMatchEvents:
    """The views' rows equal those rebuilt from copies of every home's events, up to the
    positions the views record in each home's log."""

    name = "views"

    def __init__(self, views: ViewRebuild) -> None:
        self.views = views

    def __call__(self, store: Store) -> Iterator[Finding]:
        views = self.views
        positions = {row["projection"]: int(row["notification_id"]) for row in read_rows(
            store.database, "SELECT projection, notification_id FROM {view_tracking}")}
        homes = store.home_databases()
        wanted = [name for name in views.names
                  if any(positions.get(views.tracked(name, home)) for home in homes)]
        if not wanted:
            return
        copies = {home: _Copy(store, source) for home, source in homes.items()}
        copy = copies[MAIN_HOME]
        copy.homes = {home: each.database for home, each in copies.items()}
        try:
            runner = views.rebuilder(copy, wanted)
            for name in wanted:
                runner.catch_up(name, until={home: positions.get(views.tracked(name, home), 0)
                                             for home in homes})
                for table in views.tables(name):  # not a fold's working copy (its time)
                    yield from _compare(store.database, copy.database, name, table)
        finally:
            for each in copies.values():
                each.close()


def _compare(stored_db: Database, rebuilt_db: Database, view: str,
             table: str) -> Iterator[Finding]:
    template = "SELECT * FROM {" + table + "}"
    stored = sorted(map(_plain, read_rows(stored_db, template)), key=repr)
    rebuilt = sorted(map(_plain, read_rows(rebuilt_db, template)), key=repr)
    if stored == rebuilt:
        return
    extra = [row for row in stored if row not in rebuilt]
    lost = [row for row in rebuilt if row not in stored]
    example = (f"the stored row {_short(extra[0])} is not what the events give"
               if extra else f"the row {_short(lost[0])} is missing")
    yield Finding(problem="view altered", detail=f"projection {view}, table {table}: "
                  f"{len(extra)} row(s) differ from the rebuild, {len(lost)} missing; "
                  f"{example}", check="views")


def _plain(row: Any) -> tuple[Any, ...]:
    values = row.values() if isinstance(row, dict) else tuple(row)
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in values)


def _short(row: tuple[Any, ...]) -> str:
    text = repr(row)
    return text if len(text) <= 120 else text[:117] + "..."

