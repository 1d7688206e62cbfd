"""What sitting out costs (`TableSettings.sitting_out`, set by a tournament's format): a turn
to bet that the bet clock passes takes the round's minimum stake from its player for the house,
recorded as the house's act (`SittingOutCharged`, by the clock's actor), never as a bet in the
player's name; a player's own pass, or a format that leaves it free, costs nothing. The issue:
in punto-banco-eight's final three humans who never bet finished first and joint second."""

from __future__ import annotations

import msgspec
import pytest

from domain.errors import RuleViolation
from domain.game.settings import BettingOrder, SittingOut, TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import PassReason, bettor
from domain.tournament.presets import preset
from tests.unit.test_betting_order import CLOCK, rotating_table

MINIMUM = 10  # rotating_table's minimum stake


def charging(table: Table) -> Table:
    table.state.settings = msgspec.structs.replace(table.state.settings,
                                                   sitting_out=SittingOut.MIN_STAKE)
    return table


def recorded(table: Table) -> list[object]:
    """The events of the last commands but the next turn's clock (`BetTurnBegan`)."""
    return [e for e in table.collect_events() if type(e).__name__ != "BetTurnBegan"]


def kinds(table: Table) -> list[str]:
    return [type(e).__name__ for e in recorded(table)]


def clock_pass(player: str) -> c.PassBetTurn:
    return c.PassBetTurn(command_id=f"clock-{player}", actor=CLOCK, player=player, coup=1,
                         reason=PassReason.CLOCK)


def test_a_turn_the_clock_passes_costs_the_minimum_stake_taken_by_the_house() -> None:
    table, cards = rotating_table(seconds=30)
    charging(table)
    table.collect_events()
    assert bettor(table.state) == "ann"
    table.execute(clock_pass("ann"), cards)
    passed, charged = recorded(table)
    assert type(passed).__name__ == "BetTurnPassed" and passed.reason is PassReason.CLOCK
    assert isinstance(charged, Table.SittingOutCharged)
    assert (charged.player, charged.amount, charged.actor, charged.coup) == (
        "ann", MINIMUM, CLOCK, 1)
    state = table.state
    assert state.seat_of("ann").chips == 1000 - MINIMUM and state.house_result == MINIMUM
    assert state.chips_accounted() and not state.bets  # no bet in ann's name


def test_a_player_s_own_pass_and_a_free_format_cost_nothing() -> None:
    table, cards = rotating_table(seconds=30)
    charging(table)
    table.collect_events()
    table.execute(c.PassBetTurn(command_id="pass-ann", actor="ann", player="ann"), cards)
    assert kinds(table) == ["BetTurnPassed"]
    free, cards = rotating_table(seconds=30)
    free.collect_events()
    free.execute(clock_pass("ann"), cards)
    assert kinds(free) == ["BetTurnPassed"]
    assert free.state.seat_of("ann").chips == 1000 and free.state.house_result == 0


def test_the_charge_takes_no_more_than_the_chips_the_player_has_free() -> None:
    table, cards = rotating_table(seconds=30)
    charging(table)
    table.execute(c.AdjustChips(command_id="short", player="ann", delta=-996, reason="test"),
                  cards)
    table.collect_events()
    table.execute(clock_pass("ann"), cards)
    charged = recorded(table)[-1]
    assert isinstance(charged, Table.SittingOutCharged) and charged.amount == 4
    assert table.state.seat_of("ann").chips == 0 and table.state.chips_accounted()


def test_sitting_out_costs_only_where_players_bet_in_turn() -> None:
    with pytest.raises(RuleViolation) as refused:
        TableSettings.default(Variant.PUNTO_BANCO, sitting_out=SittingOut.MIN_STAKE)
    assert refused.value.rule == "sitting-out-without-turns"
    TableSettings.default(Variant.PUNTO_BANCO, sitting_out=SittingOut.MIN_STAKE,
                          betting_order=BettingOrder.ROTATING)


def test_tables_opened_before_the_setting_encode_as_they_did() -> None:
    settings = TableSettings.default(Variant.PUNTO_BANCO)
    assert b"sitting_out" not in msgspec.json.encode(settings)
    assert settings.sitting_out_cost == 0


def test_punto_banco_eight_makes_sitting_out_cost_the_minimum_at_every_table() -> None:
    eight = preset("punto-banco-eight")
    assert eight.sitting_out is SittingOut.MIN_STAKE
    table = eight.table_settings()
    assert table.sitting_out is SittingOut.MIN_STAKE and table.sitting_out_cost == 100
