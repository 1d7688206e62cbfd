"""The BankAuction aggregate: bids checked (the bidder's own, within their chips, above the
last), the bank awarded to the highest, and anything but an auction command refused."""

from __future__ import annotations

import uuid

import pytest

from domain.auction.aggregate import BankAuction, Bid
from domain.auction.commands import CloseAuction, PlaceBid
from domain.errors import DomainError, RuleViolation
from domain.table.commands import SeatPlayer


def an_auction() -> BankAuction:
    return BankAuction(table_id=uuid.uuid4(), taille=1, after_coup=0, minimum=100,
                       actor="@croupier", command_id="open")


def test_the_highest_bid_takes_the_bank() -> None:
    auction = an_auction()
    auction.execute(PlaceBid(player="ann", amount=100, chips=500, command_id="b1", actor="ann"))
    auction.execute(PlaceBid(player="bob", amount=150, chips=150, command_id="b2", actor="bob"))
    auction.execute(CloseAuction(command_id="close"))
    assert auction.winner == Bid("bob", 150) and auction.closed


@pytest.mark.parametrize(("bid", "rule"), [
    (PlaceBid(player="ann", amount=100, chips=500, command_id="b", actor="bob"), "not-your-bid"),
    (PlaceBid(player="ann", amount=600, chips=500, command_id="b", actor="ann"),
     "bid-beyond-chips"),
    (PlaceBid(player="ann", amount=100, chips=500, standing=True, command_id="b", actor="ann"),
     "bid-beyond-chips"),
    (PlaceBid(player="ann", amount=99, chips=500, command_id="b", actor="ann"), "bid-too-low"),
    (CloseAuction(command_id="close"), "auction-no-bids"),
    (CloseAuction(command_id="close", actor="ann"), "official-step"),
])
def test_a_refused_command_records_nothing(bid: PlaceBid | CloseAuction, rule: str) -> None:
    auction = an_auction()
    with pytest.raises(DomainError) as refused:
        auction.execute(bid)
    assert refused.value.rule == rule
    assert auction.version == 1 and not auction.bids and not auction.closed


def test_an_unknown_command_is_refused_by_name() -> None:
    auction = an_auction()
    with pytest.raises(RuleViolation) as refused:
        auction.execute(SeatPlayer(command_id="x", player="ann", chips=10))  # type: ignore[arg-type]
    assert refused.value.rule == "unknown-command"
    assert str(refused.value) == "an auction takes no SeatPlayer command"
    assert auction.version == 1
