"""The names of a store's tables, for the rule that two tables' names differ in more than case
and width (`domain.limits.taken_by`: "Friday-1", "FRIDAY-1" and the fullwidth "ｆriday-1" are
one name). Every table's name is read from the store once (any process's tables), then kept.
A look lists the tables' creations by topic, which reads the whole log (it has no index on
topics): it is made where an organiser opens a table, not for a tournament's own tables, which
are named after the tournament, whose name was checked so."""

from __future__ import annotations

import uuid
from typing import Any, Protocol

from eventsourcing.utils import get_topic

from domain.errors import RuleViolation
from domain.limits import taken_by
from domain.table.aggregate import Table


class Store(Protocol):
    """What the names are read from (`infra.services.tables.TableService`)."""

    def streams_with(self, topic: str) -> list[uuid.UUID]: ...

    def events_of(self, table_id: uuid.UUID, gt: int | None = None,
                  lte: int | None = None) -> list[Any]: ...


class TableNames:
    def __init__(self, service: Store) -> None:
        self.service = service
        self._names: dict[uuid.UUID, str] = {}

    def names(self) -> list[str]:
        """The name of every table opened in the store."""
        for table_id in self.service.streams_with(get_topic(Table.Opened)):
            if table_id not in self._names and (opened := self.service.events_of(table_id,
                                                                                  lte=1)):
                self._names[table_id] = opened[0].name
        return list(self._names.values())

    def refuse_taken(self, name: str) -> None:
        """Refuse `name` when an open table's name is the same name."""
        taken = taken_by(name, self.names())
        if taken is not None:
            raise RuleViolation(f"{name!r} is taken: a table named {taken!r} is open",
                                rule="table-exists")
