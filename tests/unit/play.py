"""The tests' driver: plays a table through whole coups and tailles with the product's bots.

`Driver(variant, seed)` seats the players, then lets `domain.bots.next_command` choose every
step (with `Habits` that explore the rules: bancos, a banker retiring, a coin where the
rules leave a choice: a draw on 5, an à deux tableaux banker showing down) and the Table
aggregate decide it (`Table.execute`), the RNG shoes' seeds drawn from one
`random.Random(seed)`: a seed replays the same game. It plays a step at a time (`step`),
a coup at a time (`coup`) or a taille at a time (`taille`), and keeps a `CoupRecord` of every
coup. `physical_table(...)` and `play_coup(state, cards)` script coups card by card on a
physical shoe, for the worked examples of the seeds.

No I/O, no clock, no global randomness.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.bots import Habits, next_command
from domain.errors import DomainError
from domain.game.cards import Card, card
from domain.game.coup import Outcome, Side, Step
from domain.game.coverage import Coverage
from domain.game.payouts import Settlement
from domain.game.settings import TableSettings, Variant
from domain.game.shoe import Shoe, commitment, shoe_order
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.defaults import default_draw
from domain.table.state import CROUPIER, Phase, TableState

STALLS = frozenset({"no-banker", "no-stakes", "no-duel", "bank-too-small", "chips-short"})
"""Refusals of a bot's step that mean the game cannot go on (nobody can bank or stake)."""


class Stalled(Exception):
    """The game cannot go on: nobody can take the bank, or nobody can stake against it."""


@dataclass(frozen=True)
class CoupRecord:
    """What a coup was and what it did, read off the table around it."""

    taille: int
    number: int
    banker: str | None  # who held the bank while the coup was played
    bank: int  # the bank when betting closed
    start: int  # shoe position (cards out, burned ones included) before its first card
    end: int  # shoe position after its last card
    outcomes: dict[Side, Outcome]
    settlement: Settlement
    covered: Coverage | None
    duel: tuple[str, ...]
    taille_over: bool  # the taille ended when the coup closed


class DrawnSeeds:
    """The driver's `CardSource`: RNG shoes' seeds from its own `random.Random`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seeds: list[bytes] = []
        self.orders: dict[str, list[Card]] = {}

    def seal_seed(self, table_id: uuid.UUID, taille: int) -> str:
        self.seeds.append(self.rng.randbytes(32))
        return commitment(self.seeds[-1])

    def card_at(self, shoe: Shoe, position: int) -> Card:
        key = f"{shoe.commitment}/{shoe.cut}"
        if key not in self.orders:
            self.orders[key] = shoe_order(shoe, self.seed_of(shoe.commitment))
        return self.orders[key][position]

    def seed_of(self, committed: str) -> bytes:
        return next(seed for seed in self.seeds if commitment(seed) == committed)


@dataclass
class Driver:
    """Plays one table from a seed. Players are `p0`, `p1`, ... in seat order, then standing
    punters `s0`, `s1`, ...; à deux tableaux, seated players alternate right and left."""

    variant: Variant | str
    seed: int
    players: int = 6
    standing: int = 0
    chips: int = 1000
    unit: int = 0  # stakes of 1 to 5 units (0: the bots' own habit)
    random_choices: bool = False
    retire_rate: float = 0.0  # chemin de fer: how often a banker retires between coups
    banco_rate: float = 0.05
    overrides: Mapping[str, object] = field(default_factory=dict)

    table: Table = field(init=False)
    rng: random.Random = field(init=False)
    cards: DrawnSeeds = field(init=False)
    habits: Habits = field(init=False)
    records: list[CoupRecord] = field(init=False, default_factory=list)
    _coup_start: tuple[int, str | None, int] = field(init=False, default=(0, None, 0))
    _steps: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        settings = TableSettings.default(self.variant, **self.overrides)
        self.rng = random.Random(self.seed)
        self.cards = DrawnSeeds(self.rng)
        self.habits = Habits(banco_rate=self.banco_rate, retire_rate=self.retire_rate,
                             random_choices=self.random_choices, unit=self.unit)
        self.table = Table(name="driven", settings=settings, tournament=None,
                           actor="@organiser", command_id="open")
        two_sides = settings.variant is Variant.DEUX_TABLEAUX
        for i in range(self.players):
            side = (Side.RIGHT, Side.LEFT)[i % 2] if two_sides else None
            self._execute(c.SeatPlayer(command_id=f"seat-p{i}", player=f"p{i}",
                                       chips=self.chips, side=side))
        for i in range(self.standing):
            self._execute(c.SeatPlayer(command_id=f"seat-s{i}", player=f"s{i}",
                                       chips=self.chips, standing=True))

    @property
    def state(self) -> TableState:
        return self.table.state

    @property
    def seeds(self) -> list[bytes]:
        return self.cards.seeds

    @property
    def issued(self) -> int:
        return (self.players + self.standing) * self.chips

    def chips_accounted(self) -> int:
        """Every chip issued is on a seat, in the bank, or in the house's result."""
        return self.state.chips_at_table + self.state.house_result

    # --- playing --------------------------------------------------------------------

    def taille(self) -> list[CoupRecord]:
        """Play a whole taille (revealing the last one's seed first); its coups' records."""
        if self.state.phase is Phase.TAILLE_OVER:
            self.step()
        before = len(self.records)
        while True:
            record = self.coup()
            if record.taille_over:
                return self.records[before:]

    def coup(self) -> CoupRecord:
        """Play on until a coup is closed; its record."""
        before = len(self.records)
        while len(self.records) == before:
            self.step()
        return self.records[-1]

    def step(self) -> str:
        """Take the table's next step (the bots' choice); the command's kind."""
        state = self.state
        self._steps += 1
        try:
            command = next_command(state, self.rng, lambda label: f"{self._steps}:{label}",
                                   self.habits)
        except DomainError as stuck:
            raise Stalled(stuck.message) from stuck
        if isinstance(command, c.PayCoup):
            return self._pay(command)
        try:
            self._execute(command)
        except DomainError as refusal:
            if refusal.rule in STALLS:
                raise Stalled(refusal.message) from refusal
            raise
        if isinstance(command, c.CloseBetting):
            assert state.shoe is not None
            self._coup_start = (state.shoe.position, state.banker, state.bank)
        return str(type(command).__struct_config__.tag)

    def _execute(self, command: c.TableCommand) -> None:
        self.table.execute(command, self.cards)
        self.table.collect_events()

    def _pay(self, command: c.PayCoup) -> str:
        state = self.state
        coup, settlement = state.coup, state.settlement
        assert coup is not None and coup.outcomes is not None and settlement is not None
        assert state.shoe is not None
        start, banker, bank = self._coup_start
        covered, duel, end = state.covered, tuple(state.duel), state.shoe.position
        taille, number = state.taille, state.coup_number
        self._execute(command)
        self.records.append(CoupRecord(
            taille=taille, number=number, banker=banker, bank=bank, start=start, end=end,
            outcomes=dict(coup.outcomes), settlement=settlement, covered=covered, duel=duel,
            taille_over=state.phase in (Phase.TAILLE_OVER, Phase.NO_SHOE),
        ))
        return "pay"


# --- scripted coups on a physical shoe --------------------------------------------------


def physical_table(
    variant: Variant | str,
    players: Mapping[str, int],
    *,
    sides: Mapping[str, Side] | None = None,
    standing: Collection[str] = (),
    **overrides: Any,
) -> TableState:
    """A table whose croupier records the cards of a physical shoe, ready for the bank or the
    bets. Seats in the order given; by default no burn and no cut card."""
    settings = TableSettings.default(
        variant, **{"burn": "none", "cut_card_from_end": 0, **overrides}
    )
    state = TableState(settings=settings)
    for player, chips in players.items():
        state.seat(player, chips, (sides or {}).get(player), player in standing)
    state.shuffle(decks=settings.decks, algorithm="", commitment="", physical=True)
    state.cut(CROUPIER, 1)
    return state


def play_coup(
    state: TableState,
    cards: Sequence[str],
    draws: Mapping[Side, bool] | None = None,
    *,
    pay: bool = True,
    show_down: bool = False,
) -> dict[Side, Outcome]:
    """Close betting, then play one coup with exactly `cards`, in the order the coup asks for
    them. A hand draws as `draws` says where given, else by the default policy; an à deux
    tableaux banker offers a card, or with `show_down` shows his first two cards. With `pay`,
    pay every payout and close the coup. The outcomes."""
    state.close_betting()
    shoe: Iterator[str] = iter(cards)
    outcomes: dict[Side, Outcome] | None = None
    while outcomes is None:
        action = state.legal_actions()[0]
        match Step(action.step):
            case Step.DEAL:
                state.deal(card(next(shoe)))
            case Step.SHOW_NATURALS:
                state.show_naturals()
            case Step.SETTLE:
                outcomes = state.settle()
            case Step.OFFER | Step.SHOW_DOWN:
                assert action.actor is not None
                if show_down:
                    state.show_down(action.actor)
                else:
                    state.offer_card(action.actor)
            case Step.DRAW | Step.STAND:
                side = action.side
                assert side is not None and action.actor is not None
                draw = (draws or {}).get(side)
                if draw is None:
                    draw = default_draw(state, side)
                state.decide(action.actor, side, draw)
    leftover = list(shoe)
    assert not leftover, f"cards not dealt: {leftover}"
    if pay:
        assert state.settlement is not None
        for payout in state.settlement.payouts:
            state.pay(payout)
        state.close_coup()
    return outcomes
