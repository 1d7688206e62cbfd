"""Whose move a table awaits (`domain.table.room.person_awaited`) when the bots leave people's
seats alone (`domain.bots.next_command(people=...)`), and the house's move when a person's clock
runs out (`domain.table.defaults.clock_default`): never a move recorded as the person's."""

from __future__ import annotations

import random
import uuid

import msgspec
from hypothesis import example, given, settings
from hypothesis import strategies as st

from domain.bots import next_command
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import PassReason, bettor
from domain.table.defaults import (
    CLOCK,
    bank_deadline_command_id,
    bet_deadline_command_id,
    clock_default,
)
from domain.table.room import person_awaited
from domain.table.state import Phase
from domain.tournament.base import TournamentBase
from domain.tournament.presets import PRESETS
from domain.tournament.records import Clock, Pause
from tests.unit.test_betting_order import play_until, rotating_table
from tests.unit.test_table_aggregate import SeededCards

ANN = frozenset({"ann"})


def free_table(variant: Variant = Variant.PUNTO_BANCO,
               name: str = "") -> tuple[Table, SeededCards]:
    """A table betting when they like, ann, bob and cy seated (its shoes follow from `name`)."""
    settings = TableSettings.default(variant, min_stake=10, max_stake=500)
    table = Table(name=name or f"t-{uuid.uuid4()}", settings=settings, tournament=None,
                  actor="@organiser", command_id="open")
    cards = SeededCards()
    sides = table.state.rules.tableaux if table.state.rules.seats_on_sides else (None,)
    for n, player in enumerate(("ann", "bob", "cy")):
        table.execute(c.SeatPlayer(command_id=f"seat-{player}", player=player, chips=1000,
                                   side=sides[n % len(sides)]), cards)
    return table, cards


def house_move(table: Table, people: frozenset[str] = ANN, seed: int = 1) -> c.TableCommand:
    return next_command(table.state, random.Random(seed), lambda label: label, people=people)


def test_at_a_person_s_turn_to_bet_the_table_awaits_them_and_the_bots_do_not_bet() -> None:
    table, _ = rotating_table(players=3)
    assert bettor(table.state) == "ann"
    move = house_move(table)
    assert isinstance(move, c.PassBetTurn) and move.player == "ann"
    assert person_awaited(move, table.state, ANN) == "ann"
    assert person_awaited(house_move(table, frozenset()), table.state, frozenset()) is None


def test_a_person_s_clock_passes_their_turn_as_the_house_s_move_with_reason_clock() -> None:
    table, cards = rotating_table(players=3)
    table_id = table.id
    default = clock_default(table.state, table_id, house_move(table), "ann")
    assert default == c.PassBetTurn(command_id=bet_deadline_command_id(table_id, 1, "ann"),
                                    actor=CLOCK, player="ann", coup=1, reason=PassReason.CLOCK)
    table.execute(default, cards)
    [passed] = [e for e in table.collect_events() if type(e).__name__ == "BetTurnPassed"]
    assert (passed.actor, passed.player, passed.reason) == (CLOCK, "ann", PassReason.CLOCK)
    assert bettor(table.state) == "bob"


def test_betting_when_they_like_the_bots_stake_and_betting_waits_for_the_person() -> None:
    table, cards = free_table()
    play_until(table, cards, lambda: table.state.phase is Phase.BETTING)
    for _ in range(3):
        move = house_move(table)
        if person_awaited(move, table.state, ANN) is not None:
            break
        assert move.actor != "ann"
        table.execute(move, cards)
    assert isinstance(move, c.CloseBetting)
    assert person_awaited(move, table.state, ANN) == "ann"
    assert {b.player for b in table.state.bets} == {"bob", "cy"}
    assert clock_default(table.state, table.id, move, "ann") == move  # closes without her bet


def test_the_shuffle_ritual_leaves_people_out() -> None:
    table, cards = free_table()
    table.execute(house_move(table), cards)  # shuffled
    for _ in range(3):
        move = house_move(table)
        if isinstance(move, c.BurnCard):
            break
        assert person_awaited(move, table.state, ANN) is None
        assert move.actor != "ann" and getattr(move, "player", None) != "ann"
        table.execute(move, cards)


def test_the_shoe_offered_to_a_person_passes_on_by_the_clock_once_only() -> None:
    """The shoe offered to ann: the house waits for her, and when her clock runs out it lets
    the shoe pass as the clock's; that default, late, finds nothing to decline once the
    offer is answered (or made after another coup)."""
    table, cards = free_table(Variant.CHEMIN_DE_FER)
    rng = random.Random(4)
    for n in range(400):
        if table.state.phase is Phase.NO_BANK and table.state.bank_offered_to == "ann":
            break
        move = next_command(table.state, rng, lambda label, n=n: f"{n}:{label}")
        table.execute(move, cards)
    assert table.state.bank_offered_to == "ann"
    move = house_move(table)
    assert person_awaited(move, table.state, ANN) == "ann"
    coup = table.state.coup_number
    default = clock_default(table.state, table.id, move, "ann")
    assert default == c.DeclineBank(command_id=bank_deadline_command_id(table.id, coup, "ann"),
                                    actor=CLOCK, player="ann", coup=coup)
    late = c.DeclineBank(command_id="late", actor=CLOCK, player="ann", coup=coup - 1)
    table.collect_events()
    table.execute(late, cards)  # an offer after another coup: nothing to decline
    assert table.collect_events() == [] and table.state.bank_offered_to == "ann"
    table.execute(default, cards)
    [declined] = table.collect_events()
    assert (type(declined).__name__, declined.actor, declined.player) == (
        "BankDeclined", CLOCK, "ann")
    assert table.state.bank_offered_to not in (None, "ann")
    table.execute(msgspec.structs.replace(default, command_id="again"), cards)
    assert table.collect_events() == []  # passed on already: recorded once


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), variant=st.sampled_from(
    [Variant.PUNTO_BANCO, Variant.CHEMIN_DE_FER, Variant.DEUX_TABLEAUX]))
@example(seed=185, variant=Variant.DEUX_TABLEAUX)  # a bank of one chip: the left half is none
def test_the_house_never_makes_a_person_s_move(seed: int, variant: Variant) -> None:
    """Whatever the table and the dealing, a move the house sends is never one the person
    makes: either it is awaited of them, or it does not act for their seat."""
    table, cards = free_table(variant, f"t-{seed}")
    rng = random.Random(seed)
    for n in range(300):
        move = next_command(table.state, rng, lambda label, n=n: f"{n}:{label}", people=ANN)
        person = person_awaited(move, table.state, ANN)
        if person is not None:
            default = clock_default(table.state, table.id, move, person)
            if default is None:  # nobody but ann could punt: the table sits the coup out
                assert move == c.CloseBetting(command_id=move.command_id)
                break
            move = default
        assert move.actor != "ann"
        table.execute(move, cards)
    mine = [e for e in table.collect_events() if getattr(e, "actor", None) == "ann"]
    assert mine == []


def test_a_pause_stops_the_clocks_of_play() -> None:
    """Play time between two instants leaves out the pauses that fall within them, a pause
    still lasting included."""
    state = TournamentBase(name="t", settings=PRESETS["punto-banco-heats"])
    state.pauses = [Pause(at=100.0, until=130.0), Pause(at=200.0)]
    assert state.played(90.0, 150.0) == 30.0  # 10 s before the pause, 20 s after
    assert state.played(110.0, 120.0) == 0.0  # within the pause
    assert state.played(150.0, 250.0) == 50.0  # the second pause still lasts
    assert state.played(300.0, 250.0) == 0.0


def test_a_clock_started_before_the_round_runs_from_the_round_s_start() -> None:
    """A turn that began as the table ended the last round's coups (refused until the next
    round starts) has its whole time from the next round's start, a pause still stopping it."""
    state = TournamentBase(name="t", settings=PRESETS["punto-banco-heats"])
    state.clock = Clock(started_at=500.0)
    state.pauses = [Pause(at=510.0, until=520.0)]
    assert state.played(100.0, 530.0) == 20.0  # 10 s before the pause, 10 s after
    assert state.played(505.0, 530.0) == 15.0  # begun within the round: from its start
