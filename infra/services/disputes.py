"""The dispute service: open a dispute on a coup, replay it, read the verdict.

    service = DisputeService(url=database_url)
    dispute_id = service.open(table_id, coup=12, reason="wrong payout", by="p3",
                              command_id="dispute:p3:12")
    service.replay(dispute_id)       # usually in a worker (`workers.disputes.request_replay`)
    service.dispute(dispute_id).verdict              # open, then consistent / discrepancies

    service.approve(dispute_id, role="organiser", by="ann", command_id=...)
    service.approve(dispute_id, role="auditor", by="bob", command_id=...)
    service.apply_correction(dispute_id, table_service)   # once approved by both

The replay records the verdict with the command id `replay:{dispute_id}`, once, however
often it is asked for; a verdict that moves chips proposes the correction with it. An
approved correction is applied as compensating chips events that name the coup and the
dispute (`domain.dispute.aggregate.correction_reason`): `AdjustChips` at the table, or, at a
tournament's table, the organiser's `correct-chips` intervention (recorded with the chips
before and after, at the player's table now); each with a command id of its own, so a retry
applies nothing twice; then `CorrectionApplied`.

A taille's seed not yet revealed is read from the vault (the process's `SABOT_SECRET_KEY`
or `.sabot/secret.key`), as an auditor may on a dispute.
"""

from __future__ import annotations

import uuid
from contextlib import suppress

from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from domain.dispute.aggregate import Dispute, correction_reason, require_dealt
from domain.dispute.commands import ApplyCorrection, ApproveCorrection, RecordVerdict
from domain.dispute.verdicts import Verdict
from domain.errors import NotFound
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.errors import DuplicateCommand, SettingsError, VaultError
from infra.services.application import SabotApplication
from infra.services.replay import replay_coup
from infra.services.tables import TableService
from infra.services.tournaments import Tournaments

REPLAYER = "@replay"
CORRECTOR = "@organiser"
OPENED_TOPIC = get_topic(Dispute.Opened)  # the topic the record knows it by (domain.topics)


class DisputeService(SabotApplication):
    def open(self, table_id: uuid.UUID, coup: int, *, reason: str, by: str,
             command_id: str) -> uuid.UUID:
        """Open a dispute on a coup dealt at the table (once per command id); its id. The
        table's events are read, not applied: a record that no longer replays (altered in the
        database) is what a dispute is there to find."""
        events = list(self.repository.event_store.get(table_id))
        if not events:
            raise NotFound(f"no table {table_id}", rule="unknown-table")
        dealt = max((e.coup for e in events if isinstance(e, Table.CardDealt)), default=0)
        require_dealt(getattr(events[0], "name", str(table_id)), coup, dealt)
        dispute = Dispute(table_id=table_id, coup=coup, reason=reason, by=by, actor=by,
                          command_id=command_id)
        with suppress(DuplicateCommand):  # opened before by the same command: the same id
            self.save(dispute, command_id=command_id)
        return dispute.id

    def dispute(self, dispute_id: uuid.UUID) -> Dispute:
        dispute: Dispute = self.load(dispute_id, "dispute")
        return dispute

    def ids(self) -> list[uuid.UUID]:
        """Every dispute's id, the first opened first (in each database, `infra.store.homes`)."""
        return self.streams_with(OPENED_TOPIC)

    def approve(self, dispute_id: uuid.UUID, *, role: str, by: str,
                command_id: str) -> Dispute:
        """Approve the dispute's correction as `by` in `role` (once per command id)."""
        dispute = self.dispute(dispute_id)
        if self.recorded_command(command_id) is not None:
            return dispute
        dispute.execute(ApproveCorrection(role=role, by=by, actor=by, command_id=command_id))
        with suppress(DuplicateCommand):
            self.save(dispute, command_id=command_id)
        return self.dispute(dispute_id)

    def apply_correction(self, dispute_id: uuid.UUID, tables: TableService) -> Dispute:
        """Record an approved correction's compensating events, then `CorrectionApplied`."""
        dispute = self.dispute(dispute_id)
        if not dispute.approved or dispute.applied:
            return dispute
        table = tables.table(dispute.table_id)
        tournament = table.tournament
        reason = correction_reason(table.name, dispute.coup, dispute.id, dispute.reason)
        for player, delta in sorted(dispute.corrections.items()):
            command_id = f"correction/{dispute.id}/{player}"
            if tournament is not None:
                Tournaments(tables).intervene(Tournament.create_id(tournament), "correct-chips",
                                              player, reason, delta=delta, actor=CORRECTOR,
                                              command_id=command_id)
            else:
                tables.execute(dispute.table_id, c.AdjustChips(
                    command_id=command_id, actor=CORRECTOR, player=player, delta=delta,
                    reason=reason))
        command_id = f"applied/{dispute.id}"
        dispute.execute(ApplyCorrection(table=table.name, actor=CORRECTOR,
                                        command_id=command_id))
        with suppress(DuplicateCommand):
            self.save(dispute, command_id=command_id)
        return self.dispute(dispute_id)

    def replay(self, dispute_id: uuid.UUID) -> Dispute:
        """Replay the disputed coup and record the verdict, unless it is recorded already."""
        dispute = self.dispute(dispute_id)
        if dispute.verdict is not Verdict.OPEN:
            return dispute
        events = list(self.repository.event_store.get(dispute.table_id))
        verdict = replay_coup(events, dispute.coup, self._unseal)
        command_id = f"replay:{dispute_id}"
        dispute.execute(RecordVerdict(
            verdict=verdict.verdict, discrepancies=verdict.discrepancies, notes=verdict.notes,
            corrections=verdict.corrections, actor=REPLAYER, command_id=command_id))
        try:
            self.save(dispute, command_id=command_id)
        except (DuplicateCommand, IntegrityError):
            return self.dispute(dispute_id)  # another delivery recorded it first
        return dispute

    def _unseal(self, commitment: str) -> bytes | None:
        try:
            return self.vault.unseal(commitment)
        except (VaultError, SettingsError):
            return None
