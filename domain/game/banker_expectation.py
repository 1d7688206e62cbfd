"""The à deux tableaux banker's default policy: draw or stand by exact expectation.

The banker of à deux tableaux is free (000): he decides after seeing the third cards given to
both tableaux, or that they stood. The default policy, for bots and expired deadlines, takes the
move whose exact expected result in chips, over both tableaux, is the higher:

    E[move] = sum over tableaux in play of stake * (P(banker wins) - P(tableau wins))

ties being void. On exact equality the banker stands: drawing gains nothing then, and a banker
who has nothing to gain stays content (000's "se contenter"), which also uses no card.

The model, computed exactly (integer counts, `Fraction` only for the result):
- the unseen cards (the shoe minus every card the banker saw, including burned cards and the
  punters' hidden hands) are dealt uniformly at random to the unseen places;
- each tableau in play holds two hidden cards from that pool, and is known to have no natural
  and to have done what the default punter policy does on its point
  (`domain.game.policies.punter_draws`): a tableau that drew had a point the policy draws on, one
  that stood a point it stands on;
- the hidden hands of both tableaux come from the same pool, so they are enumerated jointly,
  by card values with their multiplicities, and the banker's third card from what remains.
A tableau that has no stake still hides two cards and still tells the banker what its point
was, so it is enumerated too; it only counts nothing in the result. A tableau decided by a
natural is out of the coup: its cards are face up, hence seen.

If no hidden hands in the pool agree with what the tableaux did (a hand holder who used the
choice on 5 against the default, with a pool too small to hide another hand), the banker falls
back on what he knows for certain: no natural.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import NamedTuple

from domain.game.cards import point
from domain.game.coup import Coup, Side
from domain.game.policies import punter_draws
from domain.game.settings import TableSettings
from domain.game.variants import rules_for

_VALUES = range(10)
_NON_NATURAL = frozenset(range(8))

# Every unordered pair of card values, grouped by the pair's point.
_PAIRS_BY_POINT: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((i, j) for i in _VALUES for j in range(i, 10) if (i + j) % 10 == p) for p in _VALUES
)


class _Tableau(NamedTuple):
    stake: int
    given: int | None  # the face-up third card's value; None: the tableau stood

    def final(self, two_card_point: int) -> int:
        return two_card_point if self.given is None else (two_card_point + self.given) % 10


# For each tuple of the tableaux' two-card points, the weighted counts of the banker's next
# card by value: the number of ways to hide those hands and then deal that card.
_Joint = dict[tuple[int, ...], list[int]]


def banker_should_draw(coup: Coup, stakes: Mapping[Side, int], unseen: Sequence[int]) -> bool:
    """Whether the à deux tableaux banker draws under the default policy.

    `stakes`: the stake engaged on each tableau (missing: 0). `unseen`: how many cards of each
    value 0-9 the banker has not seen. Draws only when drawing has the strictly higher exact
    expectation; stands on equality.
    """
    draw, stand = banker_expectations(coup, stakes, unseen)
    return draw > stand


def banker_expectations(
    coup: Coup, stakes: Mapping[Side, int], unseen: Sequence[int]
) -> tuple[Fraction, Fraction]:
    """The banker's exact expected result in chips if he draws, and if he stands.

    Raises ValueError when the coup is not at the à deux tableaux banker's decision, a stake or
    count is negative, or the unseen cards cannot hold the tableaux' hidden hands and a third card.
    """
    if not rules_for(coup.settings).drawing.banker_free:
        raise ValueError("banker_expectation is the à deux tableaux banker's policy")
    if coup.to_act() is not Side.BANKER or coup.awaits_offer():
        raise ValueError("the coup is not at the banker's decision")
    if any(stake < 0 for stake in stakes.values()):
        raise ValueError("a stake cannot be negative")
    tableaux = [_Tableau(stakes.get(side, 0), coup.given(side)) for side in coup.in_play()]
    pool = _checked_pool(unseen, hidden=2 * len(tableaux))
    banker = point(coup.hands[Side.BANKER])

    joint = _joint(pool, [_possible_points(coup.settings, t.given) for t in tableaux])
    if not joint:
        joint = _joint(pool, [_NON_NATURAL for _ in tableaux])
    if not joint:
        raise ValueError("the unseen cards cannot hold the tableaux' hidden hands")

    total = draw = stand = 0
    for points, next_card in joint.items():
        finals = [t.final(p) for p, t in zip(points, tableaux, strict=True)]
        ways = sum(next_card)
        total += ways
        stand += ways * _result(banker, finals, tableaux)
        for card, count in enumerate(next_card):
            if count:
                draw += count * _result((banker + card) % 10, finals, tableaux)
    return Fraction(draw, total), Fraction(stand, total)


def _checked_pool(unseen: Sequence[int], *, hidden: int) -> list[int]:
    pool = list(unseen)
    if len(pool) != 10 or any(count < 0 for count in pool):
        raise ValueError("unseen must give 10 non-negative counts, one per card value 0-9")
    if sum(pool) < hidden + 1:
        raise ValueError(
            f"{sum(pool)} unseen cards cannot hold {hidden} hidden cards and a third card"
        )
    return pool


def _possible_points(settings: TableSettings, given: int | None) -> frozenset[int]:
    """The two-card points on which the default punter policy does what the tableau did."""
    drew = given is not None
    return frozenset(p for p in _NON_NATURAL if punter_draws(settings, p) == drew)


def _joint(pool: list[int], possible: list[frozenset[int]]) -> _Joint:
    joint: _Joint = {}
    _hide(pool, possible, (), 1, joint)
    return joint


def _hide(
    pool: list[int], possible: list[frozenset[int]], points: tuple[int, ...], ways: int,
    joint: _Joint,
) -> None:
    """Hide a pair for each remaining tableau in turn (mutating `pool`, restored on return)."""
    if len(points) == len(possible):
        row = joint.setdefault(points, [0] * 10)
        for card in _VALUES:
            row[card] += ways * pool[card]
        return
    for p in possible[len(points)]:
        for i, j in _PAIRS_BY_POINT[p]:
            pairs = pool[i] * (pool[i] - 1) // 2 if i == j else pool[i] * pool[j]
            if not pairs:
                continue
            pool[i] -= 1
            pool[j] -= 1
            _hide(pool, possible, (*points, p), ways * pairs, joint)
            pool[i] += 1
            pool[j] += 1


def _result(banker: int, finals: list[int], tableaux: list[_Tableau]) -> int:
    """The banker's result in chips against every tableau, given the final points."""
    pairs = zip(finals, tableaux, strict=True)
    return sum(t.stake * ((banker > final) - (banker < final)) for final, t in pairs)
