"""The Dispute aggregate: someone contests a coup, a replay of its recorded events decides.

A dispute is opened on one coup of one table, with a reason and who raised it. The replay
(`workers.replay`) recomputes the coup from the table's events and records its verdict once:
`consistent`, or each `Discrepancy` between what the rules and the shoe give (`expected`) and
what the table recorded (`recorded`). Its id follows from the command that opened it, so a
retried opening is one dispute.
"""

from __future__ import annotations

import uuid
from enum import StrEnum

import msgspec
from eventsourcing.domain import Aggregate, event

from domain.errors import OutOfTurn, RuleViolation

NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-d15b07e00000")


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


class Dispute(Aggregate):
    table_id: uuid.UUID
    coup: int
    reason: str
    by: str
    verdict: Verdict
    discrepancies: list[Discrepancy]
    notes: list[str]

    @staticmethod
    def create_id(command_id: str, **_: object) -> uuid.UUID:
        return uuid.uuid5(NAMESPACE, f"dispute/{command_id}")

    class Event(Aggregate.Event):
        actor: str
        command_id: str

    class Opened(Aggregate.Created):
        table_id: uuid.UUID
        coup: int
        reason: str
        by: str
        actor: str
        command_id: str

    @event(Opened)
    def __init__(self, table_id: uuid.UUID, coup: int, reason: str, by: str, actor: str,
                 command_id: str) -> None:
        if coup < 1:
            raise RuleViolation("a dispute is about a coup numbered from 1", rule="coup-number")
        if not reason.strip():
            raise RuleViolation("a dispute needs a reason", rule="dispute-reason")
        self.table_id = table_id
        self.coup = coup
        self.reason = reason
        self.by = by
        self.verdict = Verdict.OPEN
        self.discrepancies = []
        self.notes = []

    class Replayed(Event):
        verdict: Verdict
        discrepancies: list[Discrepancy]
        notes: list[str]

    @event(Replayed)
    def record_verdict(self, verdict: Verdict, discrepancies: list[Discrepancy],
                       notes: list[str], actor: str, command_id: str) -> None:
        if self.verdict is not Verdict.OPEN:
            raise OutOfTurn(f"the dispute was already decided ({self.verdict})",
                            rule="dispute-decided")
        if (verdict is Verdict.DISCREPANCIES) != bool(discrepancies):
            raise RuleViolation("a verdict of discrepancies lists them, any other none",
                                rule="dispute-verdict")
        self.verdict = verdict
        self.discrepancies = list(discrepancies)
        self.notes = list(notes)
