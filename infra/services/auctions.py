"""The auction desk: open a bank auction when a table wants a bank, take bids, award the bank.

Each step is one command, applied once by its command id. Closing records the award on the
auction, then puts the bank up at the table (`AwardBank`, `how="auction"`) under a command id
derived from the closing one, so a retried close finishes a half-done award and never
awards twice.
"""

from __future__ import annotations

import uuid

from domain.auction.aggregate import BankAuction
from domain.auction.commands import AuctionCommand, CloseAuction, PlaceBid
from domain.errors import OutOfTurn, RuleViolation
from domain.game.settings import FirstBank
from domain.table.commands import AwardBank
from domain.table.state import Phase
from infra.services.memory import Store
from infra.services.tables import Recorded


class AuctionDesk:
    def __init__(self, service: Store) -> None:
        self.service = service

    def auction(self, auction_id: uuid.UUID) -> BankAuction:
        auction: BankAuction = self.service.load(auction_id, "auction")
        return auction

    def open(self, table_id: uuid.UUID, *, command_id: str,
             actor: str = "@croupier") -> uuid.UUID:
        """Open the auction of the table's current taille (the table must want a bank)."""
        state = self.service.state(table_id)
        if state.phase is not Phase.NO_BANK or state.bank_offered_to is not None:
            raise OutOfTurn("the table is not looking for a first bank", rule="no-auction-now")
        if state.settings.first_bank is not FirstBank.AUCTION:
            raise RuleViolation("this table gives its first bank by lot", rule="no-auction")
        auction_id = BankAuction.create_id(table_id, state.taille, state.coup_number)
        if self.service.answered(command_id) is None and not self.service.exists(auction_id):
            auction = BankAuction(table_id=table_id, taille=state.taille,
                                  after_coup=state.coup_number,
                                  minimum=state.settings.min_stake, actor=actor,
                                  command_id=command_id)
            self.service.record(auction, command_id)
        return auction_id

    def bid(self, auction_id: uuid.UUID, player: str, amount: int, *, command_id: str,
            actor: str | None = None) -> Recorded:
        """A seated player offers to put `amount` in the bank."""
        seat = self.service.state(self.auction(auction_id).table_id).seat_of(player)
        return self.execute(auction_id, PlaceBid(
            player=player, amount=amount, chips=seat.chips, standing=seat.standing,
            actor=actor or player, command_id=command_id))

    def close(self, auction_id: uuid.UUID, *, command_id: str,
              actor: str = "@croupier") -> Recorded:
        """Award the bank to the highest bid and put it up at the table."""
        closed = self.execute(auction_id, CloseAuction(actor=actor, command_id=command_id))
        auction = self.auction(auction_id)
        assert auction.winner is not None
        award = AwardBank(command_id=f"{command_id}:award", actor=actor,
                          player=auction.winner.player, amount=auction.winner.amount,
                          how="auction")
        placed = self.service.execute(auction.table_id, award)
        return Recorded(placed.table_id, placed.version, closed.events + placed.events,
                        placed.aggregate)

    def execute(self, auction_id: uuid.UUID, command: AuctionCommand) -> Recorded:
        """Apply one command to an auction, once, whatever the retries and races."""
        return self.service.apply_once(auction_id, "auction", command.command_id,
                                       lambda auction: auction.execute(command))
