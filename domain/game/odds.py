"""Exact odds of a coup by full enumeration of the shoe, with card removal.

Every ordered six-card sequence that a shoe of `settings.decks` packs can deal is counted
towards a banker win, a punter (player) win or a tie, in exact integer arithmetic; probabilities
and house edges are exact `Fraction`s built from those counts. A coup that uses fewer than six
cards counts once for every ordering of the positions it leaves unused, so the three counts
always sum to N(N-1)(N-2)(N-3)(N-4)(N-5) for a shoe of N cards.

The hands are enumerated by card value (ten values, a bûche worth 0), each with its
multiplicity, never card by card. Punto banco follows its drawing table; chemin de fer and the
family game play the default policies of `domain.game.policies`. A two-card 8 or 9 is a natural that
ends the coup in every variant.
"""

from __future__ import annotations

from enum import StrEnum
from fractions import Fraction

import msgspec

from domain.errors import RuleViolation
from domain.game.cards import value_counts
from domain.game.drawing import Rule
from domain.game.payouts import BANKER_WINS
from domain.game.policies import banker_draws, punter_draws
from domain.game.settings import BankerWin, PunterFive, TableSettings, Variant
from domain.game.variants import punter_rule, rules_for

ODDS_VARIANTS = tuple(v for v in Variant if not rules_for(v).drawing.banker_free)

_BANKER, _PLAYER, _TIE, _BANKER_SIX = 0, 1, 2, 3  # _BANKER_SIX: the banker wins on six
_OUTCOMES = (_BANKER, _PLAYER, _TIE, _BANKER_SIX)
_STOOD = 10  # index of "the punter stood" in the banker's drawing table, after the values 0-9

# _RESULT[punter point][banker point]: who wins the coup.
_RESULT = tuple(
    tuple((_BANKER_SIX if b == 6 else _BANKER) if b > p else _PLAYER if p > b else _TIE
          for b in range(10)) for p in range(10)
)


class Outcome(StrEnum):
    """How a coup ends, and the bet that is paid when it ends so."""

    BANKER = "banker"
    PLAYER = "player"
    TIE = "tie"


class Odds(msgspec.Struct, frozen=True, kw_only=True):
    """How many ordered six-card sequences of the shoe give each outcome, and what that is worth.

    `player` is the punters' hand (punto in punto banco, Ponte in the family game).
    """

    variant: Variant
    decks: int
    commission_percent: int
    tie_pays: int
    commission_bp: int = 0  # the rate the edges use, in basis points
    punters_draw_on_five: bool = False  # how the punters' hand played its 5
    banker: int
    player: int
    tie: int
    total: int
    banker_six: int = 0  # of the banker's wins, those on a final point of six
    banker_win: BankerWin = BankerWin.LESS_COMMISSION  # how a banker win is paid

    def count(self, outcome: Outcome) -> int:
        """The number of ordered six-card sequences that end the coup with `outcome`."""
        match outcome:
            case Outcome.BANKER:
                return self.banker
            case Outcome.PLAYER:
                return self.player
            case Outcome.TIE:
                return self.tie

    def probability(self, outcome: Outcome) -> Fraction:
        """The exact probability that a coup from a full shoe ends with `outcome`."""
        return Fraction(self.count(outcome), self.total)

    def edge(self, bet: Outcome) -> Fraction | None:
        """The house edge of a one-unit bet: minus its expected net result; None if not offered.

        A banker win pays 1 less the commission (none by default in the family game), or at a
        No-Commission table 1, and 1/2 when the banker wins on six. Punto
        banco and chemin de fer push the banker and player bets on a tie (in chemin de fer the
        coup is void, and there is no tie bet). In the family game a tie loses the Banque and
        Ponte bets, and Égalité pays `tie_pays` times the stake.
        """
        banker = self.probability(Outcome.BANKER)
        player = self.probability(Outcome.PLAYER)
        tie = self.probability(Outcome.TIE)
        commission = Fraction(self.commission_bp, 10_000)
        rules = rules_for(self.variant)
        lost_on_tie = tie if rules.payout.even_bets_lose_on_tie else Fraction(0)
        match bet:
            case Outcome.BANKER:
                won = BANKER_WINS[self.banker_win].returned(
                    banker, Fraction(self.banker_six, self.total), commission)
                return -(won - player - lost_on_tie)
            case Outcome.PLAYER:
                return -(player - banker - lost_on_tie)
            case Outcome.TIE:
                if not rules.tie_bet:
                    return None
                return -(self.tie_pays * tie - (1 - tie))


def exact_odds(settings: TableSettings) -> Odds:
    """Count every ordered six-card sequence of a full shoe by the outcome of its coup."""
    if rules_for(settings).drawing.banker_free:
        raise RuleViolation(
            "exact odds cover punto banco, chemin de fer and the family game: the à deux "
            "tableaux banker decides freely",
            rule="odds-variant",
        )
    banker, player, tie, banker_six = _tally(settings)
    return Odds(
        variant=settings.variant,
        decks=settings.decks,
        commission_percent=settings.commission_percent,
        tie_pays=settings.tie_pays,
        commission_bp=settings.commission_bp,
        punters_draw_on_five=punter_draws(settings, 5),
        banker=banker,
        player=player,
        tie=tie,
        total=banker + player + tie,
        banker_six=banker_six,
        banker_win=settings.banker_pays,
    )


class OnFive(msgspec.Struct, frozen=True):
    """The punters' choice on 5 (001: "5 Facultatif / au choix"): the odds when the punters'
    hand always stands on 5, when it always draws, and which serves the punters better."""

    stand: Odds
    draw: Odds

    @property
    def better(self) -> PunterFive:
        """The move with the lower house edge on the punters' bet; standing on equality."""
        draw_edge, stand_edge = self.draw.edge(Outcome.PLAYER), self.stand.edge(Outcome.PLAYER)
        assert draw_edge is not None and stand_edge is not None
        return PunterFive.DRAW if draw_edge < stand_edge else PunterFive.STAND


def on_five(settings: TableSettings) -> OnFive | None:
    """Both ways of playing the punters' 5, or None where the table fixes it (`punter_five`)
    or its drawing table has no choice on 5."""
    if punter_rule(settings, 5) is not Rule.CHOICE:
        return None
    return OnFive(
        stand=exact_odds(msgspec.structs.replace(settings, punter_draws_on_five=False)),
        draw=exact_odds(msgspec.structs.replace(settings, punter_draws_on_five=True)),
    )


def _tally(settings: TableSettings) -> tuple[int, int, int, int]:
    """Banker wins (those on six included), player wins, ties, and banker wins on six."""
    shoe = value_counts(settings.decks)
    cards = sum(shoe)
    punter_draws_on = [punter_draws(settings, p) if p < 8 else False for p in range(10)]
    banker_draws_on = [
        [
            banker_draws(settings, b, None if given == _STOOD else given) if b < 8 else False
            for given in range(11)
        ]
        for b in range(10)
    ]
    # Weights of the coups that end after four, five and six cards, by outcome; the unused
    # positions of the six are multiplied in once, at the end.
    four = [0, 0, 0, 0]
    five = [0, 0, 0, 0]
    six = [0, 0, 0, 0]
    by_outcome = [0, 0, 0, 0]
    for p1 in range(10):
        for p2 in range(p1, 10):
            punter_pairs = shoe[p1] * (shoe[p2] - (p1 == p2)) * (1 if p1 == p2 else 2)
            if not punter_pairs:
                continue
            shoe[p1] -= 1
            shoe[p2] -= 1
            punter = (p1 + p2) % 10
            for b1 in range(10):
                for b2 in range(b1, 10):
                    banker_pairs = shoe[b1] * (shoe[b2] - (b1 == b2)) * (1 if b1 == b2 else 2)
                    if not banker_pairs:
                        continue
                    weight = punter_pairs * banker_pairs
                    banker = (b1 + b2) % 10
                    if punter >= 8 or banker >= 8:
                        four[_RESULT[punter][banker]] += weight
                        continue
                    shoe[b1] -= 1
                    shoe[b2] -= 1
                    if punter_draws_on[punter]:
                        for given in range(10):
                            left = shoe[given]
                            if not left:
                                continue
                            final = (punter + given) % 10
                            if banker_draws_on[banker][given]:
                                shoe[given] -= 1
                                by_outcome[0] = by_outcome[1] = by_outcome[2] = by_outcome[3] = 0
                                results = _RESULT[final]
                                for third in range(10):
                                    by_outcome[results[(banker + third) % 10]] += shoe[third]
                                shoe[given] += 1
                                for outcome in _OUTCOMES:
                                    six[outcome] += weight * left * by_outcome[outcome]
                            else:
                                five[_RESULT[final][banker]] += weight * left
                    elif banker_draws_on[banker][_STOOD]:
                        results = _RESULT[punter]
                        for third in range(10):
                            if shoe[third]:
                                five[results[(banker + third) % 10]] += weight * shoe[third]
                    else:
                        four[_RESULT[punter][banker]] += weight
                    shoe[b1] += 1
                    shoe[b2] += 1
            shoe[p1] += 1
            shoe[p2] += 1
    after_four = (cards - 4) * (cards - 5)
    after_five = cards - 5
    banker_wins, player_wins, ties, on_six = (
        four[outcome] * after_four + five[outcome] * after_five + six[outcome]
        for outcome in _OUTCOMES
    )
    return banker_wins + on_six, player_wins, ties, on_six
