"""Replaying a disputed coup from a table's recorded events.

The table's events up to the coup's first card are folded as recorded (seats, bank, stakes:
the inputs nobody disputes here). From there the coup is played again on that `TableState`
with the domain's own rules, taking from the record only what people chose (each hand's
decision to draw or stand) and recomputing everything else:

- each card from the shoe's order (`domain.shoe`), recomputed from the taille's seed:
  revealed in a `ShoeSeedRevealed` event, or else unsealed from the vault for the auditor
  (a physical shoe has no seed: its cards are taken as recorded, and said so);
- the naturals shown, the outcomes and points at settlement, each payout in pay order, the
  commission, and the bank after the coup.

Every disagreement is a `Discrepancy` (expected vs recorded); the replay goes on with the
expected value, so one altered card does not hide an altered payout after it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from domain.cards import Card
from domain.dispute_aggregate import Discrepancy, Verdict
from domain.errors import DomainError
from domain.payouts import Payout
from domain.shoe import shoe_order
from domain.table import TableState

Unseal = Callable[[str], bytes | None]
"""The vault's answer for a shoe's commitment: its seed, or None if it cannot be had."""

_DECISIONS = {"ThirdCardAsked": True, "HandStood": False}
_CARDS = ("CardDealt", "ThirdCardDrawn")
_DERIVED = ("StakeCovered", "StakeReturned")  # recorded at the close of betting, as folded


class Replay(NamedTuple):
    verdict: Verdict
    discrepancies: list[Discrepancy]
    notes: list[str]


def replay_coup(events: Sequence[Any], coup: int, unseal: Unseal) -> Replay:
    """The verdict on coup `coup` of the table whose events (in order) are `events`."""
    kinds = [type(e).__name__ for e in events]
    first = next((i for i, e in enumerate(events)
                  if kinds[i] in _CARDS and e.coup == coup), None)
    last = next((i for i, e in enumerate(events)
                 if kinds[i] == "CoupClosed" and e.coup == coup), None)
    if first is None or last is None:
        missing = "no card" if first is None else "no close"
        return Replay(Verdict.UNVERIFIABLE, [], [f"{missing} of coup {coup} is recorded at this "
                                                 "table: it was not played, or not finished"])
    table: Any = None
    try:
        for e in events[:first]:
            table = e.mutate(table)
    except DomainError as error:
        return Replay(Verdict.UNVERIFIABLE, [],
                      [f"the events before coup {coup} do not replay: {error.message}"])
    run = _CoupRun(table.state, events, unseal)
    try:
        for e in events[first:last + 1]:
            run.apply(e)
    except DomainError as error:
        run.notes.append(f"the replay stopped: {error.message}")
        return Replay(Verdict.DISCREPANCIES if run.found else Verdict.UNVERIFIABLE,
                      run.found, run.notes)
    return Replay(Verdict.DISCREPANCIES if run.found else Verdict.CONSISTENT,
                  run.found, run.notes)


class _CoupRun:
    """One coup played again on `state`, comparing each recorded event with the rules."""

    def __init__(self, state: TableState, events: Sequence[Any], unseal: Unseal) -> None:
        self.state = state
        self.found: list[Discrepancy] = []
        self.notes: list[str] = []
        self.order = self._shoe_order(events, unseal)
        self.paid = 0

    def _shoe_order(self, events: Sequence[Any], unseal: Unseal) -> list[Card] | None:
        shoe = self.state.shoe
        assert shoe is not None
        if shoe.physical:
            self.notes.append("physical shoe: the cards are taken as recorded")
            return None
        taille = self.state.taille
        revealed = next((e.seed for e in events if type(e).__name__ == "ShoeSeedRevealed"
                         and e.taille == taille), None)
        seed = bytes.fromhex(revealed) if revealed is not None else unseal(shoe.commitment)
        if seed is None:
            self.notes.append(f"the seed of taille {taille} is neither revealed nor in the "
                              "vault: the cards are taken as recorded")
            return None
        self.notes.append(f"cards recomputed from the seed of taille {taille} "
                          f"({'revealed' if revealed is not None else 'from the vault'})")
        try:
            return shoe_order(shoe.public(), seed)
        except DomainError as error:
            self._differ("seed", f"taille {taille}", f"a seed of commitment {shoe.commitment}",
                         f"{seed.hex()} ({error.message})")
            return None

    def _differ(self, what: str, where: str, expected: object, recorded: object) -> None:
        self.found.append(Discrepancy(what=what, where=where, expected=str(expected),
                                      recorded=str(recorded)))

    def apply(self, e: Any) -> None:
        kind = type(e).__name__
        state = self.state
        if kind in _CARDS:
            self._card(e)
        elif kind == "NaturalShown":
            shown = state.show_naturals()
            if sorted(shown) != sorted(e.sides):
                self._differ("naturals", f"coup {e.coup}", _sides(shown), _sides(e.sides))
        elif kind in _DECISIONS:
            state.decide(e.actor, e.side, draw=_DECISIONS[kind])
        elif kind == "CardOffered":
            state.offer_card(e.actor)
        elif kind == "BankerShowedDown":
            state.show_down(e.actor)
        elif kind == "CoupSettled":
            self._settle(e)
        elif kind == "PayoutMade":
            self._payout(e)
        elif kind == "CommissionTaken":
            assert state.settlement is not None
            if e.amount != state.settlement.commission:
                self._differ("commission", f"coup {e.coup}", state.settlement.commission,
                             e.amount)
        elif kind == "CoupClosed":
            self._close(e)
        elif kind not in _DERIVED:
            self.notes.append(f"{kind} (version {e.originator_version}) is not part of the "
                              "coup's replay")

    def _card(self, e: Any) -> None:
        shoe = self.state.shoe
        assert shoe is not None
        position = shoe.position
        card: Card = e.card
        if position != e.position:
            self._differ("shoe position", f"version {e.originator_version}", position,
                         e.position)
        if self.order is not None:
            expected = self.order[position]
            if expected != card:
                self._differ("card", f"position {position} ({e.side})", expected, card)
            card = expected
        side = self.state.deal(card)
        if side != e.side:
            self._differ("card's hand", f"position {position}", side, e.side)

    def _settle(self, e: Any) -> None:
        outcomes = self.state.settle()
        points = self.state.points()
        for side in sorted(set(outcomes) | set(e.outcomes)):
            if outcomes.get(side) != e.outcomes.get(side):
                self._differ("outcome", str(side), outcomes.get(side), e.outcomes.get(side))
        for side in sorted(set(points) | set(e.points)):
            if points.get(side) != e.points.get(side):
                self._differ("point", str(side), points.get(side), e.points.get(side))

    def _payout(self, e: Any) -> None:
        settlement = self.state.settlement
        assert settlement is not None
        owed = settlement.payouts
        expected = owed[self.paid] if self.paid < len(owed) else None
        recorded: Payout = e.payout
        if expected != recorded:
            where = f"{recorded.player} (payout {self.paid + 1} of coup {e.coup})"
            self._differ("payout", where, _payout(expected), _payout(recorded))
        self.paid += 1

    def _close(self, e: Any) -> None:
        settlement = self.state.settlement
        assert settlement is not None
        for missing in settlement.payouts[self.paid:]:
            self._differ("payout", f"{missing.player} (coup {e.coup})", _payout(missing),
                         "none")
        bank = self.state.bank + settlement.banker_net
        if (self.state.banker, bank) != (e.banker, e.bank):
            self._differ("bank", f"after coup {e.coup}", f"{self.state.banker}: {bank}",
                         f"{e.banker}: {e.bank}")


def _sides(sides: Sequence[Any]) -> str:
    return ", ".join(sorted(str(s) for s in sides)) or "none"


def _payout(payout: Payout | None) -> str:
    if payout is None:
        return "none"
    text = f"{payout.player} {payout.net:+d} on {payout.staked}"
    return f"{text}, commission {payout.commission}" if payout.commission else text
