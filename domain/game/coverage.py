"""Coverage: which stakes the bank takes on, in which order, and which go back unengaged.

Chemin de fer (000, 001): a banco covers the whole bank alone and has priority, the banco
suivi first, then seat order from the banker's right, standing punters last. Otherwise the
stakes are covered in that order until the bank is covered; the rest is not engaged. "Un
joueur debout peut faire banco tout seul mais il n'est pas prioritaire" (001): a standing
punter's banco comes after the seated players, their bancos and their stakes alike. It holds
only when no seated punter stakes; otherwise the seated stakes are covered first and the
standing caller covers what they leave, before the other standing punters.

À deux tableaux (000): a banco (where allowed) covers the whole bank on both tableaux. If
the bank covers every stake, every stake is engaged; otherwise the bank is split in two
halves, one per tableau (the odd chip to the right), and each tableau's stakes are covered
in its own order (the caller gives it: the hand holder, the seated punters of that side
from the closest outward, the other side's seated punters, standing punters). "On commence
toujours par couvrir les pontes à droite et à gauche, en commençant par celui qui est assis
le plus près du banquier": the engaged stakes are paid right and left alternately, first the
punters seated on their tableau's side, then those seated on the other side, then the
standing punters, who "sont toujours payés les derniers".

`CheminDeFerCoverage` and `TwoTableauxCoverage` are the variants' coverage rules: each reads
the table (`CoveredTable`) for the orders, the banco and the hand holders, and covers its bank.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from itertools import zip_longest
from typing import Protocol

import msgspec

from domain.game.seat_view import SeatView
from domain.game.settings import HandHolder, TableSettings
from domain.game.sides import Side


class Stake(msgspec.Struct, frozen=True):
    """Chips a punter puts against the bank on a tableau."""

    player: str
    tableau: Side
    amount: int


class Coverage(msgspec.Struct, frozen=True):
    """Engaged stakes in pay order, the stakes returned, and who holds each tableau's hand."""

    engaged: tuple[Stake, ...]
    returned: tuple[Stake, ...]
    banco: str | None
    hand_holders: dict[Side, str]

    def engaged_on(self, tableau: Side) -> int:
        return sum(s.amount for s in self.engaged if s.tableau is tableau)


class CoveredTable(Protocol):
    """What the coverage rules read of a table (and the tableaux' hand holders they seat)."""

    settings: TableSettings
    banker: str | None
    bank: int
    stakes: list[Stake]
    banco_calls: list[str]
    banco_suivi: str | None
    hand_holders: dict[Side, str]

    @property
    def seats(self) -> Sequence[SeatView]: ...

    def punter_order(self) -> list[str]: ...


def banco_winner(callers: Sequence[str], order: Sequence[str], suivi: str | None,
                 standing: Collection[str] = ()) -> str | None:
    """Of the punters calling banco, the one with priority: the banco suivi, else seat order;
    a standing caller, even the banco suivi, only when no seated punter calls."""
    seated = [p for p in callers if p not in standing]
    callers = seated or list(callers)
    if not callers:
        return None
    if suivi is not None and suivi in callers:
        return suivi
    return min(callers, key=order.index)


def _cover_in_order(budget: int, stakes: Sequence[Stake]) -> tuple[list[Stake], list[Stake]]:
    engaged: list[Stake] = []
    returned: list[Stake] = []
    for stake in stakes:
        taken = min(stake.amount, budget)
        budget -= taken
        if taken:
            engaged.append(msgspec.structs.replace(stake, amount=taken))
        if taken < stake.amount:
            returned.append(msgspec.structs.replace(stake, amount=stake.amount - taken))
    return engaged, returned


def chemin_de_fer(
    bank: int,
    stakes: Sequence[Stake],
    order: Sequence[str],
    banco: str | None,
    hand_holder: HandHolder,
    standing: Collection[str] = (),
) -> Coverage:
    """Cover a chemin-de-fer bank; `order` is the punters' priority order, standing last."""
    seated_stakes = [s for s in stakes if s.player not in standing]
    if banco is not None and (banco not in standing or not seated_stakes):
        return Coverage(
            engaged=(Stake(banco, Side.PUNTER, bank),),
            returned=tuple(stakes),
            banco=banco,
            hand_holders={Side.PUNTER: banco},
        )
    in_order = sorted(stakes, key=lambda s: order.index(s.player))
    own: list[Stake] = []
    if banco is not None:  # a standing banco yields to the seated stakes, then covers the rest
        own = [s for s in in_order if s.player == banco]
        in_order = [*(s for s in in_order if s.player not in standing),
                    Stake(banco, Side.PUNTER, bank),
                    *(s for s in in_order if s.player in standing and s.player != banco)]
    engaged, returned = _cover_in_order(bank, in_order)
    returned = [s for s in returned if s.player != banco] + own  # an offer is not a stake
    holders: dict[Side, str] = {}
    if engaged:
        if hand_holder is HandHolder.LARGEST_STAKE:
            totals: dict[str, int] = {}
            for stake in engaged:  # a punter who staked twice staked the sum
                totals[stake.player] = totals.get(stake.player, 0) + stake.amount
            holder = max(totals, key=lambda p: (totals[p], -order.index(p)))
        else:
            holder = engaged[0].player
        holders[Side.PUNTER] = holder
    return Coverage(tuple(engaged), tuple(returned), None, holders)


def tableau_halves(bank: int) -> dict[Side, int]:
    """À deux tableaux, the bank each tableau's stakes are covered by when the stakes exceed
    it: half each, the odd chip to the right."""
    return {Side.RIGHT: bank - bank // 2, Side.LEFT: bank // 2}


def deux_tableaux(
    bank: int,
    stakes: Sequence[Stake],
    orders: Mapping[Side, Sequence[str]],
    banco: str | None,
    hand_holders: Mapping[Side, str],
    sides: Mapping[str, Side | None] | None = None,
) -> Coverage:
    """Cover an à deux tableaux bank; `orders` gives each tableau's coverage order, `sides`
    the side each punter sits on (None or absent: standing)."""
    halves = tableau_halves(bank)
    if banco is not None:
        return Coverage(
            engaged=(Stake(banco, Side.RIGHT, halves[Side.RIGHT]),
                     Stake(banco, Side.LEFT, halves[Side.LEFT])),
            returned=tuple(stakes),
            banco=banco,
            hand_holders={Side.RIGHT: banco, Side.LEFT: banco},
        )
    covers_all = sum(s.amount for s in stakes) <= bank
    engaged: dict[Side, list[Stake]] = {}
    returned: list[Stake] = []
    for tableau, half in halves.items():
        order = orders[tableau]
        mine = sorted((s for s in stakes if s.tableau is tableau),
                      key=lambda s: order.index(s.player))
        engaged[tableau], back = _cover_in_order(bank if covers_all else half, mine)
        returned += back
    seated_on = sides or {}

    def tier(stake: Stake) -> int:
        side = seated_on.get(stake.player)
        return 2 if side is None else int(side is not stake.tableau)

    in_pay_order: list[Stake] = []
    for rank in range(3):
        right, left = ([s for s in engaged[t] if tier(s) == rank] for t in (Side.RIGHT, Side.LEFT))
        for pair in zip_longest(right, left):
            in_pay_order += [s for s in pair if s is not None]
    return Coverage(tuple(in_pay_order), tuple(returned), None, dict(hand_holders))


def _banco(state: CoveredTable) -> tuple[list[str], set[str], str | None]:
    """The punters' priority order, the standing punters, and the banco that has priority."""
    order = state.punter_order()
    standing = {s.player for s in state.seats if s.standing}
    return order, standing, banco_winner(state.banco_calls, order, state.banco_suivi, standing)


class CheminDeFerCoverage:
    """One tableau; the punters' hand goes by the table's `hand_holder` setting."""

    def cover(self, state: CoveredTable) -> Coverage:
        order, standing, winner = _banco(state)
        return chemin_de_fer(state.bank, state.stakes, order, winner,
                             state.settings.hand_holder, standing)


class TwoTableauxCoverage:
    """Two tableaux, each covered in its own order; each hand held where it was left."""

    def cover(self, state: CoveredTable) -> Coverage:
        _, _, winner = _banco(state)
        orders = {t: _tableau_order(state, t) for t in (Side.RIGHT, Side.LEFT)}
        holders = {t: h for t in orders if (h := _holder_with_stake(state, t, orders[t]))}
        sides = {s.player: None if s.standing else s.side for s in state.seats}
        return deux_tableaux(state.bank, state.stakes, orders, winner, holders, sides)


def side_order(state: CoveredTable, side: Side) -> list[str]:
    """A side's seated punters from the hand holder outward, the closest ones after."""
    mine = [s.player for s in state.seats if s.side is side and not s.standing
            and s.player != state.banker]
    holder = state.hand_holders.get(side)
    if holder in mine:
        i = mine.index(holder)
        mine = mine[i:] + mine[:i]
    return mine


def seat_hand_holders(state: CoveredTable) -> None:
    """Each tableau's hand to the first punter of its side, unless its holder still sits there."""
    for side in (Side.RIGHT, Side.LEFT):
        if state.hand_holders.get(side) not in side_order(state, side):
            order = side_order(state, side)
            if order:
                state.hand_holders[side] = order[0]


def _tableau_order(state: CoveredTable, tableau: Side) -> list[str]:
    other = Side.LEFT if tableau is Side.RIGHT else Side.RIGHT
    standing = [s.player for s in state.seats if s.standing]
    return side_order(state, tableau) + side_order(state, other) + standing


def _holder_with_stake(state: CoveredTable, tableau: Side, order: list[str]) -> str | None:
    staking = {s.player for s in state.stakes if s.tableau is tableau}
    return next((p for p in order if p in staking), None)
