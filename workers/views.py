"""The views kept caught up by the worker process: a `projections.follower.Follower` thread on
the worker's store, started with `sabot worker` (unless `--no-views`).

The follower has its own store (its own connections), so that a long batch never holds the
connection the heartbeat or the tasks need. Two workers each run one: their batches take
turns on the views' tracking rows, and each event is applied once.
"""

from __future__ import annotations

from infra.store.opening import open_store
from projections.follower import Follower
from projections.registry import VIEWS
from projections.runner import Runner


def start_following(database_url: str) -> Follower:
    """A follower of every view of the store at `database_url`, running in a daemon thread."""
    return Follower(Runner(open_store(database_url), VIEWS)).start()
