"""The Dispute aggregate: someone contests a coup, a replay of its recorded events decides,
and a verdict that changes chips is corrected once two roles approve.

A dispute is opened on one coup of one table, with a reason and who raised it. The replay
(`infra.services.replay`) recomputes the coup from the table's events and records its verdict once:
`consistent`, or each `Discrepancy` between what the rules and the shoe give (`expected`) and
what the table recorded (`recorded`). Its id follows from the command that opened it, so a
retried opening is one dispute.

When the replay finds that players were paid wrongly, it proposes a correction (each
player's chips delta). The correction is applied only once approved by the organiser and by
an auditor or a floor manager (`APPROVERS`): two different roles, two different people.
Then the compensating chips events are recorded at the table (their reason is
`correction_reason`, which names the coup and the dispute) and `CorrectionApplied` closes
the dispute.
"""

from __future__ import annotations

import re
import uuid
from typing import assert_never

import msgspec
from eventsourcing.domain import Aggregate, event

from domain.actors import require_actor
from domain.commands import require_known
from domain.dispute import commands as dc
from domain.dispute.verdicts import Discrepancy, Verdict
from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.topics import keep_topics

NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-d15b07e00000")

ORGANISER = "organiser"
SECOND_APPROVERS = frozenset({"auditor", "floor-manager"})
APPROVERS = SECOND_APPROVERS | {ORGANISER}
_CORRECTED = re.compile(r"^correction of coup (\d+) at (.+?) \(dispute ")


def correction_reason(table: str, coup: int, dispute: uuid.UUID, reason: str) -> str:
    """The reason a compensating chips event records: the table and the coup, the dispute,
    the why (the event may be recorded at another table, where the player is now)."""
    return f"correction of coup {coup} at {table} (dispute {dispute}): {reason}"


def corrected_coup(reason: str) -> tuple[str, int] | None:
    """The table and coup a chips event's reason says it corrects, if it is a correction."""
    match = _CORRECTED.match(reason)
    return (match.group(2), int(match.group(1))) if match else None


def require_dealt(table: str, coup: int, dealt: int) -> None:
    """A dispute names a coup that was dealt at its table (`dealt`: the coups begun there)."""
    if coup > dealt:
        raise NotFound(f"coup {coup} was never dealt at {table} ({dealt} so far)",
                       rule="unknown-coup")


class Approval(msgspec.Struct, frozen=True, kw_only=True):
    role: str
    by: str


class Dispute(Aggregate):
    table_id: uuid.UUID
    coup: int
    reason: str
    by: str
    verdict: Verdict
    discrepancies: list[Discrepancy]
    notes: list[str]
    corrections: dict[str, int]
    approvals: list[Approval]
    applied: bool

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
        self.corrections = {}
        self.approvals = []
        self.applied = False

    @property
    def approved(self) -> bool:
        """The organiser and an auditor or a floor manager approved the correction."""
        roles = {a.role for a in self.approvals}
        return ORGANISER in roles and bool(roles & SECOND_APPROVERS)

    def execute(self, command: dc.DisputeCommand) -> None:
        """Check `command` (its actor's right, the dispute's rules) and record what it does."""
        require_known(command, dc.DISPUTE_COMMANDS, "a dispute")
        actor = command.actor
        who = {"actor": actor, "command_id": command.command_id}
        match command:
            case dc.RecordVerdict(verdict=verdict, discrepancies=found, notes=notes,
                                  corrections=corrections):
                require_actor(actor, None, "record a verdict", rule="official-step")
                self._replayed(verdict=verdict, discrepancies=list(found), notes=list(notes),
                               **who)
                if corrections:
                    self._proposed(corrections=dict(corrections), **who)
            case dc.ApproveCorrection(role=role, by=by):
                require_actor(actor, by, f"approve as {by}", rule="not-yourself")
                self._approve(role, by)
                self._approved(role=role, by=by, **who)
            case dc.ApplyCorrection(table=table):
                require_actor(actor, None, "apply a correction", rule="official-step")
                if not self.approved:
                    raise OutOfTurn("the correction needs the organiser's and an auditor's or a "
                                    "floor manager's approval", rule="not-approved")
                if not self.applied:
                    self._applied(corrections=dict(self.corrections),
                                  approvals=list(self.approvals),
                                  reason=correction_reason(table, self.coup, self.id,
                                                           self.reason), **who)
            case _:
                assert_never(command)

    def _approve(self, role: str, by: str) -> None:
        """Refuse an approval: none to give, already applied, not an approver, or the same
        role or person twice."""
        if not self.corrections:
            raise OutOfTurn("this dispute proposes no correction to approve",
                            rule="no-correction")
        if self.applied:
            raise OutOfTurn("the correction is already applied", rule="correction-applied")
        if role not in APPROVERS:
            raise RuleViolation(f"a {role} does not approve corrections: the organiser and an "
                                "auditor or a floor manager do", rule="not-an-approver")
        if any(a.role == role for a in self.approvals):
            raise OutOfTurn(f"a {role} already approved: the second approval is another "
                            "role's", rule="same-role")
        if any(a.by == by for a in self.approvals):
            raise OutOfTurn(f"{by} already approved: the second approval is someone else's",
                            rule="same-approver")

    class Replayed(Event):
        verdict: Verdict
        discrepancies: list[Discrepancy]
        notes: list[str]

    @event(Replayed)
    def _replayed(self, verdict: Verdict, discrepancies: list[Discrepancy],
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

    class CorrectionProposed(Event):
        """The replay's verdict moves chips: each player's delta."""

        corrections: dict[str, int]

    @event(CorrectionProposed)
    def _proposed(self, corrections: dict[str, int], actor: str, command_id: str) -> None:
        if self.verdict is not Verdict.DISCREPANCIES or self.corrections:
            raise OutOfTurn("a correction follows a verdict of discrepancies, once",
                            rule="dispute-correction")
        if not corrections or 0 in corrections.values():
            raise RuleViolation("a correction moves chips", rule="dispute-correction")
        self.corrections = dict(corrections)

    class CorrectionApproved(Event):
        role: str
        by: str

    @event(CorrectionApproved)
    def _approved(self, role: str, by: str, actor: str, command_id: str) -> None:
        self.approvals.append(Approval(role=role, by=by))

    class CorrectionApplied(Event):
        corrections: dict[str, int]
        approvals: list[Approval]
        reason: str

    @event(CorrectionApplied)
    def _applied(self, corrections: dict[str, int], approvals: list[Approval], reason: str,
                 actor: str, command_id: str) -> None:
        self.applied = True


keep_topics(Dispute, "domain.dispute_aggregate")
