"""One step of a bot-played table through a store, auctions included.

`sabot play`, the tournament's workers, the preview (on `infra.services.memory`'s store) and the
tests drive tables with this: when a table wants its first bank and its settings say auction, the
bots bid at the auction desk; otherwise the table's next command comes from
`domain.bots.next_command`. The bots' random choices and the command ids both follow from the game's
seed and the table's version, so a step taken twice (a redelivered task) sends the same command,
applied once, and the same seed plays the same game in any process.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from domain.bots import auction_bids, next_command, playable
from domain.game.settings import FirstBank
from domain.table.aggregate import Table
from domain.table.commands import TableCommand
from domain.table.state import Phase, TableState
from infra.services.auctions import AuctionDesk
from infra.services.memory import Store
from infra.services.tables import Recorded


def play_step(service: Store, table_id: uuid.UUID, seed: bytes, prefix: str) -> Recorded:
    """Move the table on by one command (or one whole auction): the table is loaded once,
    the bots choose from it, and it decides. What was recorded, the table after included."""
    def choose(table: Table) -> TableCommand:
        state = table.state
        ids = f"{prefix}:{table.name}:{table.version}"
        rng = random.Random(f"{seed.hex()}/{table_id}/{table.version}")
        wants_auction = (state.phase is Phase.NO_BANK and state.bank_offered_to is None
                         and state.settings.first_bank is FirstBank.AUCTION)
        if wants_auction:
            bids = auction_bids(state, rng)
            if bids:
                raise _Auction(bids, ids)
        return next_command(state, rng, lambda label: f"{ids}:{label}")

    try:
        return service.execute_next(table_id, choose)
    except _Auction as wanted:
        return _auction(service, table_id, wanted.bids, wanted.ids)


class _Auction(Exception):
    """The table wants its first bank from an auction: the bots bid at the desk instead."""

    def __init__(self, bids: list[tuple[str, int]], ids: str) -> None:
        self.bids, self.ids = bids, ids


def _auction(service: Store, table_id: uuid.UUID, bids: list[tuple[str, int]],
             ids: str) -> Recorded:
    desk = AuctionDesk(service)
    auction_id = desk.open(table_id, command_id=f"{ids}:auction")
    opened = service.answered(f"{ids}:auction")
    events: list[dict[str, Any]] = opened.events if opened else []
    for n, (player, amount) in enumerate(bids):
        events += desk.bid(auction_id, player, amount, command_id=f"{ids}:bid-{n}",
                           actor=player).events
    closed = desk.close(auction_id, command_id=f"{ids}:award")
    return Recorded(table_id, closed.version, events + closed.events, closed.aggregate)


def play_coups(service: Store, table_id: uuid.UUID, seed: bytes, prefix: str,
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
        recorded = play_step(service, table_id, seed, prefix)
        events += len(recorded.events)
        state = recorded.state or service.state(table_id)
        on_step(state)
    return events
