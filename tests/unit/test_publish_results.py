"""`PublishResults` on the pure Tournament aggregate: refused before the finish, while a
dispute is open, and a second time, each refusal recording nothing; once published, the event
replays to the same publisher and time."""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Snapshot

from domain.errors import OutOfTurn
from domain.tournament_aggregate import Tournament
from infra.mapper import MsgspecMapper
from tests.unit.test_tournament import ORGANISER, SEED, bust, one_table, refused


def test_results_are_published_once_finished_with_no_dispute_open() -> None:
    mapper = MsgspecMapper()
    tournament = one_table(3)
    refused(tournament, lambda: tournament.publish_results([], 1.0, ORGANISER, "early"),
            OutOfTurn, "not-finished")
    bust(tournament, 1, p001=10, p002=5)
    tournament.finish(SEED, actor=ORGANISER, command_id="finish")
    refused(tournament, lambda: tournament.publish_results(["coup 1 at cup-table-1"], 2.0,
                                                           ORGANISER, "disputed"),
            OutOfTurn, "disputes-open")
    assert tournament.published_at is None
    tournament.collect_events()
    before = Snapshot.take(tournament)
    tournament.publish_results([], 3.0, ORGANISER, "publish")
    [published] = [e for e in tournament.collect_events()
                   if isinstance(e, Tournament.ResultsPublished)]
    assert (published.at, published.actor, published.command_id) == (3.0, ORGANISER, "publish")
    assert (tournament.published_by, tournament.published_at) == (ORGANISER, 3.0)
    refused(tournament, lambda: tournament.publish_results([], 4.0, ORGANISER, "again"),
            OutOfTurn, "results-published")
    # an older snapshot (taken before the event) and the stored event give the same tournament
    restored: Any = mapper.to_domain_event(mapper.to_stored_event(before)).mutate(None)
    assert restored.published_at is None
    restored = mapper.to_domain_event(mapper.to_stored_event(published)).mutate(restored)
    assert (restored.published_by, restored.published_at) == (ORGANISER, 3.0)
