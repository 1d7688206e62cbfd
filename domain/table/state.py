"""A table between and during coups: seats, shoe and taille, bank, stakes, the coup, rotation.

The table's own state machine wraps the coup's (`domain.game.coup`). Its steps, for a taille:
shuffle, contribute (each punter may add entropy), cut, burn; then for every coup: the bank
is given (chemin de fer, à deux tableaux), stakes are placed and banco called, betting
closes (coverage), the coup is played, settled and paid. Paying moves the chips, the
bank and the rotation. When the cut card has come out, one more coup is dealt and the
taille ends; an RNG shoe's seed is then revealed.

Every step validates before it changes anything (a step between coups through its own
`verify_<step>`, which changes nothing), so a refused step leaves the table as it was, and
the legal actions are asked of those checks; the Table aggregate records each step as an
event and replays it through these methods.
Actors are player ids, or officials whose ids start with `@` (`@croupier`, `@system`): who
may act for whom is `domain.actors`'.

`TableState` is assembled from one part a concept, each in its module over the shared state
(`domain.table.base`): seating (`domain.table.seats`), the taille (`domain.table.taille`), the bank
between coups (`domain.table.bank_rotation`), stakes and betting (`domain.table.stakes`), the coup
at the table (`domain.table.coup_flow`). Whatever differs between variants, the parts ask the
variant's rule objects (`domain.game.variants`). This module adds the steps the table accepts now.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import msgspec

from domain.actors import CROUPIER
from domain.errors import DomainError
from domain.game.cards import Card
from domain.game.coup import LegalStep, Side, Step
from domain.game.payouts import Spot
from domain.table import betting_order
from domain.table.bank_rotation import BankRotation
from domain.table.base import Phase, Seat, ShoeState
from domain.table.coup_flow import CoupFlow
from domain.table.seats import Seating
from domain.table.stakes import Staking
from domain.table.taille import Taille

__all__ = ["CROUPIER", "Action", "Phase", "Seat", "ShoeState", "TableState"]


class Action(msgspec.Struct, frozen=True):
    """A step the table may take now, and who may take it (`None`: any seated player)."""

    step: str
    actor: str | None
    side: Side | None = None
    forced: bool = False


class TableState(Seating, Taille, BankRotation, Staking, CoupFlow, kw_only=True):
    """A table between and during coups: its state (`TableBase`), its steps (one part a
    concept), and the steps it accepts now."""

    # --- what may happen now --------------------------------------------------------

    def legal_actions(self) -> list[Action]:
        """The steps the table accepts now. Each step's check (`verify_<step>`, which the step
        itself runs before it changes anything) is asked here with the arguments worth
        trying, so the offer cannot drift from the rules. A player's step (`actor` None) is
        offered when it is open to at least one player at the table; the coup's steps are the
        coup's own (`Coup.legal_steps`, which its guards check)."""
        if self.phase is Phase.PLAYING:
            assert self.coup is not None
            return [self._coup_action(s) for s in self.coup.legal_steps()]
        return [action for action, checks in self._checks() if any(map(self._can, checks))]

    def _checks(self) -> list[tuple[Action, list[Callable[[TableState], object]]]]:
        """Every step between coups, who takes it, and the checks that would let it be taken."""
        players, stake, offered = self.players(), self.settings.min_stake, self.bank_offered_to
        to_offered = [offered] if offered is not None else []
        turn = betting_order.bettor(self)
        bank = max(self.settings.min_stake, self.bank_required)
        T = TableState
        return [
            (Action("shuffle", CROUPIER), [partial(T.verify_shuffle, decks=self.settings.decks,
                                                   commitment="0" * 64, physical=False)]),
            (Action("contribute", None), [partial(T.verify_contribute, player=p, entropy="00")
                                          for p in players]),
            (Action("cut", None), [partial(T.verify_cut, player=p, position=1)
                                   for p in players]),
            (Action("burn", CROUPIER, forced=True), [partial(T.verify_burn, card=Card("As"))]),
            (Action("award-bank", CROUPIER), [partial(T.verify_award_bank, player=p, amount=bank)
                                              for p in players]),
            (Action("take-bank", offered), [partial(T.verify_award_bank, player=p, amount=bank)
                                            for p in to_offered]),
            (Action("decline-bank", offered), [partial(T.verify_decline_bank, player=p)
                                               for p in to_offered]),
            (Action("bet", turn), [partial(T.verify_place_bet, player=p, spot=spot, amount=stake)
                                   for p in players for spot in Spot]),
            (Action("pass-bet", turn), [partial(T.verify_pass_bet_turn, player=p)
                                        for p in players]),
            (Action("stake", None), [partial(T.verify_place_stake, player=p, tableau=t,
                                             amount=stake)
                                     for p in players for t in self.rules.tableaux]),
            (Action("banco", None), [partial(T.verify_call_banco, player=p) for p in players]),
            (Action("close-betting", CROUPIER), [T.verify_close_betting]),
            (Action("retire-bank", self.banker), [partial(T.verify_retire_bank, player=p)
                                                  for p in [self.banker] if p is not None]),
            (Action("end-taille", CROUPIER), [T.verify_end_taille]),
            (Action("pay", CROUPIER, forced=True), [T.verify_pay_next]),
            (Action("reveal-seed", CROUPIER, forced=True), [T.verify_reveal]),
        ]

    def _can(self, check: Callable[[TableState], object]) -> bool:
        """`can_<step>`: whether the step's own check passes, on the table itself (a check
        changes nothing)."""
        try:
            check(self)
        except DomainError:
            return False
        return True

    def _coup_action(self, step: LegalStep) -> Action:
        actor = CROUPIER
        if step.step in (Step.DRAW, Step.STAND, Step.OFFER, Step.SHOW_DOWN) and step.side:
            actor = self.hand_holder(step.side) or CROUPIER
        return Action(step.step.value, actor, step.side, step.forced)

