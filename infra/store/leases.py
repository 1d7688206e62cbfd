"""Leases with fencing epochs: one director acts for a tournament at a time.

`tournament_leases` holds, per tournament, the holder, its epoch and when the lease expires.
`acquire` renews the holder's own lease, or takes an expired one with the epoch raised by
one; it answers the epoch held, or None while another holder's lease runs. The director
records each new epoch in the tournament (`Tournament.appoint`), and the aggregate refuses a
command from an older epoch: a director that lost its lease without knowing it (paused,
partitioned) cannot act on top of its successor.
"""

from __future__ import annotations

import uuid

import msgspec

from infra.store.database import Database


class Lease(msgspec.Struct, frozen=True):
    """Who directs a tournament: the holder, its epoch, and when its lease runs out (seconds
    since the epoch); a director alive renews it every few seconds."""

    holder: str
    epoch: int
    expires: float


class Leases:
    def __init__(self, database: Database) -> None:
        self.database = database

    def acquire(self, tournament_id: uuid.UUID, holder: str, now: float,
                seconds: float) -> int | None:
        """The epoch `holder` holds the lease with until `now + seconds`, or None."""
        with self.database.transaction(write=True) as cursor:
            row = self.database.execute(
                cursor,
                "INSERT INTO {tournament_leases} AS lease (tournament_id, holder, epoch, expires)"
                " VALUES (?, ?, 1, ?) ON CONFLICT (tournament_id) DO UPDATE SET"
                " epoch = CASE WHEN lease.holder = excluded.holder THEN lease.epoch"
                " ELSE lease.epoch + 1 END, holder = excluded.holder, expires = excluded.expires"
                " WHERE lease.holder = excluded.holder OR lease.expires < ? RETURNING epoch",
                (str(tournament_id), holder, now + seconds, now),
            ).fetchone()
        return None if row is None else int(row["epoch"])

    def held(self, tournament_id: uuid.UUID) -> Lease | None:
        """The lease as last taken, or None if no director ever took it."""
        with self.database.transaction(write=False) as cursor:
            row = self.database.execute(
                cursor, "SELECT holder, epoch, expires FROM {tournament_leases}"
                " WHERE tournament_id = ?", (str(tournament_id),)).fetchone()
        if row is None:
            return None
        return Lease(holder=row["holder"], epoch=int(row["epoch"]),
                     expires=float(row["expires"]))

    def renew(self, holder: str, now: float, seconds: float) -> None:
        """Extend every lease `holder` still holds (a director alive, busy elsewhere)."""
        with self.database.transaction(write=True) as cursor:
            self.database.execute(
                cursor, "UPDATE {tournament_leases} SET expires = ? WHERE holder = ?"
                " AND expires >= ?", (now + seconds, holder, now))

    def release(self, tournament_id: uuid.UUID, holder: str) -> None:
        """Let the lease go at once (a clean stop), so a successor need not wait."""
        with self.database.transaction(write=True) as cursor:
            self.database.execute(
                cursor, "UPDATE {tournament_leases} SET expires = 0"
                " WHERE tournament_id = ? AND holder = ?", (str(tournament_id), holder))
