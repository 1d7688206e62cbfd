"""Bank auction commands: what a player or an official asks a `BankAuction` to do, in the
imperative (msgspec structs tagged by `kind`, on the table commands' `Command` base)."""

from __future__ import annotations

from typing import get_args

from domain.commands import Command
from domain.limits import Chips, Name


class PlaceBid(Command, tag="place-bid"):
    """`player` offers to put `amount` in the bank; `chips`: what they hold at the table now,
    `standing`: they stand behind it (both read by the service from the table)."""

    player: Name
    amount: Chips
    chips: Chips
    standing: bool = False


class CloseAuction(Command, tag="close-auction"):
    """Award the bank to the highest bid."""


AuctionCommand = PlaceBid | CloseAuction

AUCTION_COMMANDS: tuple[type[Command], ...] = get_args(AuctionCommand)
"""Every auction command, to refuse anything else at run time."""
