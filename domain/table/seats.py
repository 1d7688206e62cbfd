"""Seating: a player sits down, leaves between coups, has chips adjusted by the tournament.

`Seating` is one part of `TableState` (`domain.table.state`); the seats themselves and the order
of play are read from the table's state (`domain.table.base`).
"""

from __future__ import annotations

from domain.errors import OutOfTurn, RuleViolation
from domain.game.banking import fill_duel
from domain.game.sides import Side
from domain.limits import check_chips, check_name
from domain.table.base import Phase, Seat, TableBase


class Seating(TableBase, kw_only=True):
    """A table's seating steps."""

    def seat(self, player: str, chips: int, side: Side | None, standing: bool) -> None:
        if any(s.player == player for s in self.seats):
            raise RuleViolation(f"{player} is already at this table", rule="already-seated")
        check_name(player, "player's name")
        if chips < 0:
            raise RuleViolation("chips cannot be negative", rule="chips-negative")
        check_chips(chips)
        rules = self.rules
        if rules.seats_on_sides and not standing and side not in rules.tableaux:
            raise RuleViolation("an à deux tableaux seat is on the right or the left",
                                rule="seat-side")
        self.seats.append(Seat(player=player, chips=chips, side=side, standing=standing))
        self.chips_in += chips
        rules.banking.seated(self)

    def leave(self, player: str) -> int:
        """A player leaves between coups, taking their chips."""
        seat = self.seat_of(player)
        if self.phase in (Phase.PLAYING, Phase.SETTLED) or (
            self.committed(player) and not self.tie_replay
        ):
            raise OutOfTurn(f"{player} has chips in play", rule="chips-in-play")
        if player == self.banker:
            raise OutOfTurn("the banker retires the bank before leaving", rule="banker-leaving")
        self._withdraw_from_tie_replay(player)
        if player == self.bank_offered_to:
            nxt = [p for p in self.rotation_after(player) if p != player]
            self.bank_offered_to = nxt[0] if nxt else None
        self.seats.remove(seat)
        self.chips_out += seat.chips
        self.commission_box.pop(player, None)  # a credit left in the box lapses
        if self.passed_hand_returns_to == player:
            self.passed_hand_returns_to = None
        if self.banco_suivi == player:
            self.banco_suivi = None
        if player in self.duel:
            self.duel.remove(player)
            fill_duel(self)
        return seat.chips

    def adjust_chips(self, player: str, delta: int) -> None:
        """Chips moved in or out by the tournament (a re-entry, a move between tables). Chips
        taken from a stake that stands for a tied coup's replay take the stake back first, as
        when its player leaves (the tie moved nothing); chips in play in a coup stay."""
        seat = self.seat_of(player)
        check_chips(seat.chips + delta)
        if seat.chips + delta < 0:
            raise RuleViolation(f"{player} has only {seat.chips} chips", rule="chips-short")
        if seat.chips + delta < self.committed(player):
            self._withdraw_from_tie_replay(player)
            if seat.chips + delta < self.committed(player):
                raise OutOfTurn(f"{player} has {self.committed(player)} chips in play: they "
                                "stay until the coup is paid", rule="chips-in-play")
        seat.chips += delta
        self.chips_in += delta
        self.rules.banking.chips_moved(self)
