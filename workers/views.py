"""The views kept caught up by the worker process: a `projections.follower.Follower` thread on
the worker's store, started with `sabot worker` (unless `--no-views`).

The follower runs on the worker's own store (the heartbeat's, bounded by `--db-pool`: one
connection plus one on overflow by default), not a pool of its own. Two workers each run
one: their batches take turns on the views' tracking rows, and each event is applied once.
"""

from __future__ import annotations

from infra.store.opening import Store
from projections.follower import Follower
from projections.registry import VIEWS
from projections.runner import Runner


def start_following(store: Store) -> Follower:
    """A follower of every view of `store`, running in a daemon thread."""
    return Follower(Runner(store, VIEWS)).start()
