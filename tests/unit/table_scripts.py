"""What the table state's tests share (`test_table_state.py`, `test_table_rotation.py`): the
variants, the sides, scripted cards for a known outcome, a physical chemin de fer table with
its bank awarded, and the steps a table must refuse at any moment (`refusals`), each checked
to leave the table exactly as it was (`check_refused`, on the state's `snapshot`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec
import pytest

from domain.errors import DomainError, OutOfTurn, RuleViolation
from domain.game.cards import Card
from domain.game.coup import Side, Step, tableaux_of
from domain.game.payouts import Payout, Spot
from domain.game.settings import Variant
from domain.game.shoe import ALGORITHM
from domain.table.state import CROUPIER, Phase, TableState
from tests.unit.play import physical_table

VARIANTS = list(Variant)
P, R, L = Side.PUNTER, Side.RIGHT, Side.LEFT

# A coup's four cards (punter, banker, punter, banker) for a known outcome, by naturals.
PUNTERS_WIN = ["9s", "2h", "Ts", "3h"]  # punter 9 against 5
BANKER_WINS = ["2s", "9h", "3s", "Th"]  # banker 9 against 5
TIE = ["9s", "9h", "Ts", "Th"]  # 9 against 9


def snapshot(state: TableState) -> object:
    return msgspec.to_builtins(state)



def chemin_de_fer(**overrides: Any) -> TableState:
    state = physical_table("chemin-de-fer", {f"p{i}": 1000 for i in range(4)}, **overrides)
    state.award_bank("p0", 100)
    return state


Refusal = tuple[str, Callable[[], object], type[DomainError], str]


def refusals(state: TableState) -> list[Refusal]:
    """Steps the table must refuse now, with the error and rule key each must raise."""
    phase, found = state.phase, list[Refusal]()
    punters = [p for p in state.players() if p != state.banker and p not in state.duel]
    someone = (punters or state.players())[0]

    def stake(player: str, amount: int) -> Callable[[], object]:
        if state.house_banks:
            return lambda: state.place_bet(player, Spot.PUNTER, amount)
        return lambda: state.place_stake(player, tableaux_of(state.variant)[0], amount)

    if phase is Phase.BETTING and state.tie_replay:
        # 001: "on refait le coup en donnant de nouvelles cartes": nothing is added to the
        # stakes of a tied coup played again
        for player in punters[:2]:
            found.append(("a stake on a tie's replay", stake(player, 1), RuleViolation,
                          "tie-replay"))
            found.append(("a banco on a tie's replay", partial(state.call_banco, player),
                          RuleViolation, "tie-replay"))
    elif phase is Phase.BETTING:
        for player in punters[:2]:
            free = state.seat_of(player).chips - state.committed(player)
            found.append(("a stake beyond the chips", stake(player, free + 1), RuleViolation,
                          "chips-short"))
    if phase is Phase.BETTING:
        if state.banks_with_player:
            for player in punters if not state.tie_replay else []:
                free = state.seat_of(player).chips - state.committed(player)
                own = sum(s.amount for s in state.stakes if s.player == player)
                third = state.variant is Variant.DEUX_TABLEAUX and state.bancos_in_a_row >= 2
                if state.bank > free + own and player not in state.banco_calls and not third:
                    found.append(("a banco beyond the chips",
                                  partial(state.call_banco, player),
                                  RuleViolation, "chips-short"))
            if punters:
                found.append(("a punter retiring the bank",
                              lambda: state.retire_bank(punters[0]), OutOfTurn,
                              "not-your-turn"))
    else:
        found.append(("a stake out of turn", stake(someone, 1), OutOfTurn, "out-of-turn"))
        found.append(("closing betting out of turn", state.close_betting, OutOfTurn,
                      "out-of-turn"))
    if phase is Phase.PLAYING:
        found += _coup_refusals(state)
    else:
        found.append(("a card out of turn", lambda: state.deal(Card("Kh")), OutOfTurn,
                      "out-of-turn"))
    if phase is not Phase.SETTLED:
        found.append(("a payout out of turn", lambda: state.pay(Payout(someone, 1, 1)),
                      OutOfTurn, "out-of-turn"))
        found.append(("closing the coup out of turn", state.close_coup, OutOfTurn,
                      "out-of-turn"))
    if phase is not Phase.NO_SHOE:
        found.append(("a shuffle out of turn", lambda: state.shuffle(
            decks=state.settings.decks, algorithm=ALGORITHM, commitment="0" * 64,
            physical=False), OutOfTurn, "out-of-turn"))
    if phase is not Phase.TAILLE_OVER:
        found.append(("revealing out of turn", state.reveal, OutOfTurn, "out-of-turn"))
    if phase is not Phase.NO_BANK:
        found.append(("a bank out of turn", lambda: state.award_bank(someone, 1), OutOfTurn,
                      "out-of-turn"))
    elif state.bank_offered_to is not None:
        offered = state.bank_offered_to
        others = [p for p in state.players() if p != offered]
        found.append(("declining a shoe offered to another",
                      lambda: state.decline_bank(others[0]), OutOfTurn, "not-your-turn"))
        if state.bank_required > state.settings.min_stake:
            found.append(("a passed hand for less than the bank taken",
                          lambda: state.award_bank(offered, state.bank_required - 1),
                          RuleViolation, "bank-too-small"))
    return found


def _coup_refusals(state: TableState) -> list[Refusal]:
    coup = state.coup
    assert coup is not None
    found = list[Refusal]()
    legal = coup.legal_steps()
    kinds = {s.step for s in legal}
    if Step.DEAL not in kinds:
        found.append(("a card out of turn", lambda: state.deal(Card("Kh")), OutOfTurn,
                      "out-of-turn"))
    if Step.SHOW_NATURALS not in kinds:
        found.append(("naturals out of turn", state.show_naturals, OutOfTurn, "out-of-turn"))
    if Step.SETTLE not in kinds:
        found.append(("settling out of turn", state.settle, OutOfTurn, "out-of-turn"))
    if coup.awaits_offer():
        # 002: "Les pontes ne peuvent tirer une carte que sur l'offre du banquier"
        found += [(f"a draw for the {s} before the banker's offer",
                   partial(state.decide, CROUPIER, s, True), RuleViolation, "no-offer")
                  for s in coup.tableaux]
        wrong = [p for p in state.players() if p != state.banker]
        found.append(("an offer by another than the banker",
                      partial(state.offer_card, wrong[0]), OutOfTurn, "not-your-turn"))
        return found
    side = coup.to_act()
    waiting = [s for s in coup.deal_order if s is not side]
    found += [(f"a decision for the {s} out of turn",
               partial(state.decide, CROUPIER, s, True),
               OutOfTurn, "out-of-turn") for s in waiting]
    if side is None:
        return found
    holder = state.hand_holder(side)
    if len(legal) == 1:
        draw = legal[0].step is Step.STAND  # the move the table forbids
        who = "banker" if side is Side.BANKER else "punter"
        found.append(("a move the drawing table forbids",
                      lambda: state.decide(holder or CROUPIER, side, draw), RuleViolation,
                      f"{who}-{'draw' if draw else 'stand'}-forbidden"))
    wrong = [p for p in state.players() if p != holder]
    allowed = legal[0].step is Step.DRAW
    found.append(("a decision by the wrong player",
                  lambda: state.decide(wrong[0], side, allowed), OutOfTurn, "not-your-turn"))
    return found


def check_refused(state: TableState, refusal: Refusal) -> None:
    name, attempt, error, rule = refusal
    before = snapshot(state)
    with pytest.raises(error) as refused:
        attempt()
    assert refused.value.rule == rule, name
    assert snapshot(state) == before, f"{name} changed the table"
