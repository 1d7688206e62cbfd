"""The default move at the decision a table awaits: what bots play and deadlines apply.

Fixed moves follow the drawing table; choices follow `domain.game.policies`; the à deux
tableaux banker takes the move of higher exact expectation (`domain.game.banker_expectation`),
knowing only what he has seen: his own cards, every third card, the cards of earlier coups;
or, with `banker_strategy: book`, 000's numbered rules (`domain.game.banker_book`).
"""

from __future__ import annotations

from domain.game.banker_book import book_should_draw
from domain.game.banker_expectation import banker_should_draw
from domain.game.cards import point, value, value_counts
from domain.game.coup import Side
from domain.game.policies import banker_draws, punter_draws
from domain.game.settings import BankerStrategy
from domain.table.state import TableState


def default_draw(state: TableState, side: Side) -> bool:
    """Whether the hand of `side` draws, by default, at the decision now awaited."""
    coup = state.coup
    assert coup is not None
    own = point(coup.hands[side][:2])
    if side is not Side.BANKER:
        return punter_draws(state.settings, own)
    if not state.rules.drawing.banker_free:
        return banker_draws(state.settings, own, coup.given(coup.tableaux[0]))
    assert state.covered is not None
    stakes = {t: state.covered.engaged_on(t) for t in coup.tableaux}
    if state.settings.banker_strategy is BankerStrategy.BOOK:
        return book_should_draw(coup, stakes)
    return banker_should_draw(coup, stakes, _unseen_by_banker(state))


def _unseen_by_banker(state: TableState) -> list[int]:
    assert state.shoe is not None and state.coup is not None
    coup = state.coup
    in_this_coup = sum(len(cards) for cards in coup.hands.values())
    seen = state.shoe.dealt[: len(state.shoe.dealt) - in_this_coup] + coup.hands[Side.BANKER]
    seen += [cards[2] for side, cards in coup.hands.items()
             if side is not Side.BANKER and len(cards) == 3]
    seen += [c for side in coup.naturals for c in coup.hands[side]]
    unseen = value_counts(state.shoe.decks)
    for c in seen:
        unseen[value(c)] -= 1
    return unseen
