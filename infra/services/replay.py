"""Replaying a disputed coup from a table's recorded events.

The table's events up to the coup's first card are folded as recorded (seats, bank, stakes:
the inputs nobody disputes here). From there the coup is played again through the same path
as any command, `Table.execute`: each recorded command (the events one command id recorded)
is turned back into the command that asked for it, taking from the record only what people
chose (each hand's decision to draw or stand) and letting the aggregate compute everything
else; what it records is compared with what was recorded:

- each card from the shoe's order (`domain.game.shoe`), recomputed from the taille's seed:
  revealed in a `ShoeSeedRevealed` event, or else unsealed from the vault for the auditor
  (a physical shoe has no seed: its cards are taken as recorded, and said so);
- the naturals shown, the outcomes and points at settlement, each payout in pay order, the
  commission, and the bank after the coup.

Every disagreement is a `Discrepancy` (expected vs recorded); the replay goes on with the
expected value, so one altered card does not hide an altered payout after it. Where payouts
differ, `corrections` gives each player's chips owed (the expected nets less the recorded
ones): what a correction of the coup would move.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from itertools import groupby
from typing import Any, NamedTuple

from domain.dispute.verdicts import Discrepancy, Verdict
from domain.errors import DomainError, RuleViolation
from domain.game.cards import Card
from domain.game.payouts import Payout
from domain.game.shoe import Shoe, shoe_order
from domain.table import commands as c
from domain.table.aggregate import Table

Unseal = Callable[[str], bytes | None]
"""The vault's answer for a shoe's commitment: its seed, or None if it cannot be had."""

_CARDS = ("CardDealt", "ThirdCardDrawn")
_PAYING = ("PayoutMade", "CommissionTaken", "CoupClosed")


class Replay(NamedTuple):
    verdict: Verdict
    discrepancies: list[Discrepancy]
    notes: list[str]
    corrections: dict[str, int] = {}  # noqa: RUF012 (a NamedTuple's default, never mutated)


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
    run = _CoupRun(table, events, events[first:last + 1], unseal)
    try:
        for _, recorded in groupby(events[first:last + 1], key=lambda e: e.command_id):
            run.replay(list(recorded))
    except DomainError as error:
        run.notes.append(f"the replay stopped: {error.message}")
        return Replay(Verdict.DISCREPANCIES if run.found else Verdict.UNVERIFIABLE,
                      run.found, run.notes)
    return Replay(Verdict.DISCREPANCIES if run.found else Verdict.CONSISTENT,
                  run.found, run.notes, {p: d for p, d in run.corrections.items() if d})


class _ReplayCards:
    """The `CardSource` of a replay: the shoe's order recomputed from its seed, or, without
    one, the cards as recorded."""

    def __init__(self, order: list[Card] | None, recorded: dict[int, Card]) -> None:
        self.order = order
        self.recorded = recorded

    def seal_seed(self, table_id: uuid.UUID, taille: int) -> str:
        raise RuleViolation("a replay shuffles no shoe", rule="replay-shuffle")

    def card_at(self, shoe: Shoe, position: int) -> Card:
        if self.order is not None:
            return self.order[position]
        return self.recorded[position]

    def seed_of(self, commitment: str) -> bytes:
        raise RuleViolation("a replay reveals no seed", rule="replay-reveal")


class _CoupRun:
    """One coup played again on `table`, comparing what each command records with the
    record."""

    def __init__(self, table: Table, events: Sequence[Any], coup_events: Sequence[Any],
                 unseal: Unseal) -> None:
        self.table = table
        self.found: list[Discrepancy] = []
        self.notes: list[str] = []
        self.corrections: dict[str, int] = {}
        recorded = {e.position: e.card for e in coup_events if type(e).__name__ in _CARDS}
        self.cards = _ReplayCards(self._shoe_order(events, unseal), recorded)

    def _shoe_order(self, events: Sequence[Any], unseal: Unseal) -> list[Card] | None:
        state = self.table.state
        shoe = state.shoe
        assert shoe is not None
        if shoe.physical:
            self.notes.append("physical shoe: the cards are taken as recorded")
            return None
        taille = state.taille
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

    def replay(self, recorded: list[Any]) -> None:
        """Execute again the command that recorded `recorded`, and compare."""
        head = recorded[0]
        command = self._command_of(head)
        if command is None:
            self.notes.append(f"{type(head).__name__} (version {head.originator_version}) is "
                              "not part of the coup's replay")
            return
        self.table.execute(command, self.cards)
        produced: list[Any] = list(self.table.collect_events())
        kind = type(head).__name__
        if kind in _CARDS:
            self._card(produced[0], head)
        elif kind == "NaturalShown":
            if sorted(produced[0].sides) != sorted(head.sides):
                self._differ("naturals", f"coup {head.coup}", _sides(produced[0].sides),
                             _sides(head.sides))
        elif kind == "CoupSettled":
            self._settle(produced[0], head)
        elif kind in _PAYING:
            self._paying(produced, recorded)

    def _command_of(self, e: Any) -> c.TableCommand | None:
        """The command that recorded `e` (as its first event), as the record says it."""
        ids = {"command_id": e.command_id, "actor": e.actor}
        match type(e).__name__:
            case "CardDealt" | "ThirdCardDrawn":
                assert self.table.state.shoe is not None
                given = e.card if self.table.state.shoe.physical else None
                return c.DealCard(card=given, **ids)
            case "NaturalShown":
                return c.ShowNaturals(**ids)
            case "ThirdCardAsked" | "HandStood":
                return c.Decide(side=e.side, draw=type(e).__name__ == "ThirdCardAsked", **ids)
            case "CardOffered":
                return c.OfferCard(**ids)
            case "BankerShowedDown":
                return c.ShowDown(**ids)
            case "CoupSettled":
                return c.SettleCoup(**ids)
            case "PayoutMade" | "CommissionTaken" | "CoupClosed":
                return c.PayCoup(**ids)
        return None

    def _card(self, expected: Any, e: Any) -> None:
        if expected.position != e.position:
            self._differ("shoe position", f"version {e.originator_version}", expected.position,
                         e.position)
        if expected.card != e.card:
            self._differ("card", f"position {expected.position} ({e.side})", expected.card,
                         e.card)
        if expected.side != e.side:
            self._differ("card's hand", f"position {expected.position}", expected.side, e.side)

    def _settle(self, expected: Any, e: Any) -> None:
        for side in sorted(set(expected.outcomes) | set(e.outcomes)):
            if expected.outcomes.get(side) != e.outcomes.get(side):
                self._differ("outcome", str(side), expected.outcomes.get(side),
                             e.outcomes.get(side))
        for side in sorted(set(expected.points) | set(e.points)):
            if expected.points.get(side) != e.points.get(side):
                self._differ("point", str(side), expected.points.get(side), e.points.get(side))

    def _paying(self, produced: list[Any], recorded: list[Any]) -> None:
        owed = [e.payout for e in produced if type(e).__name__ == "PayoutMade"]
        paid = [e.payout for e in recorded if type(e).__name__ == "PayoutMade"]
        coup = produced[-1].coup
        for n, recorded_payout in enumerate(paid):
            expected = owed[n] if n < len(owed) else None
            if expected != recorded_payout:
                where = f"{recorded_payout.player} (payout {n + 1} of coup {coup})"
                self._differ("payout", where, _payout(expected), _payout(recorded_payout))
        for missing in owed[len(paid):]:
            self._differ("payout", f"{missing.player} (coup {coup})", _payout(missing), "none")
        for payout, sign in [*((p, 1) for p in owed), *((p, -1) for p in paid)]:
            self.corrections[payout.player] = (self.corrections.get(payout.player, 0)
                                               + sign * payout.net)
        commission = _amount(produced)
        if commission != _amount(recorded):
            self._differ("commission", f"coup {coup}", commission, _amount(recorded))
        closed, was = produced[-1], _closed(recorded)
        if was is not None and (closed.banker, closed.bank) != (was.banker, was.bank):
            self._differ("bank", f"after coup {coup}", f"{closed.banker}: {closed.bank}",
                         f"{was.banker}: {was.bank}")
            if closed.banker is not None and closed.banker == was.banker:
                self.corrections[closed.banker] = (self.corrections.get(closed.banker, 0)
                                                   + closed.bank - was.bank)


def _amount(events: list[Any]) -> int:
    return sum(e.amount for e in events if type(e).__name__ == "CommissionTaken")


def _closed(events: list[Any]) -> Any:
    return next((e for e in events if type(e).__name__ == "CoupClosed"), None)


def _sides(sides: Sequence[Any]) -> str:
    return ", ".join(sorted(str(s) for s in sides)) or "none"


def _payout(payout: Payout | None) -> str:
    if payout is None:
        return "none"
    text = f"{payout.player} {payout.net:+d} on {payout.staked}"
    return f"{text}, commission {payout.commission}" if payout.commission else text
