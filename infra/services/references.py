"""References to tables, as people write them: a UUID, or the name.

A table's id follows from its name (`Table.create_id`), so a name is as good as the id. The
HTTP routes and the CLI commands resolve table references here, and only here (tournaments:
`infra.services.tournaments.tournament_id_of`).
"""

from __future__ import annotations

import uuid

from domain.table.aggregate import Table


def table_id_of(ref: str) -> uuid.UUID:
    """A table's id from its UUID or its name."""
    try:
        return uuid.UUID(ref)
    except ValueError:
        return Table.create_id(ref)

