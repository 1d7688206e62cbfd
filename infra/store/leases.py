"""Leases with fencing epochs: one director acts for a tournament at a time.

`tournament_leases` holds, per tournament, the holder, its epoch and when the lease expires.
`acquire` renews the holder's own lease, or takes an expired one with the epoch raised by
one; it answers the epoch held, or None while another holder's lease runs. The director
records each new epoch in the tournament (`Tournament.appoint`), and the aggregate refuses a
command from an older epoch: a director that lost its lease without knowing it (paused,
partitioned) cannot act on top of its successor.

Several director processes share the tournaments out (`Census`): each renews, with its
leases, a row of its own (`holder/<holder>`, epoch 0: a heartbeat, not a tournament's lease),
so the directors alive are those whose row has not run out; each holds at most its fair share,
ceil(tournaments / directors), takes a free lease only while under it and gives leases back
when over it (a director joined). A director that dies stops renewing: its leases and its row
run out together, and the others' shares grow over its tournaments.

A lease taken is trusted, without asking the store again, until less than half of its time is
left (`acquire` then renews it): no other holder can take it before it expires, since a take
needs `expires < now`, and this holder lets it go only through `release`, which forgets it
here too. Trusting it is as safe as the renewal it saves was: a director paused past its
lease's expiry acts on stale ground either way, and the epoch recorded in the tournament
(`Tournament.appoint`) stays the guard that fences its commands off.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence

import msgspec

from infra.store.database import Database


class Lease(msgspec.Struct, frozen=True):
    """Who directs a tournament: the holder, its epoch, and when its lease runs out (seconds
    since the epoch); a director alive renews it every few seconds."""

    holder: str
    epoch: int
    expires: float


HOLDER = "holder/"  # the key of a director's own row in the leases' table: its heartbeat
FORGOTTEN = 60.0  # seconds after which a dead director's row is deleted


class Census(msgspec.Struct, frozen=True):
    """The directors alive (`holders`, this one included) and who holds each live lease
    (`owners`, by tournament id), as a director saw them at the start of its turn."""

    holders: int
    owners: dict[str, str]

    def share(self, tournaments: Sequence[uuid.UUID], holder: str
              ) -> tuple[list[uuid.UUID], list[uuid.UUID]]:
        """Of the running `tournaments` (oldest first), those `holder` directs this turn (its
        own, then free ones while under its share) and those it gives back (over its share)."""
        share = math.ceil(len(tournaments) / max(1, self.holders))
        mine = [t for t in tournaments if self.owners.get(str(t)) == holder]
        free = [t for t in tournaments if str(t) not in self.owners]
        return mine[:share] + free[:max(0, share - len(mine))], mine[share:]


class Leases:
    def __init__(self, database: Database) -> None:
        self.database = database
        # the leases taken through this object: (tournament, holder) -> (epoch, expires)
        self._taken: dict[tuple[uuid.UUID, str], tuple[int, float]] = {}

    def acquire(self, tournament_id: uuid.UUID, holder: str, now: float,
                seconds: float) -> int | None:
        """The epoch `holder` holds the lease with until at least `now + seconds / 2` (renewed
        to `now + seconds` once less than half of its time is left), or None."""
        taken = self._taken.get((tournament_id, holder))
        if taken is not None and now < taken[1] - seconds / 2:
            return taken[0]
        epoch = self._acquire(tournament_id, holder, now, seconds)
        if epoch is None:
            self._taken.pop((tournament_id, holder), None)
        else:
            self._taken[(tournament_id, holder)] = (epoch, now + seconds)
        return epoch

    def _acquire(self, tournament_id: uuid.UUID, holder: str, now: float,
                 seconds: float) -> int | None:
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
        """Extend every lease `holder` still holds (a director alive, busy elsewhere), and
        its own row."""
        with self.database.transaction(write=True) as cursor:
            self._renew(cursor, holder, now, seconds)

    def census(self, holder: str, now: float, seconds: float) -> Census:
        """Renew as `renew` does, forget the directors long dead, and count who is alive."""
        with self.database.transaction(write=True) as cursor:
            self._renew(cursor, holder, now, seconds)
            self.database.execute(
                cursor, "DELETE FROM {tournament_leases} WHERE epoch = 0 AND expires < ?",
                (now - FORGOTTEN,))
            rows = self.database.execute(
                cursor, "SELECT tournament_id, holder FROM {tournament_leases}"
                " WHERE expires >= ?", (now,)).fetchall()
        holders = sum(row["tournament_id"].startswith(HOLDER) for row in rows)
        return Census(holders=holders, owners={
            row["tournament_id"]: row["holder"] for row in rows
            if not row["tournament_id"].startswith(HOLDER)})

    def _renew(self, cursor: object, holder: str, now: float, seconds: float) -> None:
        self.database.execute(
            cursor, "INSERT INTO {tournament_leases} (tournament_id, holder, epoch, expires)"
            " VALUES (?, ?, 0, ?) ON CONFLICT (tournament_id) DO UPDATE SET"
            " expires = excluded.expires", (HOLDER + holder, holder, now + seconds))
        self.database.execute(
            cursor, "UPDATE {tournament_leases} SET expires = ? WHERE holder = ?"
            " AND expires >= ?", (now + seconds, holder, now))

    def release(self, tournament_id: uuid.UUID, holder: str) -> None:
        """Let the lease go at once (a clean stop), so a successor need not wait."""
        self._taken.pop((tournament_id, holder), None)
        with self.database.transaction(write=True) as cursor:
            self.database.execute(
                cursor, "UPDATE {tournament_leases} SET expires = 0"
                " WHERE tournament_id = ? AND holder = ?", (str(tournament_id), holder))
