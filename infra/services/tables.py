"""The table service: load a table once, let the Table aggregate decide, save its events.

One command is one transaction; a run of a house table's bot steps is one too
(`execute_run`: each command logged under its own id, as if saved alone). A command id seen
before answers what it answered the first time and records nothing. Commands on one table
queue in the process; one that lost a race to another process decides again holding the
aggregate's lock in the database (`infra.store.aggregate_locks`), on SQLite after a jittered
moment; a few rounds lost (its tournament kept moving) end in a `Conflict`. RNG shoes are
drawn here (the domain has no randomness): the seed goes to the vault, sealed, and only its
commitment into the events; each card is read off the shoe's order when it is dealt or
burned (`VaultCards`, the domain's `CardSource`).

Loading: the service keeps the aggregates it saved, as saved; a load reads only the events
recorded since (by another process) onto a fork of the kept one (`fork`: a msgspec copy of
its state), a miss the latest snapshot and the events after it. A command decides on a fork,
kept once saved: a refused command or a lost race never touches what is kept.

Follow-up effects (live wake-ups, a decision's deadline) are saved with the command's events
(a run's: those of the table it leaves, once) and dispatched once it commits, through the
handlers this process registered on `service.effects` (`infra.store.outbox`); with
`SABOT_BROKER_URL` on Redis, every service publishes its wake-ups there from the start.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import random
import secrets
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple, cast

import msgspec
from eventsourcing.persistence import IntegrityError, Recording

from domain.errors import DomainError, NotFound, OutOfTurn, RuleViolation
from domain.game.cards import Card
from domain.game.settings import TableSettings
from domain.game.shoe import Shoe, commitment, shoe_order
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.room import FREE_ROOM, Room
from domain.table.state import TableState
from domain.tournament.aggregate import Tournament
from infra.errors import DuplicateCommand, SeedAlreadySealed
from infra.services.application import SabotApplication
from infra.services.table_names import TableNames
from infra.store.aggregate_locks import AggregateLocks
from infra.store.answers import KeptAnswer
from infra.store.command_log import Claim
from infra.store.ledger import ReadAt
from infra.store.live_push import RedisWake, is_redis
from infra.store.outbox import Clock, Dispatcher, Effect, Wake, follow_ups
from infra.store.outbox import record as record_effects

RETRIES = 8
BACKOFF = 0.005  # seconds: a race lost to another process waits up to 20 ms, then 40 ms...
Decide = Callable[[Any], Sequence[ReadAt] | None]
"""A command decided on a loaded aggregate: the other streams it read (`ReadAt`), if any."""


Rooms = Callable[[Table], tuple[Room, list[ReadAt]]]
"""The room a table decides in (at its coup), and what of its tournament that read."""


class _Step(NamedTuple):
    """One command of a run saved at once (`TableService.execute_run`): its claim and its
    events as answered."""

    claim: Claim
    events: list[dict[str, Any]]


class Conflict(OutOfTurn):
    """Another command on the same table won the race, every time we tried."""


@dataclass(frozen=True)
class Recorded:
    """What a command did: the aggregate it acted on (`table_id`: a table, or an auction or a
    tournament through `apply_once`), its version after, and the events it recorded.
    `aggregate`: the aggregate as saved (None when the answer is a command id's earlier one),
    so that the caller need not load it again. `position`: the notification id of its last
    event in the main database's log (what a view read's `?at=` waits for), given again when a
    command id seen before answers; None when it recorded nothing or lives in another home
    (`infra.store.homes`). `saved`: the events themselves, when this process recorded them
    just now (none when the answer is an earlier one's), so that the caller need not read them
    back."""

    table_id: uuid.UUID
    version: int
    events: list[dict[str, Any]]
    aggregate: Any = field(default=None, compare=False, repr=False)
    position: int | None = None
    saved: list[Any] = field(default_factory=list, compare=False, repr=False)

    @property
    def state(self) -> TableState | None:
        """The table's state after the command, when it acted on a table just now."""
        return self.aggregate.state if isinstance(self.aggregate, Table) else None


@lru_cache(maxsize=256)
def _order(shoe: Shoe, seed: bytes) -> tuple[Card, ...]:
    return tuple(shoe_order(shoe, seed))


def describe(event: Any) -> dict[str, Any]:
    """An event as a plain dict: its type, version, and fields (for answers and views)."""
    fields = {k: v for k, v in event.__dict__.items()
              if k not in ("originator_id", "originator_topic")}
    return {"type": type(event).__name__, **msgspec.to_builtins(fields)}


def random_seeds(table_id: uuid.UUID, taille: int) -> bytes:
    """The production seed source: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(32)


def seeds_from(master: bytes) -> Callable[[uuid.UUID, int], bytes]:
    """A reproducible seed source for bot games and tests: HMAC(master, table/taille)."""

    def seed(table_id: uuid.UUID, taille: int) -> bytes:
        return hmac.new(master, f"{table_id}/{taille}".encode(), hashlib.sha256).digest()

    return seed


def seating_seed_from(master: bytes) -> bytes:
    """A tournament's seating seed: HMAC(master, "seating")."""
    return hmac.new(master, b"seating", hashlib.sha256).digest()


def fork(aggregate: Any) -> Any:
    """A copy of an aggregate to decide on: its attributes shared, its state (a msgspec
    struct) copied through MessagePack, as a snapshot would be (a tenth of a deep copy)."""
    forked = copy.copy(aggregate)
    forked._pending_events = []
    state = getattr(aggregate, "state", None)
    if isinstance(state, msgspec.Struct):
        forked.state = msgspec.msgpack.decode(msgspec.msgpack.encode(state), type=type(state))
    else:
        forked.__dict__.update(copy.deepcopy({k: v for k, v in vars(aggregate).items()
                                              if k != "_pending_events"}))
    return forked


class VaultCards:
    """The domain's `CardSource` on the seed vault: seeds drawn by `seed_source` and sealed,
    cards read off the shoe's order."""

    def __init__(self, service: TableService) -> None:
        self.service = service
        self._seeds: OrderedDict[str, bytes] = OrderedDict()  # unsealed once a shoe

    def seal_seed(self, table_id: uuid.UUID, taille: int) -> str:
        seed = self.service.seed_source(table_id, taille)
        committed = commitment(seed)
        with suppress(SeedAlreadySealed):  # a retried shuffle drew the same seed
            self.service.vault.store(committed, seed)
        return committed

    def card_at(self, shoe: Shoe, position: int) -> Card:
        return _order(shoe, self.seed_of(shoe.commitment))[position]

    def seed_of(self, commitment: str) -> bytes:
        seed = self._seeds.get(commitment)
        if seed is None:
            seed = self._seeds[commitment] = self.service.vault.unseal(commitment)
            while len(self._seeds) > 64:
                self._seeds.popitem(last=False)
        return seed


class TableService(SabotApplication):
    snapshotting_intervals: ClassVar[dict[type, int]] = {Table: 100}
    # The service keeps its own saved aggregates (see the module's docstring; how many:
    # SABOT_KEPT_AGGREGATES, 0 for none): eventsourcing's cache would deep-copy every load.
    env: ClassVar[dict[str, str]] = {"AGGREGATE_CACHE_MAXSIZE": "", "SABOT_KEPT_AGGREGATES": "256"}
    seed_source: Callable[[uuid.UUID, int], bytes] = staticmethod(random_seeds)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kept_aggregates = int(self.env.get("SABOT_KEPT_AGGREGATES") or 0)
        self._kept: OrderedDict[uuid.UUID, Any] = OrderedDict()
        self._kept_lock = threading.Lock()
        self.names = TableNames(self)
        self._writers: weakref.WeakValueDictionary[uuid.UUID, Any] = (
            weakref.WeakValueDictionary())
        self.cards = VaultCards(self)
        self.locks = AggregateLocks()  # of the aggregates, in the database (their homes')
        homes = [db for name, db in self.home_databases().items() if db is not self.database]
        self.effects = Dispatcher(self.database, homes=homes)
        broker = self.env.get("SABOT_BROKER_URL") or ""
        if is_redis(broker):  # any process's writes wake the API's live pages at once
            self.effects.on(Wake, RedisWake(broker))

    # --- reading ------------------------------------------------------------------

    def table(self, table_id: uuid.UUID) -> Table:
        """The table as last recorded. Read it, do not change it: it is the kept one."""
        table: Table = self.load(table_id, "table")
        return table

    def load(self, aggregate_id: uuid.UUID, what: str) -> Any:
        """An aggregate by id, up to date, or `NotFound` naming what was looked for. It may be
        the kept one: to change it, `fork` it (as `apply_once` does)."""
        kept = self._kept_one(aggregate_id)
        if kept is not None:
            newer = list(self.repository.event_store.get(aggregate_id, gt=kept.version))
            if not newer:
                return kept
            aggregate = fork(kept)
            for event in newer:
                aggregate = cast(Any, event).mutate(aggregate)
        else:
            aggregate = super().load(aggregate_id, what)
        self._keep(aggregate)
        return aggregate

    def kept(self, aggregate_id: uuid.UUID, what: str) -> Any:
        """The aggregate as this process last read or wrote it, read from the store only if
        it is not kept: what another process recorded since is not in it (a director's tick
        reads its tournament once, `load`, then follows its own writes)."""
        kept = self._kept_one(aggregate_id)
        return kept if kept is not None else self.load(aggregate_id, what)

    def load_since(self, aggregate_id: uuid.UUID, what: str, gt: int) -> tuple[Any, list[Any]]:
        """The aggregate up to date (as `load`), and its events after version `gt`: one read
        when the kept aggregate is at `gt` or later."""
        kept = self._kept_one(aggregate_id)
        if kept is None or kept.version < gt:
            return self.load(aggregate_id, what), self.events_of(aggregate_id, gt=gt)
        events = self.events_of(aggregate_id, gt=gt)
        newer = [e for e in events if e.originator_version > kept.version]
        if not newer:
            return kept, events
        aggregate = fork(kept)
        for event in newer:
            aggregate = event.mutate(aggregate)
        self._keep(aggregate)
        return aggregate, events

    def room_of(self, table: Table) -> Room:
        """The room a table decides its command in: its tournament as recorded now (read
        with the table, for each attempt at the command), or none."""
        return self.room_read(table)[0]

    def room_read(self, table: Table) -> tuple[Room, list[ReadAt]]:
        """The room, and the tournament's stream at the version it was read at (none for a
        free room): the command's events are written only if it has not moved since."""
        return self.rooms(table)(table)

    def rooms(self, table: Table, kept: bool = False) -> Rooms:
        """The table's rooms as its tournament is recorded now, read once (`kept`: as this
        process last read or wrote it, not read again: a save checks it unchanged anyway):
        the room of the table at whichever coup it is (a run of commands decides in them
        all)."""
        if table.tournament is None:
            return lambda _: (FREE_ROOM, [])
        tournament_id = Tournament.create_id(table.tournament)
        try:
            tournament = (self.kept if kept else self.load)(tournament_id, "tournament")
        except NotFound:  # a table named for a tournament never created
            return lambda _: (FREE_ROOM, [])
        read = [ReadAt(tournament.id, tournament.version)]
        return lambda at: (tournament.state.room(at.name, at.state.coup_number), read)

    def deciding(self, command: c.TableCommand, rooms: Rooms | None = None) -> Decide:
        """`command` decided on a table in its room as recorded now (or in `rooms`, read
        before); what the table's decision read of its tournament, which the save checks
        unchanged (a pause recorded in between decides it again: nothing is played once a
        pause is written)."""

        def decide(table: Table) -> list[ReadAt]:
            room, read = (rooms or self.rooms(table))(table)
            table.execute(command, self.cards, room)
            return read

        return decide

    def last_move(self, table_id: uuid.UUID) -> float:
        """When the table's last event was recorded (seconds since the epoch): when what the
        table awaits now (a turn to bet, a decision) began."""
        version = self.table(table_id).version
        [last] = self.events_of(table_id, gt=version - 1, lte=version)
        return float(last.timestamp.timestamp())

    def clock_left(self, clock: Clock, now: float) -> float | None:
        """The seconds left at `now` on a clock the table started (`clock.seconds` from its
        last move, counting play only: its tournament's pauses stop it, and a table done with
        its round waits for the next one with the clock's whole time); None once the table
        no longer awaits that move (made, or the coup moved on)."""
        table = self.table(clock.table_id)
        if msgspec.structs.replace(clock, seconds=0) not in [
                msgspec.structs.replace(e, seconds=0) for e in follow_ups(table)
                if not isinstance(e, Wake)]:
            return None
        since = self.last_move(clock.table_id)
        played = now - since
        if table.tournament is not None and self.exists(Tournament.create_id(table.tournament)):
            tournament = self.load(Tournament.create_id(table.tournament), "tournament")
            if tournament.state.clock_waits(table.name, table.state):
                return float(clock.seconds)
            played = tournament.state.played(since, now)
        return clock.seconds - played

    def restart_clocks(self, table_id: uuid.UUID, now: float, command_id: str) -> None:
        """Send again, with the time they have left, the clocks of the turn or decision the
        table awaits (at a tournament's resume: a deadline come during the pause played
        nothing), through the outbox: a handler that fails leaves them pending, relayed by
        the next dispatch."""
        clocks = [e for e in follow_ups(self.table(table_id)) if not isinstance(e, Wake)]
        left = [msgspec.structs.replace(clock, seconds=max(0.0, seconds)) for clock in clocks
                if (seconds := self.clock_left(clock, now)) is not None]
        home = self.home_database(table_id)
        with home.transaction(write=True) as cursor:  # a broker down now loses none of them
            record_effects(home, cursor, command_id, left)
        self.effects.dispatch(command_id, left, home)

    def table_at(self, table_id: uuid.UUID, head: int | None) -> Table:
        """The table, known to be at version `head` in the store (read by the caller this
        request): the kept one when it is there already, without asking the store again."""
        kept = self._kept_one(table_id)
        if kept is not None and head is not None and kept.version >= head:
            return cast(Table, kept)
        return self.table(table_id)

    def state(self, table_id: uuid.UUID) -> TableState:
        return self.table(table_id).state

    def events_of(self, table_id: uuid.UUID, gt: int | None = None,
                  lte: int | None = None) -> list[Any]:
        return list(self.repository.event_store.get(table_id, gt=gt, lte=lte))

    def _kept_one(self, aggregate_id: uuid.UUID) -> Any:
        with self._kept_lock:
            kept = self._kept.get(aggregate_id)
            if kept is not None:
                self._kept.move_to_end(aggregate_id)
            return kept

    def close(self) -> None:
        self.locks.close()
        super().close()

    def _writing(self, aggregate_id: uuid.UUID) -> Any:
        """The lock of one aggregate's writers in this process (kept while anyone holds it)."""
        with self._kept_lock:
            lock = self._writers.get(aggregate_id)
            if lock is None:
                lock = self._writers[aggregate_id] = threading.RLock()
            return lock

    def _keep(self, aggregate: Any) -> None:
        """Keep a saved (or loaded) aggregate, unless a later version is kept already."""
        if not self.kept_aggregates:
            return
        with self._kept_lock:
            kept = self._kept.get(aggregate.id)
            if kept is None or kept.version < aggregate.version:
                self._kept[aggregate.id] = aggregate
                self._kept.move_to_end(aggregate.id)
            while len(self._kept) > self.kept_aggregates:
                self._kept.popitem(last=False)

    # --- writing ------------------------------------------------------------------

    def open_table(self, name: str, settings: TableSettings, *, command_id: str,
                   tournament: str | None = None, actor: str = "@organiser") -> Recorded:
        table_id = Table.create_id(name)
        if self.exists(table_id):
            # opened by this very command, perhaps a moment ago by another process (the
            # organiser's API and the director both mirroring a tournament's start)
            answered = self.answered(command_id)
            if answered is not None:
                return answered
            raise RuleViolation(f"a table named {name!r} is already open", rule="table-exists")
        if tournament is None:  # a tournament's tables are named after it, checked so
            self.names.refuse_taken(name)
        table = Table(name=name, settings=settings.check(), tournament=tournament, actor=actor,
                      command_id=command_id)
        return self.record(table, command_id)

    def execute(self, table_id: uuid.UUID, command: c.TableCommand, *,
                answer: KeptAnswer[Recorded] | None = None) -> Recorded:
        """Apply one command to a table, once, whatever the retries and races; `answer`: the
        caller's answer to it, kept in its transaction (`infra.store.answers`) when it records
        events in the main database (else the caller is not told it was kept)."""
        return self.apply_once(table_id, "table", command.command_id, self.deciding(command),
                               answer=answer)

    def execute_next(self, table_id: uuid.UUID,
                     choose: Callable[[Table], c.TableCommand]) -> Recorded:
        """Apply the command `choose` makes of the table as loaded (a bot's, a director's):
        one load for choosing and deciding."""

        def plan(table: Table) -> tuple[str, Decide]:
            command = choose(table)
            return command.command_id, self.deciding(command)

        return self._apply(table_id, "table", plan)

    def execute_run(self, table_id: uuid.UUID,
                    choose: Callable[[Table], c.TableCommand | None], most: int
                    ) -> list[Recorded]:
        """Apply the commands `choose` makes of the table (a house table's bot steps), each
        decided on the table as the one before left it, in one transaction: each under its
        own command id and versions (`command_log.Claim`), recording the events `execute_next`
        would record one command at a time. Its effects are those of the table as the run
        left it, under its last command's id: a live subscriber woken reads every event since
        it last read, and a clock a command within the run started awaited the move the run
        made next (the run stops before a person's move, so a person's clock is always the
        last state's). The run ends where `choose` makes none, after `most` commands, or
        before a command refused or recording nothing (the caller's one-command path then
        meets it as it would have). It decides in the tournament as this process last read or
        wrote it. Nothing is saved, [], when the table is not kept here or the run loses a
        race (a version taken, a command id applied before, its tournament moved): the caller
        goes on one command at a time, which decides from the store. Each `Recorded` holds
        the table as the run left it."""
        with self._writing(table_id):
            kept = self._kept_one(table_id)
            if kept is None:
                return []
            table = fork(kept)
            rooms = self.rooms(table, kept=True)
            run: list[_Step] = []
            read: Sequence[ReadAt] = []
            while len(run) < most and (command := choose(table)) is not None:
                first = table.version + 1
                try:
                    read = self.deciding(command, rooms)(table) or []
                except DomainError:
                    return []  # the table may be half-changed: nothing of the run is saved
                if table.version < first:
                    break
                run.append(_Step(Claim(command.command_id, table.id, first, table.version),
                                 [describe(e) for e in table._pending_events[-(
                                     table.version - first + 1):]]))
            if not run:
                return []
            last, effects = run[-1].claim.command_id, follow_ups(table)
            try:
                recordings = self.save(table, claims=[step.claim for step in run],
                                       outbox={last: effects}, unchanged=read)
            except (IntegrityError, DuplicateCommand):
                return []
            self._keep(table)
        home = self.home_database(table_id)
        positions = {r.notification.originator_version: r.notification.id for r in recordings}
        self.effects.dispatch(last, effects, home)
        main = home is self.database
        return [Recorded(table.id, step.claim.last_version, step.events, table,
                         positions[step.claim.last_version] if main else None) for step in run]

    def apply_once(self, aggregate_id: uuid.UUID, what: str, command_id: str,
                   decide: Decide, *, answer: KeptAnswer[Recorded] | None = None) -> Recorded:
        """Load, decide, record: once per command id; a lost race reloads and decides again."""
        return self._apply(aggregate_id, what, lambda _: (command_id, decide), answer)

    def _apply(self, aggregate_id: uuid.UUID, what: str,
               plan: Callable[[Any], tuple[str, Decide]],
               answer: KeptAnswer[Recorded] | None = None) -> Recorded:
        """Decide on a fork of the kept aggregate and save it, with no read at all when this
        process wrote the aggregate last. Whatever else happens on the kept one (a refusal,
        nothing to record, a version another writer took) is decided again on the aggregate
        as the store has it, and a lost race after that again, a few times."""
        home = self.home_database(aggregate_id)
        with self._writing(aggregate_id), ExitStack() as held:  # this process's writers queue
            kept, locked = self._kept_one(aggregate_id), False
            for attempt in range(RETRIES):
                if attempt and self.locks.held(home) and not locked:  # and the others' too
                    held.enter_context(self.locks.hold(home, aggregate_id))
                    locked = True
                elif attempt > 1 and not locked:  # SQLite: wait a jittered, growing moment
                    time.sleep(random.uniform(0, BACKOFF * 2**attempt))
                final = kept is None
                aggregate = fork(kept if kept is not None else self.load(aggregate_id, what))
                kept = None
                command_id, decide = plan(aggregate)
                decided = self._decided(aggregate, what, command_id, decide, final=final,
                                        answer=answer, locked=locked)
                if decided is not None:
                    break
            else:
                decided = None
        if decided is not None:
            recorded, effects = decided
            self.effects.dispatch(command_id, effects, self.home_database(aggregate_id))
            return recorded
        raise Conflict(f"the {what} changed under this command too often; try again",
                       rule="conflict")

    def _decided(self, aggregate: Any, what: str, command_id: str,
                 decide: Decide, *, final: bool, answer: KeptAnswer[Recorded] | None,
                 locked: bool = False) -> tuple[Recorded, list[Effect]] | None:
        """Decide and save; None to decide again on the stored aggregate (the version was
        taken, or, on a kept aggregate that may be stale, `final` False, anything but a
        save). A command id seen before answers as it did: looked up only when the command
        is refused, records nothing, or the store finds it a duplicate. What `decide` returns
        (`ReadAt`s: other streams the decision read) is saved only if unchanged. `locked`:
        this process holds the aggregate's lock (`infra.store.aggregate_locks`)."""
        try:
            read = decide(aggregate)
        except DomainError:
            if not final:
                return None
            answered = self._answered_for(aggregate.id, what, command_id)
            if answered is not None:
                return answered, []
            raise
        if not aggregate._pending_events:
            if not final:
                return None
            answered = self._answered_for(aggregate.id, what, command_id)
            return answered or Recorded(aggregate.id, aggregate.version, [], aggregate), []
        saved = list(aggregate._pending_events)
        described = [describe(e) for e in saved]
        effects = follow_ups(aggregate) if isinstance(aggregate, Table) else []
        kept: KeptAnswer[Sequence[int]] | None = None
        if answer is not None and self.home_database(aggregate.id) is self.database:
            kept = answer.given(lambda ids: Recorded(aggregate.id, aggregate.version, described,
                                                     aggregate, max(ids)))
        try:
            recordings = self.save(aggregate, command_id=command_id, outbox={command_id: effects},
                                   unchanged=read or (), answer=kept, locked=locked)
        except IntegrityError:
            return None
        except DuplicateCommand:
            answered = self._answered_for(aggregate.id, what, command_id)
            assert answered is not None
            return answered, []
        self._keep(aggregate)
        return Recorded(aggregate.id, aggregate.version, described, aggregate,
                        self._position(aggregate.id, recordings), saved), effects

    def _position(self, aggregate_id: uuid.UUID, recordings: Sequence[Recording[uuid.UUID]]
                  ) -> int | None:
        """The last notification id of `recordings`, if in the main database's log (the one
        whose positions the views report)."""
        if not recordings or self.home_database(aggregate_id) is not self.database:
            return None
        return max(r.notification.id for r in recordings)

    def _answered_for(self, aggregate_id: uuid.UUID, what: str,
                      command_id: str) -> Recorded | None:
        answered = self.answered(command_id)
        if answered is not None and answered.table_id != aggregate_id:
            raise RuleViolation(f"command id {command_id!r} was used for another "
                                f"{what} ({answered.table_id})", rule="command-id-reused")
        return answered

    def record(self, aggregate: Any, command_id: str) -> Recorded:
        """Save a new aggregate's events under a command id; a duplicate answers as before."""
        pending = list(aggregate._pending_events)
        if not pending:
            return Recorded(aggregate.id, aggregate.version, [], aggregate)
        try:
            recordings = self.save(aggregate, command_id=command_id)
        except DuplicateCommand:
            answered = self.answered(command_id)
            assert answered is not None
            return answered
        self._keep(aggregate)
        return Recorded(aggregate.id, aggregate.version, [describe(e) for e in pending],
                        aggregate, self._position(aggregate.id, recordings))

    def answered(self, command_id: str) -> Recorded | None:
        recorded = self.recorded_command(command_id)
        if recorded is None:
            return None
        table_id, first, last = recorded
        events = self.events_of(table_id, gt=first - 1, lte=last)
        return Recorded(table_id, last, [describe(e) for e in events],
                        position=self._position_of(table_id, last))

    def recorded_at(self, table_id: uuid.UUID) -> int | None:
        """Its last event's position in the main log (None: another home); `NotFound`."""
        return self._position_of(table_id, self.table(table_id).version)

    def _position_of(self, aggregate_id: uuid.UUID, version: int) -> int | None:
        """The main log's notification id of the event at `version` (an answer given again)."""
        database = self.home_database(aggregate_id)
        if database is not self.database:
            return None
        with database.transaction(write=False) as cursor:
            row = database.execute(
                cursor, "SELECT {nid} AS n FROM {stored_events} WHERE originator_id = ?"
                " AND originator_version = ?", (database.to_db_id(aggregate_id), version)
            ).fetchone()
        return None if row is None else int(row["n"])
