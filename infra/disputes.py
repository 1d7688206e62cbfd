"""The dispute service: open a dispute on a coup, replay it, read the verdict.

    service = DisputeService(url=database_url)
    dispute_id = service.open(table_id, coup=12, reason="wrong payout", by="p3",
                              command_id="dispute:p3:12")
    service.replay(dispute_id)       # usually in a worker (`workers.disputes.request_replay`)
    service.dispute(dispute_id).verdict              # open, then consistent / discrepancies

The replay records the verdict with the command id `replay:{dispute_id}`, once, however
often it is asked for. A taille's seed not yet revealed is read from the vault (the
process's `SABOT_SECRET_KEY` or `.sabot/secret.key`), as an auditor may on a dispute.
"""

from __future__ import annotations

import uuid
from contextlib import suppress

from eventsourcing.persistence import IntegrityError

from domain.dispute_aggregate import Dispute, Verdict
from domain.errors import NotFound
from infra.application import SabotApplication
from infra.errors import DuplicateCommand, SettingsError, VaultError
from infra.replay import replay_coup

REPLAYER = "@replay"


class DisputeService(SabotApplication):
    def open(self, table_id: uuid.UUID, coup: int, *, reason: str, by: str,
             command_id: str) -> uuid.UUID:
        """Open a dispute on a coup (once per command id); its id."""
        if not self.exists(table_id):
            raise NotFound(f"no table {table_id}", rule="unknown-table")
        dispute = Dispute(table_id=table_id, coup=coup, reason=reason, by=by, actor=by,
                          command_id=command_id)
        with suppress(DuplicateCommand):  # opened before by the same command: the same id
            self.save(dispute, command_id=command_id)
        return dispute.id

    def dispute(self, dispute_id: uuid.UUID) -> Dispute:
        dispute: Dispute = self.load(dispute_id, "dispute")
        return dispute

    def replay(self, dispute_id: uuid.UUID) -> Dispute:
        """Replay the disputed coup and record the verdict, unless it is recorded already."""
        dispute = self.dispute(dispute_id)
        if dispute.verdict is not Verdict.OPEN:
            return dispute
        events = list(self.repository.event_store.get(dispute.table_id))
        verdict = replay_coup(events, dispute.coup, self._unseal)
        command_id = f"replay:{dispute_id}"
        dispute.record_verdict(verdict=verdict.verdict, discrepancies=verdict.discrepancies,
                               notes=verdict.notes, actor=REPLAYER, command_id=command_id)
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
