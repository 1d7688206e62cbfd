"""000's book for the à deux tableaux banker, and what following it costs against the optimum.

000 gives the banker ten numbered rules, by the third card given to a punter:
1. the punter stood: draw, "quand bien même il aurait cinq" (stand on 6);
2. a bûche given: "se contentera de trois"; 3. an ace: "du point de 4";
4. a two, 5. a three: content with 5; 6. a four: draw "quoiqu'il ait déjà cinq";
7. a five: "ne peut pas se contenter à 5"; 8. a six: draw, "quoique possédant aussi le même
point"; 9. a seven: draw on 6; 10. an eight or a nine: "se contenter du point de cinq, même
de quatre et de trois".
With two tableaux in play the book's rules may disagree; 000 says the banker "doit souvent
sacrifier sa chance sur l'un de ces tableaux pour sauver l'autre": the book follows the
tableau with the larger stake (the right one on equal stakes).

`book_cost` weighs the book against the exact optimum (`domain.game.banker_expectation`'s model)
for one staked tableau against the banker, from a full shoe: for every banker's two cards and
card given, the expectation of drawing and of standing, exactly; the book loses wherever its
move has the lower one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from fractions import Fraction

import msgspec

from domain.game.cards import point, value_counts
from domain.game.coup import Coup, Side
from domain.game.policies import punter_draws
from domain.game.settings import TableSettings

# The banker's lowest point on which the book stands, by the card given (None: stood).
STANDS_FROM: dict[int | None, int] = {
    None: 6, 0: 3, 1: 4, 2: 5, 3: 5, 4: 6, 5: 6, 6: 7, 7: 7, 8: 3, 9: 3,
}


def book_draws(banker: int, given: int | None) -> bool:
    """000's rule for a banker on `banker` (two cards, no natural) against one tableau."""
    return banker < STANDS_FROM[given]


def book_should_draw(coup: Coup, stakes: Mapping[Side, int]) -> bool:
    """The book's move at the banker's decision: the rule for the tableau in play with the
    larger engaged stake, the first dealt on equal stakes."""
    in_play = coup.in_play()
    followed = max(in_play, key=lambda side: (stakes.get(side, 0), -in_play.index(side)))
    return book_draws(point(coup.hands[Side.BANKER]), coup.given(followed))


class Cell(msgspec.Struct, frozen=True):
    """The banker on `banker` against a tableau given `given` (None: it stood), where the
    book's move is not the better one: how often, and the loss there per unit staked."""

    banker: int
    given: int | None
    book_draws: bool
    probability: Fraction  # of reaching this decision, per coup
    cost: Fraction  # expected loss per unit staked, given the decision is reached


class BookCost(msgspec.Struct, frozen=True):
    decks: int
    cells: tuple[Cell, ...]
    per_coup: Fraction  # expected loss per unit staked per coup of following the book
    optimum: Fraction  # the banker's expected result per unit staked per coup, at his best


def book_cost(settings: TableSettings) -> BookCost:
    """Follow the book or the exact optimum against one tableau from a full shoe."""
    shoe = value_counts(settings.decks)
    n = sum(shoe)
    # For each banker's information (his two values, the card given), summed over the hidden
    # pairs and third cards with their weights: the result of drawing and of standing.
    sums: dict[tuple[int, int, int | None], list[int]] = {}
    for _, _, tableau, ways_t in _hands(shoe):
        for b1, b2, banker, ways_b in _hands(shoe):
            ways = ways_t * ways_b
            if punter_draws(settings, tableau):
                for given in range(10):
                    if shoe[given]:
                        shoe[given] -= 1
                        _add(sums, (b1, b2, given), ways * (shoe[given] + 1), shoe, banker,
                             (tableau + given) % 10)
                        shoe[given] += 1
            else:
                _add(sums, (b1, b2, None), ways * (n - 5), shoe, banker, tableau)
    return _costs(settings.decks, sums, n)


def _hands(shoe: list[int]) -> Iterator[tuple[int, int, int, int]]:
    """Every two-card hand without a natural that `shoe` can deal, by values i <= j: i, j, its
    point and its ordered ways; its two cards are out of `shoe` while the caller looks."""
    for i in range(10):
        for j in range(i, 10):
            ways = shoe[i] * (shoe[i] - 1) if i == j else 2 * shoe[i] * shoe[j]
            if not ways or (i + j) % 10 >= 8:
                continue
            shoe[i] -= 1
            shoe[j] -= 1
            yield i, j, (i + j) % 10, ways
            shoe[i] += 1
            shoe[j] += 1


def _add(sums: dict[tuple[int, int, int | None], list[int]], info: tuple[int, int, int | None],
         ways: int, shoe: list[int], banker: int, final: int) -> None:
    row = sums.setdefault(info, [0, 0, 0])  # [weight, drawing's result, standing's result]
    stand = (banker > final) - (banker < final)
    for card, left in enumerate(shoe):
        if left:
            drawn = (banker + card) % 10
            row[0] += ways * left
            row[1] += ways * left * ((drawn > final) - (drawn < final))
            row[2] += ways * left * stand


def _costs(decks: int, sums: dict[tuple[int, int, int | None], list[int]], n: int) -> BookCost:
    total = n * (n - 1) * (n - 2) * (n - 3) * (n - 4) * (n - 5)
    by_cell: dict[tuple[int, int | None], list[int]] = {}
    best = 0
    for (b1, b2, given), (weight, draw, stand) in sums.items():
        banker = (b1 + b2) % 10
        book = draw if book_draws(banker, given) else stand
        best += max(draw, stand)
        cell = by_cell.setdefault((banker, given), [0, 0])
        cell[0] += weight
        cell[1] += max(draw, stand) - book
    cells = tuple(
        Cell(banker=banker, given=given, book_draws=book_draws(banker, given),
             probability=Fraction(weight, total), cost=Fraction(lost, weight))
        for (banker, given), (weight, lost) in sorted(by_cell.items(), key=_cell_order)
        if lost
    )
    per_coup = sum((c.probability * c.cost for c in cells), Fraction(0))
    return BookCost(decks=decks, cells=cells, per_coup=per_coup, optimum=Fraction(best, total))


def _cell_order(item: tuple[tuple[int, int | None], list[int]]) -> tuple[int, int]:
    (banker, given), _ = item
    return (-1 if given is None else given, banker)
