"""The bank auction through the store, on SQLite and PostgreSQL: bids, refusals, the award."""

from __future__ import annotations

import random
import uuid

import pytest

from domain.bots import next_command
from domain.errors import DomainError
from domain.game.settings import TableSettings
from domain.table import commands as c
from domain.table.state import Phase
from infra.services.auctions import AuctionDesk
from infra.services.tables import TableService, seeds_from


def table_wanting_a_bank(url: str, variant: str) -> tuple[TableService, uuid.UUID]:
    service = TableService(url=url)
    service.seed_source = seeds_from(b"auction")
    table_id = service.open_table(f"auction-{variant}", TableSettings.default(variant),
                                  command_id="open").table_id
    for i, player in enumerate(["ann", "bob", "cy"]):
        side = None if variant == "chemin-de-fer" else ("right" if i % 2 == 0 else "left")
        service.execute(table_id, c.SeatPlayer(command_id=f"seat-{player}", player=player,
                                               chips=500, side=side))
    rng = random.Random(7)
    while service.state(table_id).phase is not Phase.NO_BANK:
        version = service.table(table_id).version
        service.execute(table_id, next_command(service.state(table_id), rng,
                                               lambda label, v=version: f"{v}:{label}"))
    return service, table_id


def stored(service: TableService) -> int:
    return service.recorder.max_notification_id() or 0


@pytest.mark.parametrize("variant", ["chemin-de-fer", "deux-tableaux"])
def test_the_highest_bid_takes_the_bank(database_url: str, variant: str) -> None:
    service, table_id = table_wanting_a_bank(database_url, variant)
    desk = AuctionDesk(service)
    auction_id = desk.open(table_id, command_id="auction")
    assert desk.open(table_id, command_id="auction") == auction_id
    desk.bid(auction_id, "ann", 100, command_id="bid-1", actor="ann")
    desk.bid(auction_id, "bob", 150, command_id="bid-2", actor="bob")
    desk.bid(auction_id, "ann", 200, command_id="bid-3", actor="ann")
    first = desk.close(auction_id, command_id="close")
    again = desk.close(auction_id, command_id="close")
    assert first == again
    assert [e["type"] for e in first.events] == ["BankAwarded", "BankAwarded"]
    state = service.state(table_id)
    assert (state.banker, state.bank, state.phase) == ("ann", 200, Phase.BETTING)
    assert state.seat_of("ann").chips == 300
    assert [(b.player, b.amount) for b in desk.auction(auction_id).bids] == [
        ("ann", 100), ("bob", 150), ("ann", 200)]


@pytest.mark.parametrize(("player", "amount", "actor", "rule"), [
    ("bob", 100, "bob", "bid-too-low"),        # must beat the 100 already bid
    ("cy", 900, "cy", "bid-beyond-chips"),
    ("bob", 120, "cy", "not-your-bid"),
    ("zed", 120, "zed", "unknown-player"),
])
def test_a_refused_bid_writes_nothing(database_url: str, player: str, amount: int,
                                      actor: str, rule: str) -> None:
    service, table_id = table_wanting_a_bank(database_url, "chemin-de-fer")
    desk = AuctionDesk(service)
    auction_id = desk.open(table_id, command_id="auction")
    desk.bid(auction_id, "ann", 100, command_id="bid-1", actor="ann")
    before = stored(service)
    with pytest.raises(DomainError) as refused:
        desk.bid(auction_id, player, amount, command_id="bid-2", actor=actor)
    assert refused.value.rule == rule
    assert stored(service) == before


def test_no_bids_no_bank_and_no_second_close(sqlite_url: str) -> None:
    service, table_id = table_wanting_a_bank(sqlite_url, "chemin-de-fer")
    desk = AuctionDesk(service)
    auction_id = desk.open(table_id, command_id="auction")
    with pytest.raises(DomainError, match="nobody bid"):
        desk.close(auction_id, command_id="close-empty")
    desk.bid(auction_id, "cy", 50, command_id="bid", actor="cy")
    desk.close(auction_id, command_id="close")
    with pytest.raises(DomainError, match="closed"):
        desk.close(auction_id, command_id="close-again")
    with pytest.raises(DomainError, match="not looking for a first bank"):
        desk.open(table_id, command_id="auction-2")
