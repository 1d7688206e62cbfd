"""The Dispute aggregate: a correction is proposed by a verdict of discrepancies, approved by
two different roles (the organiser's and an auditor's or a floor manager's), applied once."""

from __future__ import annotations

import uuid

import pytest

from domain.dispute.aggregate import Dispute, corrected_coup, correction_reason
from domain.dispute.commands import ApplyCorrection, ApproveCorrection, RecordVerdict
from domain.dispute.verdicts import Discrepancy, Verdict
from domain.errors import OutOfTurn, RuleViolation
from domain.table.commands import SeatPlayer

WRONG = Discrepancy(what="card", where="position 3 (punter)", expected="2c", recorded="9d")


def proposed(corrections: dict[str, int] | None = None) -> Dispute:
    dispute = Dispute(table_id=uuid.uuid4(), coup=4, reason="misread", by="ann", actor="ann",
                      command_id="open")
    dispute.execute(RecordVerdict(
        verdict=Verdict.DISCREPANCIES, discrepancies=[WRONG],
        corrections=corrections or {"ann": 40, "bob": -40}, actor="@replay",
        command_id="replay"))
    return dispute


def approve(dispute: Dispute, role: str, by: str, command_id: str) -> None:
    dispute.execute(ApproveCorrection(role=role, by=by, actor=by, command_id=command_id))


def test_two_roles_approve_then_it_applies_once() -> None:
    dispute = proposed()
    approve(dispute, "organiser", "@organiser", "a1")
    assert not dispute.approved
    with pytest.raises(OutOfTurn, match="needs the organiser's and an auditor's"):
        dispute.execute(ApplyCorrection(table="t1", actor="@organiser", command_id="applied"))
    approve(dispute, "floor-manager", "@floor-manager", "a2")
    assert dispute.approved
    dispute.execute(ApplyCorrection(table="t1", actor="@organiser", command_id="applied"))
    events = dispute.collect_events()
    applied = events[-1]
    assert isinstance(applied, Dispute.CorrectionApplied)
    assert applied.corrections == {"ann": 40, "bob": -40}
    assert [a.role for a in applied.approvals] == ["organiser", "floor-manager"]
    assert applied.reason == correction_reason("t1", 4, dispute.id, "misread")
    assert applied.reason == f"correction of coup 4 at t1 (dispute {dispute.id}): misread"
    assert corrected_coup(applied.reason) == ("t1", 4)
    with pytest.raises(OutOfTurn, match="already applied"):
        approve(dispute, "auditor", "@auditor", "a3")


@pytest.mark.parametrize(("role", "by", "rule"), [
    ("organiser", "@someone-else", "same-role"),
    ("auditor", "@organiser", "same-approver"),
    ("croupier", "@croupier", "not-an-approver"),
])
def test_the_second_approval_is_another_role_and_person(role: str, by: str, rule: str) -> None:
    dispute = proposed()
    approve(dispute, "organiser", "@organiser", "a1")
    with pytest.raises((OutOfTurn, RuleViolation)) as refused:
        approve(dispute, role, by, "a2")
    assert refused.value.rule == rule
    assert len(dispute.approvals) == 1


def test_an_auditor_and_a_floor_manager_still_need_the_organiser() -> None:
    dispute = proposed()
    approve(dispute, "auditor", "@auditor", "a1")
    approve(dispute, "floor-manager", "@floor-manager", "a2")
    assert not dispute.approved
    approve(dispute, "organiser", "@organiser", "a3")
    assert dispute.approved


def test_no_correction_without_discrepancies_or_chips() -> None:
    dispute = Dispute(table_id=uuid.uuid4(), coup=4, reason="r", by="ann", actor="ann",
                      command_id="open")
    with pytest.raises(OutOfTurn, match="no correction"):
        approve(dispute, "organiser", "@organiser", "a1")
    with pytest.raises(OutOfTurn, match="verdict of discrepancies"):
        dispute.execute(RecordVerdict(verdict=Verdict.CONSISTENT, corrections={"ann": 5},
                                      actor="@replay", command_id="replay"))
    with pytest.raises(RuleViolation, match="moves chips"):
        proposed({"ann": 0})
    assert corrected_coup("a penalty") is None


def test_an_unknown_command_is_refused_by_name() -> None:
    dispute = Dispute(table_id=uuid.uuid4(), coup=4, reason="r", by="ann", actor="ann",
                      command_id="open")
    before = dispute.version
    with pytest.raises(RuleViolation) as refused:
        dispute.execute(SeatPlayer(command_id="x", player="ann",
                        chips=10))  # type: ignore[arg-type]
    assert refused.value.rule == "unknown-command"
    assert str(refused.value) == "a dispute takes no SeatPlayer command"
    assert dispute.version == before and dispute.verdict is Verdict.OPEN
