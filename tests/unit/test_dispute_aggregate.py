"""The Dispute aggregate: a correction is proposed by a verdict of discrepancies, approved by
two different roles (the organiser's and an auditor's or a floor manager's), applied once."""

from __future__ import annotations

import uuid

import pytest

from domain.dispute_aggregate import (
    Discrepancy,
    Dispute,
    Verdict,
    corrected_coup,
    correction_reason,
)
from domain.errors import OutOfTurn, RuleViolation

WRONG = Discrepancy(what="card", where="position 3 (punter)", expected="2c", recorded="9d")


def proposed(corrections: dict[str, int] | None = None) -> Dispute:
    dispute = Dispute(table_id=uuid.uuid4(), coup=4, reason="misread", by="ann", actor="ann",
                      command_id="open")
    dispute.record_verdict(verdict=Verdict.DISCREPANCIES, discrepancies=[WRONG], notes=[],
                           actor="@replay", command_id="replay")
    dispute.propose(corrections=corrections or {"ann": 40, "bob": -40}, actor="@replay",
                    command_id="replay")
    return dispute


def test_two_roles_approve_then_it_applies_once() -> None:
    dispute = proposed()
    dispute.approve("organiser", "@organiser", actor="@organiser", command_id="a1")
    assert not dispute.approved
    with pytest.raises(OutOfTurn, match="needs the organiser's and an auditor's"):
        dispute.apply("t1", actor="@organiser", command_id="applied")
    dispute.approve("floor-manager", "@floor-manager", actor="@floor-manager",
                    command_id="a2")
    assert dispute.approved
    dispute.apply("t1", actor="@organiser", command_id="applied")
    events = dispute.collect_events()
    applied = events[-1]
    assert isinstance(applied, Dispute.CorrectionApplied)
    assert applied.corrections == {"ann": 40, "bob": -40}
    assert [a.role for a in applied.approvals] == ["organiser", "floor-manager"]
    assert applied.reason == correction_reason("t1", 4, dispute.id, "misread")
    assert applied.reason == f"correction of coup 4 at t1 (dispute {dispute.id}): misread"
    assert corrected_coup(applied.reason) == ("t1", 4)
    with pytest.raises(OutOfTurn, match="already applied"):
        dispute.approve("auditor", "@auditor", actor="@auditor", command_id="a3")


@pytest.mark.parametrize(("role", "by", "rule"), [
    ("organiser", "@someone-else", "same-role"),
    ("auditor", "@organiser", "same-approver"),
    ("croupier", "@croupier", "not-an-approver"),
])
def test_the_second_approval_is_another_role_and_person(role: str, by: str, rule: str) -> None:
    dispute = proposed()
    dispute.approve("organiser", "@organiser", actor="@organiser", command_id="a1")
    with pytest.raises((OutOfTurn, RuleViolation)) as refused:
        dispute.approve(role, by, actor=by, command_id="a2")
    assert refused.value.rule == rule
    assert len(dispute.approvals) == 1


def test_an_auditor_and_a_floor_manager_still_need_the_organiser() -> None:
    dispute = proposed()
    dispute.approve("auditor", "@auditor", actor="@auditor", command_id="a1")
    dispute.approve("floor-manager", "@floor-manager", actor="@floor-manager", command_id="a2")
    assert not dispute.approved
    dispute.approve("organiser", "@organiser", actor="@organiser", command_id="a3")
    assert dispute.approved


def test_no_correction_without_discrepancies_or_chips() -> None:
    dispute = Dispute(table_id=uuid.uuid4(), coup=4, reason="r", by="ann", actor="ann",
                      command_id="open")
    with pytest.raises(OutOfTurn, match="no correction"):
        dispute.approve("organiser", "@organiser", actor="@organiser", command_id="a1")
    dispute.record_verdict(verdict=Verdict.CONSISTENT, discrepancies=[], notes=[],
                           actor="@replay", command_id="replay")
    with pytest.raises(OutOfTurn, match="verdict of discrepancies"):
        dispute.propose(corrections={"ann": 5}, actor="@replay", command_id="replay")
    with pytest.raises(RuleViolation, match="moves chips"):
        proposed({"ann": 0})
    assert corrected_coup("a penalty") is None
