"""The BankAuction aggregate: the first bank of a taille goes to the highest sum put up.

Chemin de fer (001): a player proposes a first banco, any other may outbid; à deux tableaux
(000): "celui-là est promu à la dignité de banquier, qui offre de mettre la plus grosse somme
en banque". A bid must reach the table's minimum and beat the highest bid so far; a bidder
may raise their own bid. Closing awards the bank to the highest bidder, who then puts it up
at the table (the service records `AwardBank` there with `how="auction"`).
"""

from __future__ import annotations

import uuid
from typing import assert_never

import msgspec
from eventsourcing.domain import Aggregate, event

from domain.actors import require_actor
from domain.auction import commands as ac
from domain.commands import require_known
from domain.errors import OutOfTurn, RuleViolation
from domain.topics import keep_topics

NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-0a0c710e0000")


class Bid(msgspec.Struct, frozen=True):
    player: str
    amount: int


class BankAuction(Aggregate):
    table_id: uuid.UUID
    taille: int
    after_coup: int
    minimum: int
    bids: list[Bid]
    winner: Bid | None
    closed: bool

    @staticmethod
    def create_id(table_id: uuid.UUID, taille: int, after_coup: int, **_: object) -> uuid.UUID:
        """One auction per bank wanted (a taille's first, or after a bank broke)."""
        return uuid.uuid5(NAMESPACE, f"auction/{table_id}/{taille}/{after_coup}")

    class Opened(Aggregate.Created):
        table_id: uuid.UUID
        taille: int
        after_coup: int
        minimum: int
        actor: str
        command_id: str

    @event(Opened)
    def __init__(self, table_id: uuid.UUID, taille: int, after_coup: int, minimum: int,
                 actor: str, command_id: str) -> None:
        if minimum < 1:
            raise RuleViolation("an auction's minimum bid is at least 1", rule="auction-minimum")
        self.table_id = table_id
        self.taille = taille
        self.after_coup = after_coup
        self.minimum = minimum
        self.bids = []
        self.winner = None
        self.closed = False

    @property
    def highest(self) -> Bid | None:
        return max(self.bids, key=lambda b: b.amount) if self.bids else None

    def execute(self, command: ac.AuctionCommand) -> None:
        """Check `command` (its actor's right, the auction's rules) and record what it does."""
        require_known(command, ac.AUCTION_COMMANDS, "an auction")
        actor = command.actor
        who = {"actor": actor, "command_id": command.command_id}
        if self.closed:
            raise OutOfTurn("the auction is closed", rule="auction-closed")
        match command:
            case ac.PlaceBid(player=p, amount=amount, chips=chips, standing=standing):
                require_actor(actor, p, f"bid for {p}", rule="not-your-bid")
                if standing or amount > chips:
                    raise RuleViolation(f"{p} cannot put up {amount} (has {chips})",
                                        rule="bid-beyond-chips")
                self._bid_placed(player=p, amount=amount, **who)
            case ac.CloseAuction():
                require_actor(actor, None, "close the auction", rule="official-step")
                best = self.highest
                if best is None:
                    raise RuleViolation("nobody bid for the bank", rule="auction-no-bids")
                self._awarded(player=best.player, amount=best.amount, **who)
            case _:
                assert_never(command)

    class BidPlaced(Aggregate.Event):
        player: str
        amount: int
        actor: str
        command_id: str

    @event(BidPlaced)
    def _bid_placed(self, player: str, amount: int, actor: str, command_id: str) -> None:
        if self.closed:
            raise OutOfTurn("the auction is closed", rule="auction-closed")
        floor = self.minimum if self.highest is None else self.highest.amount + 1
        if amount < floor:
            raise RuleViolation(f"a bid must be at least {floor}", rule="bid-too-low")
        self.bids.append(Bid(player, amount))

    class BankAwarded(Aggregate.Event):
        player: str
        amount: int
        actor: str
        command_id: str

    @event(BankAwarded)
    def _awarded(self, player: str, amount: int, actor: str, command_id: str) -> None:
        if self.closed or Bid(player, amount) != self.highest:
            raise RuleViolation(f"the bank goes to the highest bid, not {player}'s {amount}",
                                rule="award-mismatch")
        self.winner = Bid(player, amount)
        self.closed = True


keep_topics(BankAuction, "domain.auction_aggregate")
