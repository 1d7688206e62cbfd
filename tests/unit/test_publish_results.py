"""`PublishResults` on the pure Tournament aggregate: refused before the finish, while a
dispute is open, and a second time, each refusal recording nothing; once published, the event
replays to the same publisher and time. Which disputes hold publishing up (`is_open`)."""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Snapshot

from domain.dispute.aggregate import Dispute
from domain.dispute.commands import RecordVerdict
from domain.dispute.verdicts import Discrepancy, Verdict
from domain.errors import OutOfTurn
from domain.tournament.aggregate import Tournament
from domain.tournament.commands import FinishTournament, PublishResults
from infra.services.results import is_open
from infra.store.mapper import MsgspecMapper
from tests.unit.test_dispute_aggregate import approve
from tests.unit.test_tournament import ORGANISER, SEED, bust, execute, one_table, org, refused


def test_results_are_published_once_finished_with_no_dispute_open() -> None:
    mapper = MsgspecMapper()
    tournament = one_table(3)
    refused(tournament, lambda: execute(tournament, PublishResults(open_disputes=[], at=1.0,
            **org("early"))),
            OutOfTurn, "not-finished")
    bust(tournament, 1, p001=10, p002=5)
    execute(tournament, FinishTournament(**org("finish")), SEED)
    refused(tournament, lambda: execute(tournament,
            PublishResults(open_disputes=["coup 1 at cup-table-1"], at=2.0, **org("disputed"))),
            OutOfTurn, "disputes-open")
    assert tournament.published_at is None
    tournament.collect_events()
    before = Snapshot.take(tournament)
    execute(tournament, PublishResults(open_disputes=[], at=3.0, **org("publish")))
    [published] = [e for e in tournament.collect_events()
                   if isinstance(e, Tournament.ResultsPublished)]
    assert (published.at, published.actor, published.command_id) == (3.0, ORGANISER, "publish")
    assert (tournament.published_by, tournament.published_at) == (ORGANISER, 3.0)
    refused(tournament, lambda: execute(tournament, PublishResults(open_disputes=[], at=4.0,
            **org("again"))),
            OutOfTurn, "results-published")
    # an older snapshot (taken before the event) and the stored event give the same tournament
    restored: Any = mapper.to_domain_event(mapper.to_stored_event(before)).mutate(None)
    assert restored.published_at is None
    restored = mapper.to_domain_event(mapper.to_stored_event(published)).mutate(restored)
    assert (restored.published_by, restored.published_at) == (ORGANISER, 3.0)


def test_a_dispute_is_open_while_replaying_and_while_its_correction_awaits_approvals() -> None:
    dispute = Dispute(table_id=Tournament.create_id("t"), coup=3, reason="a misread card",
                      by="p1", actor="p1", command_id="dispute")
    assert is_open(dispute)  # not replayed yet
    dispute.execute(RecordVerdict(verdict=Verdict.DISCREPANCIES, discrepancies=[Discrepancy(
        what="card", where="position 9", expected="Kh", recorded="9h")],
        corrections={"p1": 40}, actor="@replay", command_id="replay"))
    assert is_open(dispute)
    approve(dispute, "organiser", "@organiser", "a1")
    assert is_open(dispute)  # one role of the two
    approve(dispute, "auditor", "@auditor", "a2")
    assert not is_open(dispute)  # approved: applied, or refused once the tournament ended
    consistent = Dispute(table_id=Tournament.create_id("t"), coup=4, reason="why",
                         by="p1", actor="p1", command_id="dispute-2")
    consistent.execute(RecordVerdict(verdict=Verdict.CONSISTENT, actor="@replay",
                                     command_id="replay-2"))
    assert not is_open(consistent)
