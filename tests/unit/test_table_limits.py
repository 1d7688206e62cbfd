"""A table's stake limits change between coups (`ChangeLimits`, a tournament's rising limits):
from then on every stake is checked against the new limits; only an official changes them,
never during a coup, and only to limits a table can play with."""

from __future__ import annotations

import random

import msgspec
import pytest

from domain.bots import next_command
from domain.errors import OutOfTurn, RuleViolation
from domain.game.payouts import Spot
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.state import Phase
from tests.unit.test_table_aggregate import SeededCards


def betting_table() -> tuple[Table, SeededCards]:
    """A punto banco table at 100..3000, shuffled and cut, taking the first coup's bets."""
    settings = TableSettings.default(Variant.PUNTO_BANCO, min_stake=100, max_stake=3000)
    table = Table(name="t", settings=settings, tournament=None, actor="@organiser",
                  command_id="open")
    cards, rng = SeededCards(), random.Random(3)
    for i in range(2):
        table.execute(c.SeatPlayer(command_id=f"seat-{i}", player=f"p{i}", chips=10_000), cards)
    n = 0
    while table.state.phase is not Phase.BETTING:
        n += 1
        table.execute(next_command(table.state, rng, lambda label, n=n: f"{n}:{label}"), cards)
    assert not table.state.bets
    return table, cards


def bet(amount: int, n: int = 0) -> c.PlaceBet:
    return c.PlaceBet(command_id=f"bet-{n}-{amount}", actor="p0", player="p0",
                      spot=Spot.BANKER, amount=amount)


def raise_limits(actor: str = "@director", low: int = 200, high: int = 2000) -> c.ChangeLimits:
    return c.ChangeLimits(command_id=f"limits-{actor}-{low}-{high}", actor=actor,
                          min_stake=low, max_stake=high)


def test_stakes_outside_the_new_limits_are_refused_after_the_change_accepted_before() -> None:
    before, cards = betting_table()
    before.execute(bet(150), cards)
    before.execute(bet(2500, 1), cards)
    assert [b.amount for b in before.state.bets] == [150, 2500]

    after, cards = betting_table()
    after.execute(raise_limits(), cards)
    assert (after.state.settings.min_stake, after.state.settings.max_stake) == (200, 2000)
    for amount, limit in ((150, "minimum stake is 200"), (2500, "maximum stake is 2000")):
        with pytest.raises(RuleViolation) as refused:
            after.execute(bet(amount), cards)
        assert limit in refused.value.message
    after.execute(bet(200), cards)
    after.execute(bet(2000, 1), cards)
    assert [b.amount for b in after.state.bets] == [200, 2000]


def test_the_change_is_an_event_and_replays_to_the_same_limits() -> None:
    table, cards = betting_table()
    table.execute(raise_limits(), cards)
    events = table.collect_events()
    assert type(events[-1]).__name__ == "LimitsChanged"
    assert (events[-1].min_stake, events[-1].max_stake) == (200, 2000)
    replayed = None
    for event in events:
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Table)
    assert msgspec.to_builtins(replayed.state) == msgspec.to_builtins(table.state)


def test_a_player_may_not_change_the_limits() -> None:
    table, cards = betting_table()
    version = table.version
    with pytest.raises(OutOfTurn) as refused:
        table.execute(raise_limits(actor="p0"), cards)
    assert refused.value.rule == "official-step"
    assert table.version == version
    assert table.state.settings.min_stake == 100


def test_the_limits_do_not_change_during_a_coup() -> None:
    table, cards = betting_table()
    table.execute(bet(500), cards)
    table.execute(c.CloseBetting(command_id="close"), cards)
    with pytest.raises(OutOfTurn) as refused:
        table.execute(raise_limits(low=300), cards)
    assert refused.value.rule == "limits-mid-coup"
    assert table.state.settings.min_stake == 100


def test_a_stake_placed_before_the_change_stands_the_next_ones_follow_the_new_limits() -> None:
    table, cards = betting_table()
    table.execute(bet(150), cards)
    table.execute(raise_limits(), cards)
    with pytest.raises(RuleViolation):
        table.execute(bet(150, 1), cards)
    assert [b.amount for b in table.state.bets] == [150]


@pytest.mark.parametrize(("low", "high"), [(0, 100), (500, 200), (10**13, 0)])
def test_limits_no_table_can_play_with_are_refused(low: int, high: int) -> None:
    table, cards = betting_table()
    with pytest.raises(RuleViolation) as refused:
        table.execute(raise_limits(low=low, high=high), cards)
    assert refused.value.rule == "settings-stakes"
    assert table.state.settings.min_stake == 100
