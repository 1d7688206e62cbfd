"""The record's topics stay those it began with, wherever the aggregates' classes live now
(`domain.topics`): every aggregate and every one of its event classes, and an old topic
resolves to the class."""

from __future__ import annotations

import pytest
from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic, resolve_topic

from domain.auction.aggregate import BankAuction
from domain.dispute.aggregate import Dispute
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament

RECORDED_AS = [(Table, "domain.table_aggregate"), (Tournament, "domain.tournament_aggregate"),
               (BankAuction, "domain.auction_aggregate"), (Dispute, "domain.dispute_aggregate")]


@pytest.mark.parametrize(("aggregate", "module"), RECORDED_AS)
def test_every_class_of_an_aggregate_keeps_its_first_topic(
        aggregate: type[Aggregate], module: str) -> None:
    events = [v for v in vars(aggregate).values()
              if isinstance(v, type) and issubclass(v, Aggregate.Event)]
    assert len(events) > 3
    assert get_topic(aggregate) == f"{module}:{aggregate.__name__}"
    for event in events:
        topic = f"{module}:{aggregate.__name__}.{event.__name__}"
        assert get_topic(event) == topic
        assert resolve_topic(topic) is event
