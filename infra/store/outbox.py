"""The outbox: a command's follow-up effects, recorded in its own transaction, then dispatched.

A table command may call for more than its events: waking the table's live subscribers
(`Wake`), scheduling the deadline of the decision it now awaits (`Deadline`), of the turn
to bet it now awaits (`BetDeadline`, a rotating betting order with a bet clock: the seconds its
`BetTurnBegan` recorded, `domain.table.clocks`) or of the shoe it now offers a person
(`BankDeadline`, the seconds its `DecisionClockStarted` recorded: the shoe passes on when
they run out). The service
works them out from the table it saved (`follow_ups`) and passes them to `save(...,
outbox={command_id: effects})` (a run of bot steps saved at once: each command's); the
recorders (`OutboxSQLiteRecorder`, `OutboxPostgresRecorder`) write them to the `outbox` table
in the same transaction as the events, so an effect exists exactly
when its command does. Once committed, the service hands each effect to the handler this
process registered for its kind (`Dispatcher.on`), whichever adapter sent the command (an
HTTP route, the CLI, a worker, the director), and marks it dispatched. A handler that fails
(the broker is down) leaves its effect pending: the command has succeeded all the same, and
the next dispatch in any process sends the pending effects first (`Dispatcher.relay`).
Dispatched effects are kept `SABOT_OUTBOX_RETENTION` seconds (24 hours by default, for an
operator looking into what a command set off), then deleted by the dispatch that comes once an
hour (`Dispatcher.expire`, in batches of short transactions); pending effects are never deleted.
A handler runs with the effect's `command_id` bound in the log context (and, relayed, without
the request id of the request that happens to relay it), which the tasks it sends carry on
(`workers.logging.trace_headers`).
A process without a handler for a kind leaves those effects to one that has: the API relays
what is pending when it starts (a table's wake-ups collapse into its latest), and sweeps every
second (`Sweeper`): an effect still pending a sweep after it was first seen pending is relayed
(`Dispatcher.sweep`). So a clock armed by a process with no clock handler (the CLI's `sabot
tournament resume`) or by one that died before dispatching fires all the same, a second late
at most, instead of waiting for the next command that happens to relay it.

A busy sender (the director, a command after another) may mark what it sent in batches
(`Dispatcher.mark_batch`): the effects sent are marked `mark_batch` commands at a time in one
UPDATE, and at `flush` (the director's turn ends, the process stops, a relay is due); with
`mark_within` (the API's: `Dispatcher.batch_marks`), also by a timer at most that many seconds
after the first of them was sent, so that a quiet process leaves none unmarked for long, and
when it stops (`Dispatcher.close`). Nothing is lost this way: an effect is marked only once
sent, and one sent but not yet marked when its process died is sent again by a relay, which
its consumer takes as the duplicate it is (a deadline's default has its own command id,
applied once; a wake-up wakes).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, get_args

import msgspec
import structlog

from domain.game.coup import Side
from domain.table.aggregate import Table
from domain.table.betting_order import bettor
from domain.table.clocks import offer_awaited
from infra.settings import outbox_retention
from infra.store.database import Database
from infra.store.recorders import (
    ChainedPostgresApplicationRecorder,
    ChainedSQLiteApplicationRecorder,
)
from infra.store.senders import HOUSE, sending_as

log = structlog.get_logger("sabot.outbox")

RELAY_BATCH = 1000
EXPIRY_INTERVAL = 3600.0  # seconds between two expiries of dispatched effects, per process
EXPIRY_BATCH = 2000  # effects deleted in one transaction


class Wake(msgspec.Struct, frozen=True, tag="wake"):
    """The table has events up to `version`: wake its live subscribers."""

    table_id: uuid.UUID
    version: int


class Deadline(msgspec.Struct, frozen=True, tag="deadline"):
    """The table awaits `side`'s decision in `coup`: play the default after `seconds`."""

    table_id: uuid.UUID
    coup: int
    side: Side
    seconds: float


class BetDeadline(msgspec.Struct, frozen=True, tag="bet-deadline"):
    """The table awaits `player`'s turn to bet on `coup`: pass it after `seconds`."""

    table_id: uuid.UUID
    coup: int
    player: str
    seconds: float


class BankDeadline(msgspec.Struct, frozen=True, tag="bank-deadline"):
    """The shoe is offered to `player` after `coup`: let it pass on after `seconds`."""

    table_id: uuid.UUID
    coup: int
    player: str
    seconds: float


Clock = Deadline | BetDeadline | BankDeadline
"""A clock a table's command starts: the default played when it runs out."""
CLOCKS: tuple[type[Clock], ...] = get_args(Clock)
"""Each kind of `Clock`, for the handlers that send them all (`Dispatcher.on`)."""
Effect = Wake | Clock
_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Effect)


def follow_ups(table: Table) -> list[Effect]:
    """What a command that left `table` as it is calls for, besides its events."""
    effects: list[Effect] = [Wake(table.id, table.version)]
    state = table.state
    side = state.coup.to_act() if state.coup is not None else None
    if side is not None and state.settings.decision_seconds:
        effects.append(Deadline(table.id, state.coup_number, side,
                                state.settings.decision_seconds))
    player = bettor(state)
    seconds = state.turn_seconds or state.settings.bet_seconds  # BetTurnBegan's clock
    if player is not None and seconds:
        effects.append(BetDeadline(table.id, state.coup_number + 1, player, seconds))
    offer = offer_awaited(state)  # DecisionClockStarted's, a person's only
    if offer is not None:
        effects.append(BankDeadline(table.id, *offer))
    return effects


def record(database: Database, cursor: Any, command_id: str | None,
           effects: Sequence[Effect]) -> None:
    """Write `effects` in the transaction of `cursor` (the command's own)."""
    for effect in effects:
        database.execute(cursor, "INSERT INTO {outbox} (command_id, kind, effect)"
                         " VALUES (?, ?, ?)", (command_id or "", kind_of(type(effect)),
                                               _encoder.encode(effect)))


def kind_of(effect: type[Any]) -> str:
    tag: str = effect.__struct_config__.tag
    return tag


class _Outboxed:
    """The chained recorders, writing `save(..., outbox={command_id: [...]})`'s effects, each
    command's under its id, with the events."""

    database: Database

    def _insert_events(self, cursor: Any, stored_events: Sequence[Any], **kwargs: Any) -> Any:
        ids = super()._insert_events(cursor, stored_events, **kwargs)  # type: ignore[misc]
        if stored_events:
            outbox: Mapping[str, Sequence[Effect]] = kwargs.get("outbox") or {}
            for command_id, effects in outbox.items():
                record(self.database, cursor, command_id, effects)
        return ids


# The cursor is named `c` by eventsourcing's SQLite recorder, `curs` by its PostgreSQL one.
class OutboxSQLiteRecorder(_Outboxed, ChainedSQLiteApplicationRecorder):  # type: ignore[misc]
    pass


class OutboxPostgresRecorder(_Outboxed, ChainedPostgresApplicationRecorder):  # type: ignore[misc]
    pass


class Dispatcher:
    """Hands committed effects to this process's handlers, and marks them dispatched."""

    def __init__(self, database: Database, *, homes: Sequence[Database] = (),
                 retention: float | None = None, clock: Callable[[], float] = time.time,
                 mark_batch: int = 1) -> None:
        self.databases = [database, *homes]  # each home's outbox (`infra.store.homes`)
        self.mark_batch = mark_batch  # commands whose sent effects are marked at once
        self.mark_within: float | None = None  # seconds an effect sent may wait for its mark
        self._timer: threading.Timer | None = None
        self._unmarked: dict[Database | None, dict[str, set[str]]] = {}  # home: id: kinds
        self._unmarked_lock = threading.Lock()
        self._flushing = threading.Lock()  # the timer's marks, which `close` waits for
        self.handlers: dict[type[Any], Callable[[Any], object]] = {}
        self.failed = False  # an effect is known pending: relay before the next dispatch
        self.retention = outbox_retention() if retention is None else retention
        self.clock = clock
        self.next_expiry = 0.0  # the first dispatch expires what is due
        self._seen: dict[int, int] | None = None  # database index: last id pending at a sweep

    def on(self, kind: type[Any], handler: Callable[[Any], object]) -> None:
        """Dispatch the effects of `kind` (`Wake`, or a `Clock`'s) to `handler` in
        this process."""
        self.handlers[kind] = handler

    def batch_marks(self, commands: int, within: float) -> None:
        """Mark what is sent `commands` commands at a time, and at most `within` seconds after
        the first of them was sent (a timer): no transaction of its own for each command."""
        self.mark_batch, self.mark_within = commands, within

    def close(self) -> None:
        """Mark what was sent and is not yet: the process (or its service) stops."""
        with self._unmarked_lock:
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        with self._flushing:  # after the timer's marks in flight: the store closes next
            self.flush()

    def dispatch(self, command_id: str, effects: Sequence[Effect],
                 home: Database | None = None) -> None:
        """Send a command's effects just committed (in the outbox of `home`, the database its
        events went to; default: look in every one); never raises for a handler's failure."""
        if not self.handlers:
            return
        if self.failed:
            self.relay(before=command_id)
        handled = [e for e in effects if type(e) in self.handlers]
        if handled and all([self._send(e, command_id) for e in handled]):
            with self._unmarked_lock:
                self._unmarked.setdefault(home, {}).setdefault(command_id, set()).update(
                    kind_of(type(e)) for e in handled)
                due = sum(map(len, self._unmarked.values())) >= self.mark_batch
                if not due and self.mark_within is not None and self._timer is None:
                    self._timer = threading.Timer(self.mark_within, self._flush_on_time)
                    self._timer.daemon = True
                    self._timer.start()
            if due:
                self.flush()
        if self.clock() >= self.next_expiry:
            self.expire()

    def flush(self) -> None:
        """Mark dispatched the effects sent and not yet marked: one transaction a home, an
        UPDATE for each set of kinds the commands sent (`dispatch` marks none of a command
        with one failed, so each command's kinds sent select its effects sent)."""
        with self._unmarked_lock:
            unmarked, self._unmarked = self._unmarked, {}
        for home, commands in unmarked.items():
            by_kinds: dict[tuple[str, ...], list[str]] = {}
            for command_id, kinds in commands.items():
                by_kinds.setdefault(tuple(sorted(kinds)), []).append(command_id)
            self._mark([(f"command_id IN ({', '.join('?' * len(ids))})"
                         f" AND kind IN ({', '.join('?' * len(kinds))})", (*ids, *kinds))
                        for kinds, ids in by_kinds.items()], None if home is None else [home])

    def _flush_on_time(self) -> None:
        with self._unmarked_lock:
            self._timer = None
        try:
            with self._flushing:
                self.flush()
        except Exception as error:  # the store away: they stay pending, relayed (sent again
            self.failed = True  # and marked) by the next dispatch
            log.warning("outbox.mark-failed", error=type(error).__name__)

    def expire(self) -> int:
        """Delete the effects dispatched more than `retention` seconds ago (and those
        dispatched before the outbox kept the time); a pending effect is never deleted. How
        many went. Run from `dispatch` once every `EXPIRY_INTERVAL` seconds."""
        now = self.clock()
        self.next_expiry = now + EXPIRY_INTERVAL
        deleted = 0
        for database in self.databases:
            batch = EXPIRY_BATCH
            while batch == EXPIRY_BATCH:  # short transactions: writers wait a moment at most
                with database.transaction(write=True) as cursor:
                    batch = len(database.execute(
                        cursor, "DELETE FROM {outbox} WHERE id IN (SELECT id FROM {outbox}"
                        " WHERE dispatched AND (dispatched_at IS NULL OR dispatched_at < ?)"
                        f" LIMIT {EXPIRY_BATCH}) RETURNING id",
                        (now - self.retention,)).fetchall())
                deleted += batch
        if deleted:
            log.info("outbox.expired", effects=deleted, retention=self.retention)
        return deleted

    def sweep(self) -> int:
        """Relay the effects that were pending at the previous sweep and still are (a process
        with no handler for them recorded them, or died before sending them); how many were
        sent. The first sweep only notes what is pending: an effect just committed is its
        committing process's to send."""
        if not self.handlers:
            return 0
        seen, self._seen = self._seen, self._pending_heads()
        return self.relay(upto=seen) if seen and any(seen.values()) else 0

    def _pending_heads(self) -> dict[int, int]:
        """Each outbox's last pending effect this process has a handler for (0: none)."""
        kinds = sorted(kind_of(kind) for kind in self.handlers)
        heads: dict[int, int] = {}
        for index, database in enumerate(self.databases):
            with database.transaction(write=False) as cursor:
                row = database.execute(
                    cursor, "SELECT max(id) AS head FROM {outbox} WHERE NOT dispatched"
                    f" AND kind IN ({', '.join('?' * len(kinds))})", tuple(kinds)).fetchone()
            heads[index] = int(row["head"] or 0)
        return heads

    def relay(self, before: str = "", upto: Mapping[int, int] | None = None) -> int:
        """Send the pending effects this process has handlers for (but those of the command
        `before`, sent next; with `upto`, only those up to that id in each outbox, by its index
        in `databases`); how many were sent or found superseded."""
        self.flush()  # what was sent is not sent again
        kinds = sorted(kind_of(kind) for kind in self.handlers)
        self.failed = False
        effects: list[tuple[Database, int, str, Effect]] = []
        for index, database in enumerate(self.databases):
            last = None if upto is None else upto.get(index, 0)
            if last == 0:
                continue
            with database.transaction(write=False) as cursor:
                rows = database.execute(
                    cursor, "SELECT id, command_id, effect FROM {outbox} WHERE NOT dispatched"
                    f" AND kind IN ({', '.join('?' * len(kinds))}) AND command_id <> ?"
                    + ("" if last is None else " AND id <= ?")
                    + f" ORDER BY id LIMIT {RELAY_BATCH}",
                    (*kinds, before, *(() if last is None else (last,)))).fetchall()
            effects.extend((database, row["id"], row["command_id"],
                            _decoder.decode(bytes(row["effect"]))) for row in rows)
        latest: dict[uuid.UUID, Wake] = {}  # a table's last wake-up says all the earlier ones do
        for _, _, _, effect in effects:
            if isinstance(effect, Wake) and effect.version >= latest.get(
                    effect.table_id, effect).version:
                latest[effect.table_id] = effect
        with structlog.contextvars.bound_contextvars(request_id=None):  # not this request's
            sent = [(database, row_id) for database, row_id, command_id, effect in effects
                    if (isinstance(effect, Wake) and latest[effect.table_id] is not effect)
                    or self._send(effect, command_id)]
        for database in self.databases:
            ids = tuple(row_id for home, row_id in sent if home is database)
            if ids:
                self._mark([(f"id IN ({', '.join('?' * len(ids))})", ids)], [database])
        return len(sent)

    def _send(self, effect: Effect, command_id: str) -> bool:
        try:
            with (structlog.contextvars.bound_contextvars(command_id=command_id),
                  sending_as(HOUSE)):  # what follows a command is the house's
                self.handlers[type(effect)](effect)
        except Exception as error:  # a broker outage: the effect waits, the command stands
            self.failed = True
            log.warning("outbox.dispatch-failed", effect=kind_of(type(effect)),
                        table_id=str(effect.table_id), error=type(error).__name__)
            return False
        return True

    def _mark(self, marks: Sequence[tuple[str, tuple[Any, ...]]],
              databases: Sequence[Database] | None = None) -> None:
        """Mark dispatched what each `where` of `marks` selects, in `databases` (default: every
        home's outbox, since a command's effects are in the home its events went to)."""
        for database in self.databases if databases is None else databases:
            with database.transaction(write=True) as cursor:
                for where, params in marks:
                    database.execute(cursor, "UPDATE {outbox} SET dispatched = ?,"
                                     f" dispatched_at = ? WHERE {where}",
                                     (True, self.clock(), *params))


class Sweeper:
    """Sweeps a dispatcher's outbox every `interval` seconds on a thread of its own
    (`Dispatcher.sweep`), until closed; a sweep that fails (the store away) is logged and the
    next one tries again."""

    def __init__(self, dispatcher: Dispatcher, interval: float = 1.0) -> None:
        self.dispatcher = dispatcher
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="outbox-sweeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval + 5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.dispatcher.sweep()
            except Exception as error:
                log.warning("outbox.sweep-failed", error=type(error).__name__)
