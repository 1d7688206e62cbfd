"""Settlement in chips: who is paid what, the commission, and exact chip conservation.

- House-banked bets (punto banco, the family game's side bets): Player and Banker pay 1:1,
  a Banker win as the table's `banker_win` rule says (`BANKER_WINS`): less the commission,
  or, No-Commission, in full but half (rounded down to whole chips) when the banker's hand
  wins on six; Tie pays `tie_pays` to 1. On a tie, Player and Banker
  bets push in punto banco and are lost in the family game (`push_on_tie`).
- The family game's duel: the winner takes the other's stake; on a tie both keep theirs.
- Against a player's bank (chemin de fer, à deux tableaux): each engaged stake is paid 1:1
  out of the bank when its tableau wins, taken when the banker wins, left on a tie; the
  cagnotte is taken on the banker's winnings of the coup.

The commission box: a commission is exact for every stake, never rounded away. The house
takes it in whole chips when the winning bet (or the winning bank) is paid, rounded up, and
keeps what it took beyond the exact rate in the player's box, in ten-thousandths of a chip
(`BOX_UNITS`): a credit the player's next commissions use first. So after any run of wins a
player has paid exactly `ceil(rate * winnings)` chips: never less than the rate, and less
than one chip more. Every `Settlement` satisfies `sum(player nets) + banker_net + house_net
== 0`, with the commission inside `house_net`; `boxes` holds the boxes it changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from fractions import Fraction
from typing import Protocol

import msgspec

from domain.errors import RuleViolation
from domain.game.coverage import Coverage, Stake
from domain.game.settings import BankerWin, TableSettings
from domain.game.sides import Outcome, Side


class Spot(StrEnum):
    """Where a house-banked bet lies: on the punter's hand (punto, ponte), the banker's, a tie."""

    PUNTER = "punter"
    BANKER = "banker"
    TIE = "tie"


class Bet(msgspec.Struct, frozen=True):
    player: str
    spot: Spot
    amount: int


class Payout(msgspec.Struct, frozen=True):
    """One player's result: `net` chips won (negative: lost), `commission` taken from a win."""

    player: str
    staked: int
    net: int
    commission: int = 0
    reason: str = ""


class Settlement(msgspec.Struct, frozen=True):
    payouts: tuple[Payout, ...]
    banker_net: int
    commission: int
    house_net: int
    boxes: dict[str, int] = msgspec.field(default_factory=dict)  # player: box after the coup

    def check(self) -> Settlement:
        total = sum(p.net for p in self.payouts) + self.banker_net + self.house_net
        if total != 0:
            raise AssertionError(f"chips not conserved: {total:+d}")
        return self

    def net_of(self, player: str) -> int:
        return sum(p.net for p in self.payouts if p.player == player)


BOX_UNITS = 10_000  # a commission box counts in ten-thousandths of a chip


def commission_on(winnings: int, basis_points: int, box: int = 0) -> tuple[int, int]:
    """The whole chips the house takes on `winnings` at a rate in basis points, given the
    player's box (credit in `BOX_UNITS`), and the box after: the exact commission less the
    credit, rounded up; what that takes beyond the exact commission is the new credit."""
    if winnings <= 0:
        return 0, box
    exact = winnings * basis_points
    taken = max(0, -((box - exact) // BOX_UNITS))
    return taken, box + taken * BOX_UNITS - exact


class LessCommission:
    """A winning banker bet pays even money less the commission, through the player's box."""

    def paid(self, settings: TableSettings, amount: int, banker_point: int | None,
             box: int | None) -> tuple[int, int, int | None]:
        """The net won on `amount`, the commission taken, the box after (None: no box)."""
        if not settings.commission_bp:
            return amount, 0, None
        commission, after = commission_on(amount, settings.commission_bp, box or 0)
        return amount - commission, commission, after

    def returned(self, banker: Fraction, banker_six: Fraction, commission: Fraction) -> Fraction:
        """What a unit on the banker brings back when it wins, over all coups."""
        return banker * (1 - commission)


class SixPaysHalf:
    """No-Commission: a winning banker bet pays even money, but half when the banker's hand
    wins on six; the odd chip of an odd stake stays with the house."""

    def paid(self, settings: TableSettings, amount: int, banker_point: int | None,
             box: int | None) -> tuple[int, int, int | None]:
        if banker_point is None:
            raise RuleViolation("a banker bet at a No-Commission table is paid by the "
                                "banker's point", rule="banker-point-unknown")
        return (amount // 2 if banker_point == 6 else amount), 0, None

    def returned(self, banker: Fraction, banker_six: Fraction, commission: Fraction) -> Fraction:
        return banker - banker_six / 2


BANKER_WINS: dict[BankerWin, LessCommission | SixPaysHalf] = {
    BankerWin.LESS_COMMISSION: LessCommission(),
    BankerWin.SIX_PAYS_HALF: SixPaysHalf(),
}


WINNING_SPOT = {outcome: Spot(outcome) for outcome in Outcome}
"""The spot each outcome pays."""


def house_bets(settings: TableSettings, outcome: Outcome, bets: Sequence[Bet],
               boxes: Mapping[str, int] | None = None,
               banker_point: int | None = None) -> Settlement:
    """Settle bets banked by the house; `boxes`: the players' commission boxes;
    `banker_point`: the banker's final point (the No-Commission rule pays by it)."""
    payouts = []
    after: dict[str, int] = {}
    banker_wins = BANKER_WINS[settings.banker_pays]
    winning = WINNING_SPOT[outcome]
    tie, banker, tied = Spot.TIE, Spot.BANKER, outcome is Outcome.TIE  # read once a coup
    for bet in bets:
        commission = 0
        if bet.spot is tie:
            net = bet.amount * settings.tie_pays if tied else -bet.amount
        elif tied:
            net = 0 if settings.push_on_tie else -bet.amount
        elif bet.spot is not winning:
            net = -bet.amount
        elif bet.spot is banker:
            net, commission, box = banker_wins.paid(
                settings, bet.amount, banker_point,
                after.get(bet.player, (boxes or {}).get(bet.player, 0)))
            if box is not None:
                after[bet.player] = box
        else:
            net = bet.amount
        payouts.append(Payout(bet.player, bet.amount, net, commission, f"bet on {bet.spot!s}"))
    players = sum(p.net for p in payouts)
    commission_total = sum(p.commission for p in payouts)
    return Settlement(tuple(payouts), 0, commission_total, -players, after).check()


def duel(outcome: Outcome, banque: str, ponte: str, stake: int) -> Settlement:
    """The family game's duel: the winner takes the other's stake."""
    sign = {Outcome.BANKER: 1, Outcome.PUNTER: -1, Outcome.TIE: 0}[outcome]
    payouts = (
        Payout(banque, stake, sign * stake, reason="duel as Banque"),
        Payout(ponte, stake, -sign * stake, reason="duel as Ponte"),
    )
    return Settlement(payouts, 0, 0, 0).check()


STAKE_WINS = {Outcome.PUNTER: 1, Outcome.BANKER: -1, Outcome.TIE: 0}
"""What a stake against the bank wins, in stakes, by its tableau's outcome."""


def against_bank(
    settings: TableSettings, outcomes: Mapping[Side, Outcome], engaged: Sequence[Stake],
    banker: str = "", box: int = 0,
) -> Settlement:
    """Settle engaged stakes against a player's bank, tableau by tableau; the cagnotte on
    the bank's winnings uses the banker's commission `box`."""
    payouts = []
    for stake in engaged:
        net = STAKE_WINS[outcomes[stake.tableau]] * stake.amount
        payouts.append(
            Payout(stake.player, stake.amount, net,
                   reason=f"stake on {stake.tableau!s}")
        )
    winnings = -sum(p.net for p in payouts)
    commission, box_after = commission_on(winnings, settings.commission_bp, box)
    boxes = {banker: box_after} if box_after != box else {}
    return Settlement(tuple(payouts), winnings - commission, commission, commission,
                      boxes).check()


class PayingTable(Protocol):
    """What the payout rules read of a table."""

    @property
    def settings(self) -> TableSettings: ...

    @property
    def bets(self) -> Sequence[Bet]: ...

    @property
    def commission_box(self) -> Mapping[str, int]: ...

    @property
    def duel(self) -> Sequence[str]: ...

    @property
    def banker(self) -> str | None: ...

    @property
    def covered(self) -> Coverage | None: ...


class HousePays:
    """Punto banco: the house pays its bets."""

    even_bets_lose_on_tie = False  # the odds' default: Player and Banker lost on a tie

    def settle(self, state: PayingTable, outcomes: dict[Side, Outcome],
               points: Mapping[Side, int]) -> Settlement:
        return house_bets(state.settings, outcomes[Side.PUNTER], state.bets,
                          state.commission_box, points.get(Side.BANKER))


class DuelPays(HousePays):
    """The family game: the duel's winner takes the stakes, the house pays the side bets."""

    even_bets_lose_on_tie = True

    def settle(self, state: PayingTable, outcomes: dict[Side, Outcome],
               points: Mapping[Side, int]) -> Settlement:
        side_bets = super().settle(state, outcomes, points)
        won = duel(outcomes[Side.PUNTER], state.duel[0], state.duel[1],
                   state.settings.duel_stake)
        return Settlement(won.payouts + side_bets.payouts, 0, side_bets.commission,
                          side_bets.house_net, side_bets.boxes).check()


class BankPays(HousePays):
    """Chemin de fer, à deux tableaux: the engaged stakes are paid out of the bank."""

    def settle(self, state: PayingTable, outcomes: dict[Side, Outcome],
               points: Mapping[Side, int]) -> Settlement:
        assert state.covered is not None and state.banker is not None
        return against_bank(state.settings, outcomes, state.covered.engaged, state.banker,
                            state.commission_box.get(state.banker, 0))
