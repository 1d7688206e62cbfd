"""Who may ask a table for what: a player acts only for themselves, the table's steps (the
shoe, the deal, closing betting, settling and paying) are an official's, and the bank is
given by an official or taken by the player it is offered to.

`require_right(actor, command, state)` refuses a command whose actor has no right to it
(`not-yourself`, `not-your-stake`, `official-step`, `not-your-bank`), before the table looks
at its rules; a decision on a hand is checked by the coup, against the hand's holder.
"""

from __future__ import annotations

from domain.actors import is_official, require_actor
from domain.table import commands as c
from domain.table.base import TableBase


def require_right(actor: str, command: c.TableCommand, state: TableBase) -> None:
    """Refuse `command` from `actor` unless it is theirs to send."""
    if is_official(actor):  # an official acts for anyone (`require_actor`)
        return
    match command:  # a coup's steps in their order first (most commands), then the rest
        case c.PlaceBet(player=p):
            require_actor(actor, p, f"stake for {p}", rule="not-your-stake")
        case c.PassBetTurn(player=p):
            require_actor(actor, p, f"pass the turn to bet for {p}", rule="not-your-stake")
        case c.PlaceStake(player=p):
            require_actor(actor, p, f"stake for {p}", rule="not-your-stake")
        case c.CallBanco(player=p):
            require_actor(actor, p, f"call banco for {p}", rule="not-your-stake")
        case c.CloseBetting():
            require_actor(actor, None, "close betting", rule="official-step")
        case c.DealCard():
            require_actor(actor, None, "deal", rule="official-step")
        case c.ShowNaturals():
            require_actor(actor, None, "show the naturals", rule="official-step")
        case c.Decide() | c.OfferCard() | c.ShowDown():
            return  # a decision on a hand: the coup checks it against the hand's holder
        case c.PlayDefault():
            require_actor(actor, None, "play a default", rule="official-step")
        case c.SettleCoup():
            require_actor(actor, None, "settle", rule="official-step")
        case c.PayCoup():
            require_actor(actor, None, "pay", rule="official-step")
        case c.AwardBank(player=p):
            check_taker(state, actor, p)
        case c.DeclineBank(player=p):
            require_actor(actor, p, f"decline the bank for {p}", rule="not-yourself")
        case c.RetireBank(player=p):
            require_actor(actor, p, f"retire the bank for {p}", rule="not-yourself")
        case c.ShuffleShoe():
            require_actor(actor, None, "shuffle", rule="official-step")
        case c.ContributeEntropy(player=p):
            require_actor(actor, p, f"contribute for {p}", rule="not-yourself")
        case c.CutShoe(player=p):
            require_actor(actor, p, f"cut for {p}", rule="not-yourself")
        case c.BurnCard():
            require_actor(actor, None, "burn", rule="official-step")
        case c.RevealSeed():
            require_actor(actor, None, "reveal the seed", rule="official-step")
        case c.EndTaille():
            require_actor(actor, None, "end the taille", rule="official-step")
        case c.SeatPlayer(player=p):
            require_actor(actor, p, f"seat {p}", rule="not-yourself")
        case c.LeaveTable(player=p):
            require_actor(actor, p, f"take {p} from the table", rule="not-yourself")
        case c.AdjustChips(player=p):
            require_actor(actor, p, f"move {p}'s chips", rule="not-yourself")
        case c.ChangeLimits():
            require_actor(actor, None, "change the stake limits", rule="official-step")


def check_taker(state: TableBase, actor: str, player: str) -> None:
    """The bank is given by an official, or taken by the player it is offered to."""
    offered = state.bank_offered_to
    require_actor(actor, offered if offered == player else None,
                  f"take the bank for {player}", rule="not-your-bank")
