"""A table's commands: what an actor asks a table to do, in the imperative.

Each is a `domain.commands.Command` (a `command_id` chosen by the caller, the `actor` who
asks), tagged by `kind`, so one JSON body decodes to the right command; `TableCommand` is
their union and `TABLE_COMMANDS` the tuple a table checks at run time.
"""

from __future__ import annotations

from typing import get_args

from domain.commands import Command
from domain.game.cards import Card
from domain.game.coup import Side
from domain.game.payouts import Spot
from domain.limits import Chips, Count, Name, Reason
from domain.table.betting_order import PassReason


class SeatPlayer(Command, tag="seat"):
    player: Name
    chips: Chips
    side: Side | None = None
    standing: bool = False


class LeaveTable(Command, tag="leave"):
    player: Name


class AdjustChips(Command, tag="adjust-chips"):
    player: Name
    delta: Chips
    reason: Reason


class ShuffleShoe(Command, tag="shuffle"):
    """Start a taille. An RNG shoe's seed is drawn by the service and kept in the vault."""

    physical: bool = False


class ContributeEntropy(Command, tag="contribute"):
    player: Name
    entropy: str


class CutShoe(Command, tag="cut"):
    player: Name
    position: Count


class BurnCard(Command, tag="burn"):
    """`card`: a physical shoe's card as it comes out; None for an RNG shoe."""

    card: Card | None = None


class AwardBank(Command, tag="award-bank"):
    """The bank goes to `player` (auction, lot, or the player offered the shoe taking it)."""

    player: Name
    amount: Chips
    how: str = "taken"


class DeclineBank(Command, tag="decline-bank"):
    """`player` lets the shoe offered to them pass; `coup` (the clock's default): the offer
    made after that coup only, a decline that finds it taken or passed recording nothing."""

    player: Name
    coup: Count | None = None  # None: the offer now


class RetireBank(Command, tag="retire-bank"):
    player: Name


class PlaceBet(Command, tag="bet"):
    player: Name
    spot: Spot
    amount: Chips


class PassBetTurn(Command, tag="pass-bet"):
    """In a rotating betting order, `player`'s turn to bet on coup `coup` passes with no bet:
    the player passes (`pass`), or an official for the clock or a secret bet."""

    player: Name
    coup: Count | None = None  # None: the coup being staked now
    reason: PassReason = PassReason.PASS


class PlaceStake(Command, tag="stake"):
    player: Name
    tableau: Side
    amount: Chips


class CallBanco(Command, tag="banco"):
    player: Name


class CloseBetting(Command, tag="close-betting"):
    pass


class DealCard(Command, tag="deal"):
    card: Card | None = None


class ShowNaturals(Command, tag="show-naturals"):
    pass


class Decide(Command, tag="decide"):
    """Draw (`draw=True`) or stand, for the hand of `side`."""

    side: Side
    draw: bool


class SettleCoup(Command, tag="settle"):
    pass


class PayCoup(Command, tag="pay"):
    pass


class RevealSeed(Command, tag="reveal-seed"):
    pass


class EndTaille(Command, tag="end-taille"):
    """End the taille between coups, with cards left in the shoe."""


class PlayDefault(Command, tag="play-default"):
    """Apply the default policy to the decision now awaited (a deadline expired)."""

    coup: Count
    side: Side


class OfferCard(Command, tag="offer-card"):
    """À deux tableaux, the banker says "Je donne": the punters may draw (002)."""


class ShowDown(Command, tag="show-down"):
    """À deux tableaux, the banker shows his first two cards, whatever their point, and the
    coup is settled as the cards lie (002: "le banquier a le droit d'abattre son jeu du
    premier coup")."""


class ChangeLimits(Command, tag="change-limits"):
    """An official sets the table's stake limits between coups (a tournament's round whose
    limits rise); `max_stake` 0: no table maximum; `bet_seconds`: the round's bet clock too
    (None: unchanged)."""

    min_stake: Chips
    max_stake: Chips = 0
    bet_seconds: Count | None = None


TableCommand = (
    SeatPlayer | LeaveTable | AdjustChips | ShuffleShoe | ContributeEntropy | CutShoe
    | BurnCard | AwardBank | DeclineBank | RetireBank | PlaceBet | PlaceStake | CallBanco
    | CloseBetting | DealCard | ShowNaturals | Decide | SettleCoup | PayCoup | RevealSeed
    | EndTaille | PlayDefault | OfferCard | ShowDown | ChangeLimits | PassBetTurn
)

TABLE_COMMANDS: tuple[type[Command], ...] = get_args(TableCommand)
"""Every table command, to refuse anything else at run time."""
