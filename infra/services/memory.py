"""Aggregates held in memory: the pure engine's store, for the preview's runs.

`MemoryStore` keeps each aggregate (tables, their bank auctions, a tournament) in a dict and
its events in a list, and answers the calls the bots' autoplay (`infra.services.autoplay`) and the
auction desk make of `infra.services.tables.TableService`: each command is decided on the aggregate
itself and its events kept, once per command id. No database, no file, no hash chain, no
vault: an RNG shoe's seed comes from `seed_source` (a seeded derivation) and stays in a dict.
A refused command leaves its aggregate as it refused it, half-changed maybe: a run that meets
one stops with the error.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from domain.errors import NotFound, RuleViolation
from domain.game.cards import Card
from domain.game.settings import TableSettings
from domain.game.shoe import Shoe, commitment, shoe_order
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.state import TableState
from infra.services.tables import Recorded, TableService, describe


class MemoryCards:
    """The domain's `CardSource` with the seeds in a dict: drawn by `seed_source`."""

    def __init__(self, seed_source: Callable[[uuid.UUID, int], bytes]) -> None:
        self.seed_source = seed_source
        self.seeds: dict[str, bytes] = {}
        self._orders: dict[str, tuple[Card, ...]] = {}

    def seal_seed(self, table_id: uuid.UUID, taille: int) -> str:
        seed = self.seed_source(table_id, taille)
        committed = commitment(seed)
        self.seeds[committed] = seed
        return committed

    def card_at(self, shoe: Shoe, position: int) -> Card:
        order = self._orders.get(shoe.commitment)
        if order is None:
            order = self._orders[shoe.commitment] = tuple(
                shoe_order(shoe, self.seed_of(shoe.commitment)))
        return order[position]

    def seed_of(self, commitment: str) -> bytes:
        return self.seeds[commitment]


class MemoryStore:
    """Aggregates and their events in dicts, each command applied once by its id."""

    def __init__(self, seed_source: Callable[[uuid.UUID, int], bytes]) -> None:
        self.cards = MemoryCards(seed_source)
        self._aggregates: dict[uuid.UUID, Any] = {}
        self._events: dict[uuid.UUID, list[Any]] = {}
        self._commands: dict[str, tuple[uuid.UUID, int, int]] = {}  # id, first, last version

    # --- reading ------------------------------------------------------------------

    def exists(self, aggregate_id: uuid.UUID) -> bool:
        return aggregate_id in self._aggregates

    def load(self, aggregate_id: uuid.UUID, what: str) -> Any:
        try:
            return self._aggregates[aggregate_id]
        except KeyError:
            raise NotFound(f"no {what} {aggregate_id}", rule=f"unknown-{what}") from None

    def table(self, table_id: uuid.UUID) -> Table:
        table: Table = self.load(table_id, "table")
        return table

    def state(self, table_id: uuid.UUID) -> TableState:
        return self.table(table_id).state

    def events_of(self, aggregate_id: uuid.UUID, gt: int | None = None,
                  lte: int | None = None) -> list[Any]:
        """The aggregate's events of versions in (gt, lte] (versions count from 1)."""
        return self._events.get(aggregate_id, [])[gt or 0:lte]

    def answered(self, command_id: str) -> Recorded | None:
        known = self._commands.get(command_id)
        if known is None:
            return None
        aggregate_id, first, last = known
        events = self.events_of(aggregate_id, gt=first - 1, lte=last)
        return Recorded(aggregate_id, last, [describe(e) for e in events])

    # --- writing ------------------------------------------------------------------

    def record(self, aggregate: Any, command_id: str) -> Recorded:
        """Keep a new aggregate, its events under `command_id`."""
        answered = self.answered(command_id)
        if answered is not None:
            return answered
        self._aggregates[aggregate.id] = aggregate
        self._events[aggregate.id] = []
        return self._kept(aggregate, command_id)

    def open_table(self, name: str, settings: TableSettings, *, command_id: str,
                   tournament: str | None = None, actor: str = "@organiser") -> Recorded:
        if self.exists(Table.create_id(name)) and self.answered(command_id) is None:
            raise RuleViolation(f"a table named {name!r} is already open", rule="table-exists")
        return self.record(Table(name=name, settings=settings.check(), tournament=tournament,
                                 actor=actor, command_id=command_id), command_id)

    def execute(self, table_id: uuid.UUID, command: c.TableCommand) -> Recorded:
        return self.apply_once(table_id, "table", command.command_id,
                               lambda table: table.execute(command, self.cards))

    def execute_next(self, table_id: uuid.UUID,
                     choose: Callable[[Table], c.TableCommand]) -> Recorded:
        return self.execute(table_id, choose(self.table(table_id)))

    def execute_run(self, table_id: uuid.UUID,
                    choose: Callable[[Table], c.TableCommand | None], most: int
                    ) -> list[Recorded]:
        """The commands `choose` makes, one after another, up to `most`, until one records
        nothing (in memory a run costs what its commands do: each is kept as `execute` keeps
        it)."""
        run: list[Recorded] = []
        while len(run) < most and (command := choose(self.table(table_id))) is not None:
            run.append(self.execute(table_id, command))
            if not run[-1].events:
                break
        return run

    def apply_once(self, aggregate_id: uuid.UUID, what: str, command_id: str,
                   decide: Callable[[Any], object]) -> Recorded:
        answered = self.answered(command_id)
        if answered is not None:
            if answered.table_id != aggregate_id:
                raise RuleViolation(f"command id {command_id!r} was used for another {what} "
                                    f"({answered.table_id})", rule="command-id-reused")
            return answered
        aggregate = self.load(aggregate_id, what)
        decide(aggregate)
        return self._kept(aggregate, command_id)

    def _kept(self, aggregate: Any, command_id: str) -> Recorded:
        pending = aggregate.collect_events()
        if pending:
            self._events[aggregate.id].extend(pending)
            self._commands[command_id] = (aggregate.id, aggregate.version - len(pending) + 1,
                                          aggregate.version)
        return Recorded(aggregate.id, aggregate.version, [describe(e) for e in pending],
                        aggregate)


Store = TableService | MemoryStore  # where bots play and auctions are held: on disk or not
