"""Which partition of the log a stream belongs to: its tournament, else its table.

Every stream's events are chained within one partition (`infra.store.ledger`): the events of a
partition form their own hash chain, in notification order, so that tournaments can later be
written, locked and spread over databases apart. The key is text:

| stream                                  | partition                                   |
|-----------------------------------------|---------------------------------------------|
| a tournament                            | the tournament's id                         |
| a table of a tournament                 | its tournament's id                         |
| a table outside a tournament            | the table's own id                          |
| a bank auction, a dispute               | its table's partition (resolved when stored)|
| anything else, and every event chained  | `MAIN` (the empty key)                      |
| before partitions existed               |                                             |

`partition_key` is pure: it reads the aggregate being saved, never the store. A stream keeps
the partition of its first event; `SabotApplication.save` passes the keys down to the
recorder (`partitions=`), which resolves a table's id to that table's partition.
"""

from __future__ import annotations

import uuid

from domain.auction.aggregate import BankAuction
from domain.dispute.aggregate import Dispute
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament

MAIN = ""

Partition = str | uuid.UUID
"""A partition key, or the id of the stream whose partition it shares."""


def partition_key(aggregate: object) -> Partition | None:
    """The partition of `aggregate`'s stream (None: `MAIN`)."""
    match aggregate:
        case Tournament():
            return str(aggregate.id)
        case Table(tournament=str(tournament)) if tournament:
            return str(Tournament.create_id(tournament))
        case Table():
            return str(aggregate.id)
        case BankAuction() | Dispute():
            return aggregate.table_id
    return None
