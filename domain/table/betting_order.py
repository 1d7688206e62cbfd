"""The betting order of a house-banked table: who bets now, the rotation, the bet clock.

At a table whose `betting_order` is `free`, every player bets when they like until the
croupier closes betting. At a `rotating` one (casino punto-banco tournaments) players bet in
turn, one bet a turn: the order for coup n (1 the first) starts at the seat (n - 1) mod the
players who may bet, so the first bettor moves one seat to the left each coup, and the others
follow in seat order. Only the player whose turn it is may bet or pass; betting closes once
everyone has had their turn. With a bet clock (`bet_seconds`), each turn has that long:
when it runs out the turn passes with no bet (`PassReason.CLOCK`), played by the workers'
deadline (`workers.deadlines.expire_bet_turn`) like a hand's decision. A tournament's secret
bet is that turn's bet (`PassReason.SECRET_BET`): placed at the player's turn or before it
(never after), it uses the turn, and the order skips the player when it reaches them; the
table records that the turn was used, never the bet.

`BetTurns` is what the table remembers: the players who had their turn, for the coup they
were for (a new coup starts with nobody). The functions read a `TableState` and refuse with
`not-your-turn` or `bet-turns-pending`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from domain.actors import is_official
from domain.errors import OutOfTurn, RuleViolation
from domain.game.settings import BettingOrder
from domain.table.base import Phase, TableBase


class PassReason(StrEnum):
    """Why a turn passed with no bet at the table."""

    PASS = "pass"  # the player passed
    CLOCK = "clock"  # the bet clock ran out
    SECRET_BET = "secret-bet"  # the turn's bet is the player's secret bet (the tournament's)


def turn_order(players: Sequence[str], coup: int) -> list[str]:
    """The order of coup `coup` (1 the first): from seat (coup - 1) mod len(players)."""
    if not players:
        return []
    first = (coup - 1) % len(players)
    return [*players[first:], *players[:first]]


def bettor(state: TableBase) -> str | None:
    """Who is to bet now in turn (None: a free order, betting not open, or every turn had)."""
    if state.phase is not Phase.BETTING or (
            state.settings.betting_order is not BettingOrder.ROTATING):
        return None
    coup = state.coup_number + 1
    taken = state.bet_turns.taken_for(coup)
    for player in turn_order(_bettors(state), coup):
        if player not in taken:
            return player
    return None


def may_bet(state: TableBase) -> list[str]:
    """Who may bet now: the player in turn, or in a free order everyone at the table while
    betting is open."""
    if state.settings.betting_order == BettingOrder.ROTATING:
        turn = bettor(state)
        return [turn] if turn is not None else []
    return state.players() if state.phase is Phase.BETTING else []


def yet_to_stake(state: TableBase) -> list[str]:
    """Who may still stake on the coup: may bet, has neither bet, staked nor called banco, is
    neither the banker nor a duellist, and has the minimum free (all their chips are: they
    have nothing at stake), in seat order."""
    may = may_bet(state)
    out = {b.player for b in state.bets} | {s.player for s in state.stakes} | {
        *state.banco_calls, *state.duel, state.banker}
    minimum = state.settings.min_stake
    return [seat.player for seat in state.seats
            if seat.player in may and seat.player not in out and seat.chips >= minimum]


def _bettors(state: TableBase) -> list[str]:
    """Who bets in turn: the seated players, but the family game's duellists."""
    duel = state.duel
    return [p for p in state.seated() if p not in duel]


def check_turn(state: TableBase, player: str) -> None:
    """Refuse `player` betting (or passing) out of turn."""
    if state.settings.betting_order != BettingOrder.ROTATING:
        return
    turn = bettor(state)
    if turn != player:
        now = f"it is {turn}'s turn" if turn else "nobody's turn is open"
        raise OutOfTurn(f"{player} may not bet now: {now} (bets are placed in turn)",
                        rule="not-your-turn")


def take_turn(state: TableBase, player: str) -> None:
    """`player`'s turn is over (after `check_turn`)."""
    if state.settings.betting_order == BettingOrder.ROTATING:
        state.bet_turns.take(state.coup_number + 1, player)


def check_turn_to_come(state: TableBase, player: str) -> None:
    """Refuse a secret bet from `player` once their turn on the coup being staked is over
    (or once betting has closed): it is placed at their turn or before it."""
    if state.settings.betting_order != BettingOrder.ROTATING:
        return
    state.require(Phase.NO_SHOE, Phase.SHUFFLED, Phase.BURNING, Phase.NO_BANK, Phase.BETTING,
                  Phase.TAILLE_OVER, doing="bet")
    coup = state.coup_number + 1
    if player not in _bettors(state) or player in state.bet_turns.taken_for(coup):
        raise OutOfTurn(f"{player}'s turn to bet on coup {coup} is over (or theirs is none)",
                        rule="not-your-turn")


def check_pass(state: TableBase, player: str, reason: PassReason) -> None:
    """Refuse passing `player`'s turn now: a turn passes in turn, but a secret bet's may be
    used before it comes (the player is then skipped)."""
    if state.settings.betting_order != BettingOrder.ROTATING:
        raise RuleViolation("at this table players bet when they like: there is no turn to "
                            "pass", rule="no-betting-order")
    if reason == PassReason.SECRET_BET:
        check_turn_to_come(state, player)
    else:
        state.require(Phase.BETTING, doing="pass the turn to bet")
        check_turn(state, player)


def pass_turn(state: TableBase, player: str, reason: PassReason) -> None:
    """`player`'s turn passes with no bet."""
    check_pass(state, player, reason)
    state.bet_turns.take(state.coup_number + 1, player)


def pass_due(state: TableBase, actor: str, player: str, coup: int | None,
             reason: PassReason) -> bool:
    """Whether a pass of `player`'s turn on `coup` (None: the coup being staked) is to be
    recorded. A player passes only for themselves; an official passes for the clock or a
    secret bet, and a pass whose turn is over (the player bet in time, the coup moved on) is
    not to be recorded, as a decision's expired deadline."""
    if not is_official(actor) and reason != PassReason.PASS:
        raise RuleViolation(f"a player passes ({PassReason.PASS}); only an official passes a "
                            f"turn for {reason}", rule="pass-reason")
    current = coup in (None, state.coup_number + 1)
    if reason == PassReason.SECRET_BET:
        return current and player in _bettors(state) and (
            player not in state.bet_turns.taken_for(state.coup_number + 1))
    if is_official(actor) and reason != PassReason.PASS:
        return current and bettor(state) == player
    if not current:
        raise OutOfTurn(f"the turns to bet are for coup {state.coup_number + 1}, not {coup}",
                        rule="not-your-turn")
    return True


def check_turns_over(state: TableBase) -> None:
    """Refuse closing betting before every player had their turn."""
    turn = bettor(state)
    if turn is not None:
        raise OutOfTurn(f"{turn} has not had their turn to bet", rule="bet-turns-pending")
