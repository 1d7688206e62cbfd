"""Who banks a table, and who holds each hand: a variant's banking rule.

- The house banks (punto banco): punters bet on Player, Banker or Tie, and nobody holds a
  hand, the drawing table plays both.
- The family game's duel (003): two seated players, Banque and Ponte, each put up the duel
  stake and hold the banker's and the punters' hand; the others bet on the house's spots.
- A player banks (chemin de fer, à deux tableaux): the bank is given, punters stake against
  it on a tableau, the banker holds the banker's hand and coverage names each tableau's holder.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

from domain.errors import RuleViolation
from domain.game.coverage import Coverage
from domain.game.payouts import Bet
from domain.game.seat_view import SeatView
from domain.game.settings import TableSettings
from domain.game.sides import Side


class DuelTable(Protocol):
    """What the banking rules read of a table, and the duel they fill."""

    settings: TableSettings
    banker: str | None
    covered: Coverage | None
    duel: list[str]
    bets: list[Bet]

    def seat_of(self, player: str) -> SeatView: ...

    def seated(self) -> list[str]: ...


class HouseBanks:
    """The house banks every bet; the drawing table decides for both hands."""

    has_bank = False  # a player holds a bank, given before betting
    players_needed = 1  # seated players with chips that make a coup

    def hand_holder(self, state: DuelTable, side: Side) -> str | None:
        """Who decides for a hand in the coup being played (None: the drawing table)."""
        return None

    def seated(self, state: DuelTable) -> None:
        """A player has sat down."""

    def chips_moved(self, state: DuelTable) -> None:
        """A player's chips were adjusted (by the tournament)."""

    def betting_opens(self, state: DuelTable) -> None:
        """Betting opens on a new taille."""

    def check_close(self, state: DuelTable) -> None:
        """Refuse to close betting while the coup lacks its players."""


class Duel(HouseBanks):
    """The family game: Banque (`duel[0]`) and Ponte (`duel[1]`), the house's side bets."""

    players_needed = 2

    def hand_holder(self, state: DuelTable, side: Side) -> str | None:
        """Ponte holds the punters' hand, Banque the banker's; nobody while the duel lacks
        them (a decision asked then is refused by the coup, none being played)."""
        place = 1 if side is Side.PUNTER else 0
        return state.duel[place] if len(state.duel) > place else None

    def seated(self, state: DuelTable) -> None:
        fill_duel(state)

    def chips_moved(self, state: DuelTable) -> None:
        # "Banque and Ponte stake the duel, not the side bets": chips given to a player who has
        # bet on the coup being staked do not make them a duellist of it.
        fill_duel(state, bettors={bet.player for bet in state.bets})

    def betting_opens(self, state: DuelTable) -> None:
        fill_duel(state)

    def check_close(self, state: DuelTable) -> None:
        # 003: "La Banque et la Ponte parient sur leur victoire respective un montant identique
        # qu'ils placent devant eux": each duellist puts the duel stake up before the coup.
        if len(state.duel) < 2 or not all(can_duel(state, p) for p in state.duel):
            raise RuleViolation(f"two players with {state.settings.duel_stake} chips must duel",
                                rule="no-duel")


class PlayerBanks(HouseBanks):
    """A player holds the bank; punters stake against it on a tableau."""

    has_bank = True
    players_needed = 2

    def hand_holder(self, state: DuelTable, side: Side) -> str | None:
        if side is Side.BANKER:
            return state.banker
        return state.covered.hand_holders.get(side) if state.covered else None


def can_duel(state: DuelTable, player: str) -> bool:
    return state.seat_of(player).chips >= state.settings.duel_stake


def fill_duel(state: DuelTable, bettors: Collection[str] = ()) -> None:
    """Duellists who cannot cover the duel stake give up their place; the next ones sit
    (not `bettors`, who have side bets on the coup)."""
    state.duel = [p for p in state.duel if can_duel(state, p)]
    for player in state.seated():
        if len(state.duel) >= 2:
            break
        if player not in state.duel and player not in bettors and can_duel(state, player):
            state.duel.append(player)
