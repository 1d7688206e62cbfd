"""What the replay of a disputed coup finds: its verdict, and each fact where the record and
the replay disagree (`infra.services.replay` computes them, the Dispute aggregate records them)."""

from __future__ import annotations

from enum import StrEnum

import msgspec


class Verdict(StrEnum):
    OPEN = "open"  # not replayed yet
    CONSISTENT = "consistent"
    DISCREPANCIES = "discrepancies"
    UNVERIFIABLE = "unverifiable"  # the replay could not be run (e.g. the coup is unfinished)


class Discrepancy(msgspec.Struct, frozen=True, kw_only=True):
    """One fact of the coup where the record and the replay disagree."""

    what: str  # e.g. "card", "outcome", "payout", "commission", "bank"
    where: str  # e.g. "position 12", "punter", "p1", "event 57"
    expected: str
    recorded: str

    def describe(self) -> str:
        return f"{self.what} at {self.where}: expected {self.expected}, recorded {self.recorded}"
