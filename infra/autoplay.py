"""One step of a bot-played table through the store, auctions included.

`sabot play`, the tournament's workers and the tests drive tables with this: when a table
wants its first bank and its settings say auction, the bots bid at the auction desk;
otherwise the table's next command comes from `domain.bots.next_command`. The bots' random
choices and the command ids both follow from the game's seed and the table's version, so a
step taken twice (a redelivered task) sends the same command, applied once, and the same
seed plays the same game in any process.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable

from domain.bots import auction_bids, next_command, playable
from domain.settings import FirstBank
from domain.table import Phase, TableState
from infra.auctions import AuctionDesk
from infra.service import TableService


def play_step(service: TableService, table_id: uuid.UUID, seed: bytes, prefix: str) -> int:
    """Move the table on by one command (or one whole auction); returns the events recorded."""
    table = service.table(table_id)
    state = table.state
    ids = f"{prefix}:{table.name}:{table.version}"
    rng = random.Random(f"{seed.hex()}/{table_id}/{table.version}")
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


def play_coups(service: TableService, table_id: uuid.UUID, seed: bytes, prefix: str,
               until: int, on_step: Callable[[TableState], object] = lambda _: None) -> int:
    """Play until the table has closed coup `until` (and revealed a finished taille's seed),
    or until it cannot go on; returns the events recorded. `on_step` sees the table after
    every step (a progress display)."""
    events = 0
    state = service.state(table_id)
    while (state.coup_number < until or state.coup is not None
           or state.phase is Phase.TAILLE_OVER):
        if state.coup is None and state.phase is not Phase.TAILLE_OVER and not playable(state):
            break
        events += play_step(service, table_id, seed, prefix)
        state = service.state(table_id)
        on_step(state)
    return events
