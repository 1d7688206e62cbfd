"""Dispute commands: what the replay, an approver or the organiser asks a `Dispute` to do,
in the imperative (msgspec structs tagged by `kind`, on the table commands' `Command` base)."""

from __future__ import annotations

from typing import get_args

import msgspec

from domain.commands import Command
from domain.dispute.verdicts import Discrepancy, Verdict


class RecordVerdict(Command, tag="record-verdict"):
    """The replay's verdict, once; `corrections` (each player's chips delta), if any, are
    proposed with it."""

    verdict: Verdict
    discrepancies: list[Discrepancy] = msgspec.field(default_factory=list)
    notes: list[str] = msgspec.field(default_factory=list)
    corrections: dict[str, int] = msgspec.field(default_factory=dict)


class ApproveCorrection(Command, tag="approve-correction"):
    """Approve the proposed correction as `by`, acting in `role`."""

    role: str
    by: str


class ApplyCorrection(Command, tag="apply-correction"):
    """Record that the compensating events were recorded (`table`: the disputed table's
    name)."""

    table: str


DisputeCommand = RecordVerdict | ApproveCorrection | ApplyCorrection

DISPUTE_COMMANDS: tuple[type[Command], ...] = get_args(DisputeCommand)
"""Every dispute command, to refuse anything else at run time."""
