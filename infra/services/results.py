"""Publishing a tournament's results, once no dispute of a coup at its tables is open.

    for dispute, table in tournament_disputes(disputes, tournaments, tournament_id): ...
    publish_results(tournaments, disputes, tournament_id, actor="@organiser", command_id=...)

A finished tournament's results are provisional until the organiser publishes them
(`PublishResults`, recording `ResultsPublished`): a dispute still replaying, or
whose correction awaits its approvals (`is_open`), may yet move chips, so publishing waits.
"""

from __future__ import annotations

import time
import uuid

from domain.dispute.aggregate import Dispute
from domain.dispute.verdicts import Verdict
from domain.tournament.commands import PublishResults
from infra.services.disputes import DisputeService
from infra.services.tables import Recorded
from infra.services.tournaments import Tournaments


def is_open(dispute: Dispute) -> bool:
    """Not decided yet: still replaying, or its correction awaiting approvals. (An approved
    correction is applied at once while the tournament runs; after its finish it is refused
    and stays approved: that dispute is decided, it holds nothing up.)"""
    return dispute.verdict is Verdict.OPEN or (bool(dispute.corrections)
                                                and not dispute.approved)


def tournament_disputes(disputes: DisputeService, tournaments: Tournaments,
                        tournament_id: uuid.UUID) -> list[tuple[Dispute, str]]:
    """The disputes of coups at the tournament's tables (broken ones included), the first
    opened first, each with its table's name."""
    name = tournaments.state(tournament_id).name
    found = []
    for dispute_id in disputes.ids():
        dispute = disputes.dispute(dispute_id)
        table = tournaments.service.table(dispute.table_id)
        if table.tournament == name:
            found.append((dispute, table.name))
    return found


def publish_results(tournaments: Tournaments, disputes: DisputeService,
                    tournament_id: uuid.UUID, *, actor: str, command_id: str,
                    at: float | None = None) -> Recorded:
    """Publish the finished tournament's results, refused while a dispute is open."""
    open_ones = [f"coup {d.coup} at {table}" for d, table
                 in tournament_disputes(disputes, tournaments, tournament_id)
                 if is_open(d)]
    when = time.time() if at is None else at
    return tournaments.execute(tournament_id, PublishResults(
        open_disputes=open_ones, at=when, actor=actor, command_id=command_id))
