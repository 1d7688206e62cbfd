"""Who checkpoints a store: one writing process at a time, by lease.

Every writing process used to fold the store's new events and sign a checkpoint of its own
`SABOT_CHECKPOINT_SECONDS` after its writes: two API replicas and a director each folded and
signed the whole installation's events, and each replica's CPU grew with the others' writes.
Now the process that holds the store's lease (the one row of `checkpoint_lease`, migration 10)
checkpoints the store every interval, whoever wrote (`infra.store.checkpointer.Checkpointer`);
the other writers only look, an interval after their writes, whether a checkpoint has come to
cover them (the file's last line), and take the lease once it has run out (its holder gone: a
kill -9, a lost host). A holder renews its lease at each of its turns; it runs out after
`TURNS` intervals without one.

A worker's process (`sabot worker`, so also the embedded worker of `sabot serve`) is the
lease's home (`SABOT_CHECKPOINT_HOME=1`, which `sabot worker` sets): it takes the lease from a
holder that is not one, so that an API replica that took it first gives it up to the director,
and it takes its first turn at its start (`Checkpointer.begin`), not after a write of its own,
so that a replica's first turn finds the lease held (in the topology benchmark a replica folded
the whole store once, at its first turn, before the workers had written). Any other writer
takes it only when it has run out.

At a clean exit (SIGTERM, SIGINT, the end of `sabot play`) a writer signs its last checkpoint
itself if its events are not covered yet, and a holder lets the lease go, so that the next
writer need not wait for it to run out.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping

from infra.store.anchorings import process_name
from infra.store.database import Database

TURNS = 3.0  # intervals a lease lasts without renewal


def home_process(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process is the lease's home (`SABOT_CHECKPOINT_HOME=1`: a worker)."""
    return (os.environ if environ is None else environ).get("SABOT_CHECKPOINT_HOME", "") == "1"


class CheckpointLease:
    """One writer's hold on its store's checkpoints: `hold` takes or renews the lease."""

    def __init__(self, database: Database, seconds: float, home: bool | None = None) -> None:
        self.database = database
        self.seconds = TURNS * seconds
        self.home = home_process() if home is None else home
        self.holder = f"{process_name()}/{uuid.uuid4().hex[:6]}"  # one a writer: a process
        # may open several writers on one store, and only one of them should fold it

    def hold(self, now: float) -> bool:
        """Whether this writer holds the lease until `now` + its time: renewed if it held it,
        taken if it ran out, or from a holder that is not a home if this one is."""
        with self.database.transaction(write=True) as cursor:
            row = self.database.execute(
                cursor, "INSERT INTO {checkpoint_lease} AS lease (id, holder, home, expires)"
                " VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET holder = excluded.holder,"
                " home = excluded.home, expires = excluded.expires"
                " WHERE lease.holder = excluded.holder OR lease.expires < ?"
                " OR excluded.home > lease.home RETURNING holder",
                (self.holder, int(self.home), now + self.seconds, now)).fetchone()
        return row is not None

    def release(self) -> None:
        """Let the lease go (a clean exit), if this writer holds it."""
        with self.database.transaction(write=True) as cursor:
            self.database.execute(cursor, "UPDATE {checkpoint_lease} SET expires = 0"
                                  " WHERE id = 1 AND holder = ?", (self.holder,))
