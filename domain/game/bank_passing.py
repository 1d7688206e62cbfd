"""How the bank passes: a variant's rotation of the bank (or of the duel) between coups.

- Punto banco: the house keeps the bank.
- Chemin de fer (000, 001): the bank stays with its banker while he wins; when the punters win
  or the bank is empty, the shoe is offered round the table from the banker's right (to the
  player a passed hand returns to, first). A banker who retires passes the shoe the same way,
  and whoever takes it puts up exactly the sum he withdrew.
- À deux tableaux (000): the bank stays until it is empty or the taille ends; each tableau's
  hand passes to the next punter of that side when it loses to the bank.
- The family game (003): the loser of the duel gives up his place to the next player waiting.
"""

from __future__ import annotations

from typing import Protocol

from domain.game import coverage
from domain.game.banking import DuelTable, can_duel, fill_duel
from domain.game.sides import Outcome, Side


class PassingTable(coverage.CoveredTable, DuelTable, Protocol):
    """What the rules of the bank's passing read and change of a table."""

    bank_offered_to: str | None
    bank_required: int
    bank_declined_by: list[str]
    passed_hand_returns_to: str | None
    bancos_in_a_row: int

    def rotation_after(self, player: str) -> list[str]: ...

    def bank_back_to_banker(self) -> None: ...


class HouseKeepsBank:
    """The bank never passes."""

    shoe_passes = False  # the shoe is offered round when the bank is lost or retired

    def bank_awarded(self, state: PassingTable) -> None:
        """A player has just been given the bank."""

    def bank_retired(self, state: PassingTable, retiring: str, amount: int) -> None:
        """The banker `retiring` has taken back his bank of `amount`."""

    def coup_closed(self, state: PassingTable, outcomes: dict[Side, Outcome]) -> None:
        """The coup is paid and the bank holds its result: pass what passes."""

    def taille_ended(self, state: PassingTable) -> None:
        """The taille is over."""


class ShoePasses(HouseKeepsBank):
    """Chemin de fer: the shoe passes when the bank is lost or retired."""

    shoe_passes = True

    def bank_retired(self, state: PassingTable, retiring: str, amount: int) -> None:
        nxt = state.rotation_after(retiring)
        state.passed_hand_returns_to = nxt[0] if nxt else None
        state.bank_required = amount
        state.bank_offered_to = nxt[0] if nxt else None
        state.bank_declined_by = []

    def coup_closed(self, state: PassingTable, outcomes: dict[Side, Outcome]) -> None:
        assert state.covered is not None and state.banker is not None
        outcome = outcomes[Side.PUNTER]
        if outcome is Outcome.TIE:
            return  # the coup is played again: the same bank, banco and banco suivi
        banco = state.covered.banco
        state.banco_suivi = banco if banco and outcome is Outcome.BANKER else None
        if outcome is Outcome.PUNTER or state.bank <= 0:
            losing = state.banker
            state.bank_back_to_banker()
            returns_to = state.passed_hand_returns_to
            state.passed_hand_returns_to = None
            following = [p for p in state.rotation_after(losing) if p != losing]
            if returns_to in following:
                state.bank_offered_to = returns_to
            else:
                state.bank_offered_to = following[0] if following else None
            state.bank_declined_by = []


class HandsPass(HouseKeepsBank):
    """À deux tableaux: each tableau's hand passes on a loss; the bank lasts the taille."""

    def bank_awarded(self, state: PassingTable) -> None:
        coverage.seat_hand_holders(state)

    def coup_closed(self, state: PassingTable, outcomes: dict[Side, Outcome]) -> None:
        covered = state.covered
        assert covered is not None
        # 000: "Après le second banco, chaque tableau reprend son droit, et il n'est plus
        # permis à un seul joueur de faire le banco": no third banco on this bank, ordinary
        # coups between or not; a new bank restores the right (`award_bank`).
        state.bancos_in_a_row += 1 if covered.banco else 0
        state.banco_suivi = covered.banco if Outcome.BANKER in outcomes.values() else None
        for side, outcome in outcomes.items():
            holder = covered.hand_holders.get(side)
            if outcome is not Outcome.BANKER or holder is None or covered.banco:
                continue
            state.hand_holders[side] = holder
            order = coverage.side_order(state, side)
            if holder in order and len(order) > 1:
                state.hand_holders[side] = order[1]
        if state.bank <= 0:
            state.bank_back_to_banker()

    def taille_ended(self, state: PassingTable) -> None:
        state.bank_back_to_banker()


class DuelRotates(HouseKeepsBank):
    """The family game: the duel's loser makes way for the next player who can duel."""

    def coup_closed(self, state: PassingTable, outcomes: dict[Side, Outcome]) -> None:
        outcome = outcomes[Side.PUNTER]
        if outcome is Outcome.TIE:
            return
        loser = state.duel[1] if outcome is Outcome.BANKER else state.duel[0]
        waiting = [p for p in state.rotation_after(loser)
                   if p not in state.duel and can_duel(state, p)]
        if waiting:
            state.duel[state.duel.index(loser)] = waiting[0]
        fill_duel(state)
