"""One step of a bot-played table through the store, auctions included.

`sabot play` and the tournament drive tables with this: when a table wants its first bank
and its settings say auction, the bots bid at the auction desk; otherwise the table's next
command comes from `domain.bots.next_command`. Command ids are derived from the table's
version, so a replayed step sends the same ids and is applied once.
"""

from __future__ import annotations

import random
import uuid

from domain.bots import auction_bids, next_command
from domain.settings import FirstBank
from domain.table import Phase
from infra.auctions import AuctionDesk
from infra.service import TableService


def play_step(service: TableService, table_id: uuid.UUID, rng: random.Random,
              prefix: str) -> int:
    """Move the table on by one command (or one whole auction); returns the events recorded."""
    table = service.table(table_id)
    state = table.state
    ids = f"{prefix}:{table.version}"
    wants_auction = (state.phase is Phase.NO_BANK and state.bank_offered_to is None
                     and state.settings.first_bank is FirstBank.AUCTION)
    if wants_auction:
        bids = auction_bids(state, rng)
        if bids:
            return _auction(service, table_id, bids, ids)
    command = next_command(state, rng, lambda label: f"{ids}:{label}")
    return len(service.execute(table_id, command).events)


def _auction(service: TableService, table_id: uuid.UUID, bids: list[tuple[str, int]],
             ids: str) -> int:
    desk = AuctionDesk(service)
    auction_id = desk.open(table_id, command_id=f"{ids}:auction")
    events = 1
    for n, (player, amount) in enumerate(bids):
        events += len(desk.bid(auction_id, player, amount, command_id=f"{ids}:bid-{n}",
                               actor=player).events)
    return events + len(desk.close(auction_id, command_id=f"{ids}:award").events)
