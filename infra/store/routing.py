"""One application recorder over several databases: each write to its partition's home.

With `SABOT_PARTITION_DATABASES` set (`infra.store.homes`), a `SabotApplication` records through a
`RoutedRecorder`: the main database's chained recorder and one per home, each a whole chained
store. A save goes to the home of the partitions it writes (`infra.store.partitions`: a tournament,
its tables, auctions and disputes share one), in that home's one transaction, chained and
signed there; a save whose streams live in two homes is refused (`SpansHomes`, nothing
written), since no transaction spans two servers. A stream is read from its home, found once
per process (streams never move) by asking the homes, the main one first. Snapshots go with
their stream (`RoutedSnapshots`), so that each home's audit checks its own.

Notifications are per home (each has its own ids): `select_notifications` and
`max_notification_id` read the main database's log; the projections read every home's
(`projections.runner`), and `sabot audit verify` verifies each home.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from eventsourcing.persistence import (
    AggregateRecorder,
    ApplicationRecorder,
    Mapper,
    Notification,
    StoredEvent,
    Subscription,
)

from infra.errors import RecordedCommand, StoreError
from infra.store.checkpoints import Checkpoint
from infra.store.database import Database
from infra.store.homes import MAIN_HOME, Homes, assign_home
from infra.store.partitions import MAIN
from infra.store.recorders import (
    ChainedPostgresApplicationRecorder,
    ChainedSQLiteApplicationRecorder,
)
from infra.store.signing import Signer

ChainedRecorder = ChainedSQLiteApplicationRecorder | ChainedPostgresApplicationRecorder


class SpansHomes(StoreError):
    """A save whose streams live in different databases."""


class RoutedRecorder(ApplicationRecorder):
    def __init__(self, main: ChainedRecorder, homes: Homes,
                 recorders: Mapping[str, ChainedRecorder]) -> None:
        self.main = main
        self.homes = homes
        self.recorders: dict[str, ChainedRecorder] = {MAIN_HOME: main, **recorders}
        self.database: Database = main.database
        self.datastore = main.datastore
        self._partitions: dict[str, str] = {MAIN: MAIN_HOME}
        self._streams: dict[UUID, str] = {}
        self._lock = threading.Lock()

    # --- where things live --------------------------------------------------------------

    def home_of_partition(self, key: str) -> str:
        with self._lock:
            home = self._partitions.get(key)
        if home is None:
            home = assign_home(self.database, key, self.homes.names)
            with self._lock:
                self._partitions[key] = home
        return home

    def home_of_stream(self, originator_id: UUID) -> str | None:
        """The home holding the stream's events (None: no home has any yet)."""
        with self._lock:
            home = self._streams.get(originator_id)
        if home is not None:
            return home
        for name, recorder in self.recorders.items():
            if recorder.select_events(originator_id, limit=1):
                with self._lock:
                    self._streams[originator_id] = name
                return name
        return None

    def _home_of_save(self, stored_events: Sequence[StoredEvent],
                      partitions: dict[UUID, Any]) -> str:
        homes: dict[str, UUID] = {}
        for oid in dict.fromkeys(_uuid(e.originator_id) for e in stored_events):
            home = self.home_of_stream(oid)
            if home is None:
                spec = partitions.get(oid, MAIN)
                home = (self.home_of_stream(spec) or MAIN_HOME) if isinstance(spec, UUID) \
                    else self.home_of_partition(str(spec))
            homes.setdefault(home, oid)
        if len(homes) > 1:
            where = ", ".join(f"stream {oid} in {home}" for home, oid in homes.items())
            raise SpansHomes(f"one save cannot span databases ({where}): save each apart")
        return next(iter(homes), MAIN_HOME)

    # --- eventsourcing's recorder -------------------------------------------------------

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                      ) -> Sequence[int] | None:
        home = self._home_of_save(stored_events, kwargs.get("partitions") or {})
        ids = self.recorders[home].insert_events(stored_events, **kwargs)
        with self._lock:
            for event in stored_events:
                self._streams[_uuid(event.originator_id)] = home
        return ids

    def select_events(self, originator_id: UUID | str, *, gt: int | None = None,
                      lte: int | None = None, desc: bool = False, limit: int | None = None
                      ) -> Sequence[StoredEvent]:
        home = self.home_of_stream(_uuid(originator_id))
        if home is None:
            return []
        return self.recorders[home].select_events(originator_id, gt=gt, lte=lte, desc=desc,
                                                  limit=limit)

    def select_notifications(self, start: int | None, limit: int, stop: int | None = None,
                             topics: Sequence[str] = (), *, inclusive_of_start: bool = True
                             ) -> Sequence[Notification]:
        return self.main.select_notifications(start, limit, stop, topics,
                                              inclusive_of_start=inclusive_of_start)

    def max_notification_id(self) -> int | None:
        return self.main.max_notification_id()

    def subscribe(self, gt: int | None = None, topics: Sequence[str] = ()
                  ) -> Subscription[ApplicationRecorder]:
        return self.main.subscribe(gt, topics)

    # --- Sabot's ledger -----------------------------------------------------------------

    def recorded_command(self, command_id: str | UUID) -> RecordedCommand | None:
        """The stream and versions a command produced, in whichever home recorded it."""
        for recorder in self.recorders.values():
            found = recorder.recorded_command(command_id)
            if found is not None:
                return found
        return None

    def signer(self) -> Signer:
        """The main database's signer (each home signs with its own writer's key)."""
        return self.main.signer()

    def write_checkpoint(self) -> Checkpoint | None:
        """A checkpoint written now in every home's checkpoint file; the main one's."""
        written = [recorder.write_checkpoint() for recorder in self.recorders.values()]
        return written[0]

    def databases(self) -> dict[str, Database]:
        return {name: recorder.database for name, recorder in self.recorders.items()}


class RoutedSnapshots(AggregateRecorder):
    """The snapshots' recorders of every home: each snapshot in its stream's home."""

    def __init__(self, events: RoutedRecorder, recorders: Mapping[str, AggregateRecorder]
                 ) -> None:
        self.events = events
        self.recorders = recorders

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any
                      ) -> Sequence[int] | None:
        by_home: dict[str, list[StoredEvent]] = {}
        for snapshot in stored_events:
            home = self.events.home_of_stream(_uuid(snapshot.originator_id)) or MAIN_HOME
            by_home.setdefault(home, []).append(snapshot)
        for home, snapshots in by_home.items():
            self.recorders[home].insert_events(snapshots, **kwargs)
        return None

    def select_events(self, originator_id: UUID | str, *, gt: int | None = None,
                      lte: int | None = None, desc: bool = False, limit: int | None = None
                      ) -> Sequence[StoredEvent]:
        home = self.events.home_of_stream(_uuid(originator_id))
        if home is None:
            return []
        return self.recorders[home].select_events(originator_id, gt=gt, lte=lte, desc=desc,
                                                  limit=limit)


class HomeWriter(NamedTuple):
    """What the proofs (`infra.audit.proofs`, dossiers, exports) read of one home of an
    application: its chained recorder and the application's mapper."""

    recorder: ChainedRecorder
    mapper: Mapper[UUID]


def holding(writer: Any, stream: UUID) -> Any:
    """What to read `stream`'s proofs from: the home holding it, when the application's
    partitions are spread over databases; else `writer` itself."""
    recorder = writer.recorder
    if isinstance(recorder, RoutedRecorder):
        home = recorder.home_of_stream(stream)
        if home is not None:
            return HomeWriter(recorder.recorders[home], writer.mapper)
    return writer


def _uuid(originator_id: UUID | str) -> UUID:
    return originator_id if isinstance(originator_id, UUID) else UUID(str(originator_id))
