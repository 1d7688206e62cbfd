"""References to tables and tournaments, as people write them: a UUID, or the name.

An aggregate's id follows from its name (`Table.create_id`, `Tournament.create_id`), so a name
is as good as the id. The HTTP routes and the CLI commands resolve references here, and only
here.
"""

from __future__ import annotations

import uuid

from domain.table_aggregate import Table
from domain.tournament_aggregate import Tournament


def table_id_of(ref: str) -> uuid.UUID:
    """A table's id from its UUID or its name."""
    try:
        return uuid.UUID(ref)
    except ValueError:
        return Table.create_id(ref)


def tournament_id_of(ref: str) -> uuid.UUID:
    """A tournament's id from its UUID or its name."""
    try:
        return uuid.UUID(ref)
    except ValueError:
        return Tournament.create_id(ref)
