"""The state of a table and what reading it says: the one set of fields every part of the table's
steps (`domain.table.seats`, `domain.table.taille`, `domain.table.bank_rotation`,
`domain.table.stakes`, `domain.table.coup_flow`) works on, the seats and the order of play, the
chips committed, the phase guard, and the variant's rules (`domain.game.variants`) the parts ask.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec

from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.game import coverage
from domain.game.cards import Card
from domain.game.coup import Coup, Side
from domain.game.payouts import Bet, Settlement
from domain.game.settings import TableSettings, Variant
from domain.game.shoe import Shoe
from domain.game.variants import RULES, VariantRules


class Phase(StrEnum):
    NO_SHOE = "no-shoe"
    SHUFFLED = "shuffled"
    BURNING = "burning"
    NO_BANK = "no-bank"
    BETTING = "betting"
    PLAYING = "playing"
    SETTLED = "settled"
    TAILLE_OVER = "taille-over"


BETTING, PLAYING, SETTLED = Phase.BETTING, Phase.PLAYING, Phase.SETTLED
"""A coup's phases, read once: reading a member off an enum class runs its metaclass's
attribute hook every time (docs/architecture.md), and every step of a coup asks its phase."""


class Seat(msgspec.Struct, kw_only=True):
    """A player at the table. `side`: à deux tableaux, the tableau the seat is on."""

    player: str
    chips: int
    side: Side | None = None
    standing: bool = False


class ShoeState(msgspec.Struct, kw_only=True):
    """The shoe of the current taille as the public record knows it (never the seed)."""

    decks: int
    algorithm: str = ""
    commitment: str = ""
    contributions: list[str] = msgspec.field(default_factory=list)
    cut: int = 0
    physical: bool = False
    burned: list[Card] = msgspec.field(default_factory=list)
    burns_due: int | None = None
    dealt: list[Card] = msgspec.field(default_factory=list)
    cut_card_at: int | None = None
    cut_card_out: bool = False
    last_coup: bool = False

    @property
    def position(self) -> int:
        """Cards out of the shoe so far, burned ones included."""
        return len(self.burned) + len(self.dealt)

    @property
    def remaining(self) -> int:
        return self.decks * 52 - self.position

    def public(self) -> Shoe:
        return Shoe(algorithm=self.algorithm, decks=self.decks, commitment=self.commitment,
                    contributions=tuple(self.contributions), cut=self.cut)


class BetTurns(msgspec.Struct, kw_only=True):
    """The players who had their turn to bet on coup `coup`."""

    coup: int = 0
    taken: list[str] = msgspec.field(default_factory=list)

    def taken_for(self, coup: int) -> list[str]:
        return self.taken if self.coup == coup else []

    def take(self, coup: int, player: str) -> None:
        if self.coup != coup:
            self.coup, self.taken = coup, []
        self.taken.append(player)


class TableBase(msgspec.Struct, kw_only=True):
    """A table's fields, and what they say."""

    settings: TableSettings
    seats: list[Seat] = msgspec.field(default_factory=list)
    phase: Phase = Phase.NO_SHOE
    shoe: ShoeState | None = None
    taille: int = 0
    coup_number: int = 0
    coup: Coup | None = None
    banker: str | None = None
    bank: int = 0
    bank_offered_to: str | None = None
    bank_required: int = 0
    bank_declined_by: list[str] = msgspec.field(default_factory=list)
    passed_hand_returns_to: str | None = None
    banco_suivi: str | None = None
    bancos_in_a_row: int = 0  # à deux tableaux: bancos against this bank, two at most (000)
    hand_holders: dict[Side, str] = msgspec.field(default_factory=dict)
    duel: list[str] = msgspec.field(default_factory=list)
    bets: list[Bet] = msgspec.field(default_factory=list)
    stakes: list[coverage.Stake] = msgspec.field(default_factory=list)
    banco_calls: list[str] = msgspec.field(default_factory=list)
    tie_replay: bool = False  # chemin de fer: the stakes of a tied coup play it again
    covered: coverage.Coverage | None = None
    settlement: Settlement | None = None
    payouts_made: int = 0
    house_result: int = 0
    commission_total: int = 0
    commission_box: dict[str, int] = msgspec.field(default_factory=dict)  # payouts.BOX_UNITS
    chips_in: int = 0  # brought to the table: seats and adjustments
    chips_out: int = 0  # carried away by players who left
    bet_turns: BetTurns = msgspec.field(default_factory=BetTurns)  # who had their turn to bet
    coups_bet: dict[str, int] = msgspec.field(default_factory=dict)  # `CoupFlow.count_bets`
    turn_seconds: int = 0  # the bet clock of the turn under way (its BetTurnBegan's)
    offer_clock: tuple[int, str, int] | None = None  # the shoe's last offer to a person on a
    # clock: after which coup, to whom, its seconds (its DecisionClockStarted's)

    @property
    def chips_at_table(self) -> int:
        """The chips on the seats and in the bank."""
        return sum(s.chips for s in self.seats) + self.bank

    def holding(self, player: str) -> int:
        """A player's chips at this table, their bank included while they hold it."""
        return self.seat_of(player).chips + (self.bank if player == self.banker else 0)

    def chips_accounted(self) -> bool:
        """Every chip brought to the table is at a seat, in the bank, the house's, or gone
        with a player who left."""
        return self.chips_in == self.chips_at_table + self.house_result + self.chips_out

    @property
    def variant(self) -> Variant:
        return self.settings.variant

    @property
    def rules(self) -> VariantRules:
        return RULES[self.settings.variant]

    @property
    def banks_with_player(self) -> bool:
        return self.rules.banking.has_bank

    @property
    def house_banks(self) -> bool:
        """Bets go on the house's spots (punto banco, the family game's side bets)."""
        return self.settings.variant.house_banks

    def seat_of(self, player: str) -> Seat:
        for seat in self.seats:
            if seat.player == player:
                return seat
        raise NotFound(f"{player} is not at this table", rule="unknown-player")

    def players(self) -> list[str]:
        return [s.player for s in self.seats]

    def seated(self) -> list[str]:
        return [s.player for s in self.seats if not s.standing]

    def rotation_after(self, player: str) -> list[str]:
        """Seated players in the direction of play from the one after `player`."""
        seated = self.seated()
        if player not in seated:
            return seated
        i = seated.index(player)
        return seated[i + 1:] + seated[:i]

    def punter_order(self) -> list[str]:
        """Priority among punters: seat order from the banker's right, standing punters last."""
        first = self.rotation_after(self.banker) if self.banker else self.seated()
        return [p for p in first if p != self.banker] + [
            s.player for s in self.seats if s.standing
        ]

    def committed(self, player: str) -> int:
        """Chips a player has at risk in the coup being staked or played (a duellist's stake
        is at risk once betting has closed)."""
        dueling = player in self.duel and self.phase in (PLAYING, SETTLED)
        return sum(b.amount for b in self.bets if b.player == player) + sum(
            s.amount for s in self.stakes if s.player == player
        ) + (self.settings.duel_stake if dueling else 0)

    def hand_holder(self, side: Side) -> str | None:
        """Who decides for a tableau in the coup being played."""
        return self.rules.banking.hand_holder(self, side)

    def cards_per_coup(self) -> int:
        return 3 * (len(self.rules.tableaux) + 1)

    def require(self, *phases: Phase, doing: str) -> None:
        if self.phase not in phases:
            wanted = " or ".join(p.value for p in phases)
            raise OutOfTurn(f"cannot {doing} now: the table is at {self.phase.value}, "
                            f"not {wanted}", rule="out-of-turn")

    def _withdraw_from_tie_replay(self, player: str | None) -> None:
        """Whoever leaves a tied coup before it is played again takes their stake and banco
        back (the tie moved nothing); with nothing left staked, or when the banker retires
        or the taille ends (`player` None), the replay is void and the table bets afresh."""
        if not self.tie_replay:
            return
        self.stakes = [s for s in self.stakes if player is not None and s.player != player]
        self.banco_calls = [p for p in self.banco_calls if player is not None and p != player]
        self.tie_replay = bool(self.stakes or self.banco_calls)

    def _refuse_during_tie_replay(self) -> None:
        if self.tie_replay:
            raise RuleViolation("after a tie the coup is played again with the same stakes: "
                                "close betting", rule="tie-replay")

    def bank_back_to_banker(self) -> None:
        if self.banker is not None:
            self.seat_of(self.banker).chips += self.bank
        self.banker, self.bank = None, 0

    def _shoe_with_card(self, card: Card) -> ShoeState:
        shoe = self.shoe
        assert shoe is not None
        if shoe.remaining <= 0:
            raise RuleViolation("the shoe is empty", rule="shoe-empty")
        if shoe.physical and (shoe.burned + shoe.dealt).count(card) >= shoe.decks:
            raise RuleViolation(f"a {shoe.decks}-deck shoe holds no further {card}",
                                rule="card-count")
        return shoe

    def _end_taille(self) -> None:
        assert self.shoe is not None
        self.rules.passing.taille_ended(self)
        self.phase = Phase.NO_SHOE if self.shoe.physical else Phase.TAILLE_OVER
