"""The checkpointer: who writes a store's checkpoints (`infra.store.checkpoints`) and when.

Every `SABOT_CHECKPOINT_SECONDS` (default 10) the one writing process that holds the store's
checkpoint lease (`infra.store.checkpoint_lease`: a worker's, where one writes) folds the
events committed since (`infra.store.ledger.advance_tree`), checks that the tree extends the
file's latest checkpoint, signs the tree head and appends it, whoever wrote. Any other writer
looks an interval after its writes whether a checkpoint covers them, and takes the lease if it
has run out. When its store is closed explicitly (and at exit; never by the garbage
collector) a writer signs its last checkpoint if its events are not covered yet, and the holder
lets the lease go. `write_checkpoint(app_or_store)` writes one on demand (e.g. at the end of a
round). A checkpoint waits for the writers in flight at most `SABOT_WRITERS_WAIT_SECONDS`
(`infra.store.ledger.committed_head`); past that it is skipped, logged, and tried again
`SABOT_CHECKPOINT_SECONDS` later.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from infra.errors import ChainError
from infra.store.anchorings import Anchoring, merged, report, reported
from infra.store.checkpoint_lease import CheckpointLease
from infra.store.checkpoints import (
    SUFFIX,
    Checkpoint,
    TreeHead,
    WriterTrust,
    append_line,
    last_checkpoint,
    latest_trusted,
    leaves_after,
    sign_checkpoint,
    tree_head,
)
from infra.store.database import Database
from infra.store.signing import Signer

log = logging.getLogger("sabot.checkpoints")
LOG_EVERY_SECONDS = 60.0  # a writer that keeps failing to checkpoint logs an error this often


class _Witnesses(Protocol):
    """Where a writer's checkpoints go once written (`infra.store.witness_push.Pusher`)."""

    def checkpointed(self, checkpoint: Checkpoint) -> None: ...

    def close(self) -> None: ...


class Checkpointer:
    """Writes the checkpoints of one writer: every `seconds` while it holds the store's lease
    (`infra.store.checkpoint_lease`), at close and at exit if its writes are not covered yet;
    and hands each to its `witnesses`, if any. One that cannot keeps trying every `seconds`,
    logs an error at most every `LOG_EVERY_SECONDS`, and says so (`anchoring`, read by `/ready`
    and the metrics)."""

    def __init__(self, database: Database, path: Path, signer: Signer, seconds: float,
                 witnesses: _Witnesses | None = None) -> None:
        self.database = database
        self.witnesses = witnesses
        self.path = path
        self.signer = signer
        self.seconds = seconds
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._dirty = False
        self._mine = 0  # the last notification id this writer committed
        self.lease = CheckpointLease(database, seconds)
        self._held = False  # whether this writer held the lease at its last turn
        self._closed = False
        self._last: Checkpoint | None = None  # the latest in the file, read at the first write
        self._trust: WriterTrust | None = None
        self._writing = threading.RLock()
        self._writer: int | None = None  # the thread in `_using`
        self._then: Callable[[], None] | None = None  # what `close` left for `_using` to do
        self._failures = 0
        self._failing: str | None = None
        self._logged_at = -LOG_EVERY_SECONDS  # time.monotonic() of the last error logged
        _LIVE.add(self)

    def noted(self, position: int) -> None:
        """A transaction of this writer committed, up to notification `position`: see that
        a checkpoint covers it within `seconds`."""
        with self._lock:
            self._mine = max(self._mine, position)
            self._dirty = True
            self._arm()

    def begin(self) -> None:
        """Take a first turn now, not an interval after a write of this writer's: a worker's
        process at its start, so that the lease comes home before an API replica's first
        turn folds the store (a worker that only directs writes after its first task)."""
        with self._lock:
            self._arm(0.0)

    def _arm(self, seconds: float | None = None) -> None:
        """The next turn in `seconds` (the interval by default; with `_lock` held)."""
        if self._timer is None and not self._closed:
            self._timer = threading.Timer(self.seconds if seconds is None else seconds,
                                          self._tick)
            self._timer.daemon = True
            self._timer.start()

    def _tick(self) -> None:
        """A turn: the lease's holder checkpoints the store, whoever wrote, and takes its next
        turn; another writer waits, turn after turn, for a checkpoint that covers its writes.
        Not once the store is closed: a turn that began as `close` cancelled its timer is the
        store's only user, and `close` waits for it (`_using`)."""
        with self._lock:
            self._timer = None
        with self._using():
            if self._closed:
                return
            self._held = self._holds()
            if self._held:
                self._dirty = True
                self.flush()
            elif self._dirty and self._covered():
                self._dirty = False
            if self._held or self._dirty:
                with self._lock:
                    self._arm()

    def _holds(self) -> bool:
        try:
            return self.lease.hold(time.time())
        except Exception as error:  # the store away: this writer tries as it did alone
            log.debug("checkpoint lease not read: %s", type(error).__name__)
            return self._dirty

    def _covered(self) -> bool:
        """Whether the file's last checkpoint, signed by a trusted key, covers this writer's
        writes."""
        try:
            latest = latest_trusted(self.path, self._trusted())
        except (OSError, ValueError, ChainError):
            return False
        return latest is not None and latest.head >= self._mine

    def _trusted(self) -> dict[str, bytes]:
        """The keys this writer trusts now (`WriterTrust`, made at its first use)."""
        self._trust = self._trust or WriterTrust(self.signer, self.path)
        return self._trust.refresh()

    def flush(self) -> Checkpoint | None:
        """Write a checkpoint if this writer wrote since the last one."""
        if not self._dirty:
            return None
        try:
            return self.write()
        except Exception:  # say so loudly (the events stay unanchored), do not crash
            now = time.monotonic()
            if self._closed or now - self._logged_at >= LOG_EVERY_SECONDS:
                self._logged_at = now
                log.error("no checkpoint written to %s: %s (%d attempts failed%s)", self.path,
                          self._failing, self._failures,
                          "" if self._closed else f"; trying again every {self.seconds:g} s")
            if not self._closed:
                with self._lock:
                    self._dirty = True
                    self._arm()
            return None

    def write(self, *, force: bool = False) -> Checkpoint | None:
        """Sign the store's tree head and append it, unless the file already has that size
        (or `force`). One write at a time; a `close` asked during it (the application
        collected by the garbage collector in this very thread) closes the store after it."""
        with self._using():
            try:
                written = self._write(force)
            except Exception as error:
                self._failures += 1
                self._failing = (str(error).strip().splitlines() or [type(error).__name__])[0]
                raise
            else:
                if self._failing is not None:
                    log.warning("checkpoints written again to %s after %d failed attempts",
                                self.path, self._failures)
                self._failing = None
                return written
            finally:
                self._report()

    @contextmanager
    def _using(self) -> Iterator[None]:
        """This thread alone uses the store for checkpoints (a turn, a write) until the block
        ends; a `close` asked meanwhile in another thread waits for it, one asked in this very
        thread (the application collected by the garbage collector) is done after it."""
        with self._writing:
            outermost = self._writer is None
            self._writer = threading.get_ident()
            try:
                yield
            finally:
                if outermost:
                    self._writer = None
                    then, self._then = self._then, None
                    if then is not None:
                        then()

    def _write(self, force: bool) -> Checkpoint | None:
        self._dirty = False
        trusted = self._trusted()
        self._last = latest_trusted(self.path, trusted, self._last)
        head = tree_head(self.database, trusted)
        last = self._last
        if last is not None:
            _require_extends(self.database, last, head)
        if last is not None and head.tree.size == last.size and not force:
            return None
        checkpoint = sign_checkpoint(head, self.signer, previous=last)
        append_line(self.path, checkpoint)
        self._last = checkpoint
        if self.witnesses is not None:
            self.witnesses.checkpointed(checkpoint)
        return checkpoint

    def _report(self) -> None:
        """Say how this writer's checkpoints fare where the installation reads it."""
        try:
            report(self.database, self.anchoring())
        except Exception as error:  # the store away (its own failure says so) or closed
            log.debug("anchoring not reported: %s", type(error).__name__)

    def anchoring(self) -> Anchoring:
        try:
            latest = last_checkpoint(self.path)  # another writer of the store may have written
        except (OSError, ValueError):
            latest = None
        age = None if latest is None else max(
            0.0, time.time() - datetime.fromisoformat(latest.time).timestamp())
        return Anchoring(self.path.name.removesuffix(SUFFIX), self._failures, self._failing, age)

    def close(self, then: Callable[[], None] = lambda: None) -> None:
        """Write the last checkpoint (the holder's, or this writer's if no checkpoint covers
        its writes yet), let the lease go, push the checkpoint to the witnesses, then do `then`
        (close the store): after the write in flight, if any."""
        with self._lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        _LIVE.discard(self)

        def finish() -> None:
            if self.witnesses is not None:
                self.witnesses.close()
            then()

        if self._writer == threading.get_ident():
            self._then = finish  # closing from inside a turn or `write`: after it
            return
        with self._writing:
            self._dirty = self._held or (self._dirty and not self._covered())
            self.flush()
            if self._held:
                self._release()
        finish()

    def _release(self) -> None:
        try:
            self.lease.release()
        except Exception as error:  # the store away: the lease runs out by itself
            log.debug("checkpoint lease not released: %s", type(error).__name__)


def _require_extends(database: Database, last: Checkpoint, head: TreeHead) -> None:
    """`ChainError` unless the stored tree, just folded, is the tree of `last` (a checkpoint
    by a trusted key) extended by the store's events since: a stored frontier altered (e.g.
    randomised) is never signed into a checkpoint."""
    if head.tree.size < last.size:
        raise ChainError(f"no checkpoint: the stored Merkle tree (merkle_tree) holds "
                         f"{head.tree.size} events, fewer than the checkpoint of {last.size}: "
                         "the store was altered; run `sabot audit verify`")
    try:
        tree = last.tree()
    except ValueError as error:
        raise ChainError(f"no checkpoint: {error}") from None
    for leaf in leaves_after(database, last.head, head.tree.size - last.size):
        tree.append(leaf)
    if tree.root() != head.tree.root():
        raise ChainError(f"no checkpoint: the stored Merkle tree (merkle_tree) of "
                         f"{head.tree.size} events does not extend the checkpoint of "
                         f"{last.size} by the store's events: the stored tree was altered; "
                         "run `sabot audit verify`")


_LIVE: weakref.WeakSet[Checkpointer] = weakref.WeakSet()


def anchoring(database: Database | None = None) -> list[Anchoring]:
    """How the checkpoints of this process's open writers fare, one a store (its writers'
    failures added, the reason of any failing, the latest checkpoint's age); with `database`,
    the whole installation's: the other processes' reports there too (`infra.store.anchorings`)."""
    own = [c.anchoring() for c in list(_LIVE)]
    return merged(own if database is None else [*own, *reported(database)])


@atexit.register
def _close_all() -> None:
    for checkpointer in list(_LIVE):
        checkpointer.close()


class _Writer(Protocol):
    @property
    def recorder(self) -> Any: ...


def begin_checkpoints(writer: _Writer) -> None:
    """A worker's process at its start: its writer of `writer`'s store (each home's) takes its
    first checkpoint turn now (`Checkpointer.begin`)."""
    writer.recorder.begin_checkpoints()


def write_checkpoint(writer: _Writer) -> Checkpoint | None:
    """Write a checkpoint now for a `SabotApplication` or an `infra.store.opening.Store` (e.g. at
    the end of a round); None for an in-memory store, or when the file already holds this size."""
    written: Checkpoint | None = writer.recorder.write_checkpoint()
    return written
