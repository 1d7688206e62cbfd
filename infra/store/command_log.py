"""The command log (`command_log`): each applied command id, the stream and versions it
produced, who sent it (`infra.store.senders`) and its seal by the store's signing key.

The recorders (`infra.store.recorders`) claim a save's command ids in its transaction, after
the write lock and before the events' insert (`claim_commands`): one (`save(...,
command_id=...)`) or a run of them, each its own versions (`save(..., claims=[Claim, ...])`: a
house table's bot steps). An id claimed before refuses the whole save (`DuplicateCommand`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple
from uuid import UUID

import psycopg
from eventsourcing.persistence import StoredEvent

from infra.errors import DuplicateCommand, RecordedCommand
from infra.store.database import Database, PostgresDatabase, values_insert
from infra.store.senders import current_sender
from infra.store.signing import Signer, command_message

COLUMNS = (("command_id", "text"), ("originator_id", "uuid"), ("first_version", "bigint"),
           ("last_version", "bigint"), ("sender", "text"), ("seal", "bytea"),
           ("seal_key", "text"))
"""A claim's row, each column with its PostgreSQL type (`Database.insert_rows`)."""


class Claim(NamedTuple):
    """A command id claimed in a save's transaction for versions `first_version..last_version`
    of one stream: a save claims one (`save(..., command_id=...)`, `claims_of`) or a run of
    them, each command its own (`save(..., claims=[...])`: a house table's bot steps)."""

    command_id: str
    originator_id: UUID
    first_version: int
    last_version: int


def claims_of(command_id: str | UUID | None, stored_events: Sequence[StoredEvent]
              ) -> list[Claim]:
    """The claim of a save under one command id: the stream of its first event and that
    stream's versions in this batch. None without an id, or without events (a command that
    records no event is not logged: replaying it is harmless)."""
    if command_id is None or not stored_events:
        return []
    first = stored_events[0]
    oid = _uuid(first.originator_id)
    versions = [
        s.originator_version for s in stored_events if s.originator_id == first.originator_id
    ]
    return [Claim(str(command_id), oid, min(versions), max(versions))]


def claim_commands(database: Database, cursor: Any, claims: Sequence[Claim],
                   signer: Signer) -> None:
    """Record the command ids, in one statement, or raise `DuplicateCommand` for the first
    one recorded before (the transaction then rolls back).

    Each row holds its stream and versions, the sender (`infra.store.senders`) and its seal by
    `signer`.

    On PostgreSQL the claim's answer is not waited for: it travels in the recorder's pipeline
    with the events' insert. An id already recorded (or being recorded: the insert waits for
    that transaction to end) fails the claim with a unique violation, and with it the
    statements after it and the transaction; the recorder raises `DuplicateCommand` for it
    (`claimed_before`, `first_claimed`).
    """
    if not claims:
        return
    sender = current_sender()
    rows = [(claim.command_id, database.to_db_id(claim.originator_id), claim.first_version,
             claim.last_version, sender,
             signer.sign(command_message(claim.command_id, claim.originator_id,
                                         claim.first_version, claim.last_version, sender)),
             signer.key_id) for claim in claims]
    if isinstance(database, PostgresDatabase):
        database.insert_rows(cursor, "command_log", COLUMNS, rows)
        return
    taken = {row["command_id"] for row in database.execute(
        cursor, values_insert("command_log", COLUMNS, len(claims))
        + " ON CONFLICT (command_id) DO NOTHING RETURNING command_id",
        [value for row in rows for value in row]).fetchall()}
    if len(taken) < len(claims):
        raise first_claimed(database, cursor, [c for c in claims if c.command_id not in taken])


def first_claimed(database: Database, cursor: Any, claims: Sequence[Claim]
                  ) -> DuplicateCommand:
    """`DuplicateCommand` for the first of `claims` the command log holds (the first of
    them all if none: one was being recorded, and rolled back since)."""
    for claim in claims:
        recorded = recorded_command(database, cursor, claim.command_id)
        if recorded is not None:
            return DuplicateCommand(claim.command_id, recorded)
    return DuplicateCommand(claims[0].command_id, None)


def claimed_before(error: BaseException) -> bool:
    """Whether `error` is PostgreSQL's refusal of a command id the command log holds
    (`claim_commands`)."""
    return (isinstance(error, psycopg.errors.UniqueViolation)
            and error.diag.table_name == "command_log")


def recorded_command(
    database: Database, cursor: Any, command_id: str | UUID
) -> RecordedCommand | None:
    row = database.execute(
        cursor,
        "SELECT originator_id, first_version, last_version FROM {command_log}"
        " WHERE command_id = ?",
        (str(command_id),),
    ).fetchone()
    if row is None:
        return None
    return RecordedCommand(
        database.from_db_id(row["originator_id"]), row["first_version"], row["last_version"]
    )


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(originator_id)
