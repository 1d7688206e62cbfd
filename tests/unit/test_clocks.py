"""The clocks a table starts (`domain.table.clocks`): a turn to bet records the seconds that
apply to it (the table's clock, else a person's from the room, a bot's none); a person's
decision on a hand records `DecisionClockStarted`, and so does the shoe offered to a person
(no hand); a bot's decision, and any decision at a table where no person sits, records no clock
event; the events replay and a forged one is refused."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import msgspec
import pytest

from domain.bots import next_command
from domain.errors import RuleViolation
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import bettor
from domain.table.room import FREE_ROOM, Room, seat_of
from tests.unit.test_betting_order import rotating_table
from tests.unit.test_table_aggregate import SeededCards

EVERYONE = frozenset({"ann", "bob", "cy"})


def kind(events: list[Any], name: str) -> list[Any]:
    return [e for e in events if type(e).__name__ == name]


@pytest.mark.parametrize(("table_seconds", "bob_s", "cy_s"), [(0, 45, 0), (20, 20, 20)])
def test_a_turn_to_bet_records_the_clock_that_applies(table_seconds: int, bob_s: int,
                                                      cy_s: int) -> None:
    """bob a person, cy a house bot: bob has the people's clock where the table sets none."""
    table, cards = rotating_table(seconds=table_seconds, players=3)
    table.collect_events()
    room = Room(people=frozenset({"ann", "bob"}), people_bet_seconds=45)
    for player in ("ann", "bob"):
        assert bettor(table.state) == player
        table.execute(c.PassBetTurn(command_id=f"pass-{player}", actor=player,
                                    player=player), cards, room)
    began = kind(table.collect_events(), "BetTurnBegan")
    assert [(e.player, e.seconds) for e in began] == [("bob", bob_s), ("cy", cy_s)]
    assert table.state.turn_seconds == cy_s


def play(room: Room, seed: int = 3, moves: int = 600) -> Table:
    """A chemin de fer table, decision clock 9 s, its seats' moves made by their own players."""
    settings = TableSettings.default(Variant.CHEMIN_DE_FER, min_stake=10, max_stake=500,
                                     decision_seconds=9)
    table = Table(name=f"clocks-{seed}", settings=settings, tournament=None,
                  actor="@organiser", command_id="open")
    cards, rng = SeededCards(), random.Random(seed)
    for player in sorted(EVERYONE):
        table.execute(c.SeatPlayer(command_id=f"seat-{player}", player=player, chips=1000),
                      cards, room)
    for n in range(moves):
        move = next_command(table.state, rng, lambda label, n=n: f"{n}:{label}")
        seat = seat_of(move, table.state)
        table.execute(move if seat is None else msgspec.structs.replace(move, actor=seat),
                      cards, room)
    return table


def test_a_person_s_decision_starts_a_clock_a_bot_s_none() -> None:
    people = play(Room(people=EVERYONE))
    events = people.collect_events()
    clocks = kind(events, "DecisionClockStarted")
    started = [e for e in clocks if e.side is not None]  # on a hand
    assert started and all(e.seconds == 9 for e in started)
    decided = kind(events, "ThirdCardAsked") + kind(events, "HandStood")
    assert {(e.coup, e.side) for e in started} >= {(e.coup, e.side) for e in decided}
    state = people.state
    awaited = (state.coup_number, state.coup.to_act() if state.coup is not None else None)
    for clock in started:  # each names the hand's holder, who then decides it himself
        decision = [e for e in decided if (e.coup, e.side) == (clock.coup, clock.side)]
        if not decision:  # the play stopped at this one
            assert (clock.coup, clock.side) == awaited
            continue
        assert [e.actor for e in decision] == [clock.player]

    bots = play(FREE_ROOM).collect_events()  # the same play, no person: no clock events
    assert kind(bots, "DecisionClockStarted") == []
    assert len(bots) == len(events) - len(clocks)


def test_the_shoe_offered_to_a_person_starts_a_clock_which_their_answer_ends() -> None:
    """Each offer of the shoe to a person records a clock (no hand) at the coup after which
    it is made; the next bank event is that person's taking it or letting it pass."""
    events = play(Room(people=EVERYONE)).collect_events()
    offers = [n for n, e in enumerate(events)
              if type(e).__name__ == "DecisionClockStarted" and e.side is None]
    assert len(offers) >= 2 and all(events[n].seconds == 9 for n in offers)
    for n in offers:
        clock = events[n]
        answer = next(e for e in events[n + 1:]
                      if type(e).__name__ in ("BankAwarded", "BankDeclined"))
        assert (answer.player, answer.actor) == (clock.player, clock.player)
    declined = kind(events, "BankDeclined")
    assert all(any(events[n].player == e.player for n in offers) for e in declined)


def test_clock_events_replay_and_a_forged_one_is_refused() -> None:
    table = play(Room(people=EVERYONE), moves=300)
    events = table.collect_events()
    replayed = None
    for event in events:
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Table)
    assert msgspec.to_builtins(replayed.state) == msgspec.to_builtins(table.state)

    at = next(n for n, e in enumerate(events) if type(e).__name__ == "DecisionClockStarted")
    rebuilt = None
    for event in events[:at]:
        rebuilt = event.mutate(rebuilt)
    clock = events[at]
    others = sorted(EVERYONE - {clock.player})
    forged = dataclasses.replace(clock, player=others[0])
    with pytest.raises(RuleViolation) as refused:
        forged.mutate(rebuilt)
    assert refused.value.rule == "event-mismatch"
