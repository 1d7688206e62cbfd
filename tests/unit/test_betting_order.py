"""A rotating betting order and the bet clock (`domain.table.betting_order`): the first bettor moves
one seat to the left each coup and the others follow in seat order; a bet or a pass out of
turn is refused by name and offered to nobody else; betting closes once every turn was had;
a turn whose clock runs out passes with no bet (a fake clock fires the deadlines the table
asks for, as the workers do with the real one); formats and tables refuse a clock or an
order they cannot keep; the tournament sends the round's clock and a secret bet's turn."""

from __future__ import annotations

import copy
import random
import uuid
from typing import Any

import msgspec
import pytest

from domain.bots import next_command
from domain.errors import DomainError, OutOfTurn, RuleViolation
from domain.game.payouts import Spot
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import (
    BettingOrder,
    PassReason,
    bettor,
    check_turn_to_come,
    turn_order,
)
from domain.table.state import Action, Phase
from domain.tournament import commands as tc
from domain.tournament.aggregate import Tournament
from domain.tournament.presets import PRESETS, preset
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import secret_commitment
from domain.tournament.table_orders import table_orders
from infra.store.outbox import BetDeadline, follow_ups
from tests.unit.test_table_aggregate import SeededCards

PLAYERS = ("ann", "bob", "cy", "dee")
CLOCK = "@deadline"


def rotating_table(seconds: int = 0, players: int = 3) -> tuple[Table, SeededCards]:
    """A punto banco table betting in turn, shuffled, cut and burned: coup 1's bets open."""
    settings = TableSettings.default(Variant.PUNTO_BANCO, betting_order=BettingOrder.ROTATING,
                                     bet_seconds=seconds, min_stake=10, max_stake=500)
    table = Table(name=f"t-{uuid.uuid4()}", settings=settings, tournament=None, actor="@organiser",
                  command_id="open")
    cards = SeededCards()
    for player in PLAYERS[:players]:
        table.execute(c.SeatPlayer(command_id=f"seat-{player}", player=player, chips=1000),
                      cards)
    play_until(table, cards, lambda: table.state.phase is Phase.BETTING)
    return table, cards


def play_until(table: Table, cards: SeededCards, done: Any, seed: int = 1) -> None:
    rng = random.Random(seed)
    for n in range(2000):
        if done():
            return
        table.execute(next_command(table.state, rng,
                                   lambda label, n=n: f"{table.version}:{n}:{label}"), cards)
    raise AssertionError("the bots never got there")


def bet(player: str, amount: int = 10, key: str = "") -> c.PlaceBet:
    return c.PlaceBet(command_id=f"bet-{player}{key}", actor=player, player=player,
                      spot=Spot.BANKER, amount=amount)


_RECORDED: dict[uuid.UUID, list[Any]] = {}


def events(table: Table, kind: str | None = None) -> list[Any]:
    """The table's events of `kind` (None: all) recorded so far."""
    recorded = _RECORDED.setdefault(table.id, [])
    recorded += table.collect_events()
    return [e for e in recorded if kind is None or type(e).__name__ == kind]


def test_the_order_starts_one_seat_further_left_each_coup() -> None:
    assert turn_order(["a", "b", "c"], 1) == ["a", "b", "c"]
    assert turn_order(["a", "b", "c"], 2) == ["b", "c", "a"]
    assert turn_order(["a", "b", "c"], 3) == ["c", "a", "b"]
    assert turn_order(["a", "b", "c"], 4) == ["a", "b", "c"]
    assert turn_order([], 5) == []

    table, cards = rotating_table()
    play_until(table, cards, lambda: table.state.coup_number == 7)
    began = events(table, "BetTurnBegan")
    bets = events(table, "BetPlaced")
    for coup in range(1, 8):
        turns = [e.player for e in began if e.coup == coup]
        assert turns == turn_order(["ann", "bob", "cy"], coup), coup
        assert [e.player for e in bets if e.coup == coup] == turns  # the bots bet in turn
    assert {e.seconds for e in began} == {0}


def test_a_bet_out_of_turn_is_refused_by_name_and_not_offered() -> None:
    table, cards = rotating_table()
    assert bettor(table.state) == "ann"
    before = table.version
    with pytest.raises(OutOfTurn) as refused:
        table.execute(bet("bob"), cards)
    assert refused.value.rule == "not-your-turn"
    assert "ann's turn" in refused.value.message
    assert table.version == before and not table.state.bets

    offered = table.state.legal_actions()
    assert Action("bet", "ann") in offered and Action("pass-bet", "ann") in offered
    assert not [a for a in offered if a.step == "bet" and a.actor != "ann"]
    assert "close-betting" not in {a.step for a in offered}

    table.execute(bet("ann"), cards)
    assert bettor(table.state) == "bob"
    with pytest.raises(OutOfTurn) as twice:
        table.execute(bet("ann", key="again"), cards)
    assert twice.value.rule == "not-your-turn"
    with pytest.raises(OutOfTurn) as early:
        table.execute(c.CloseBetting(command_id="close"), cards)
    assert early.value.rule == "bet-turns-pending"
    assert "bob" in early.value.message


def test_a_player_passes_their_own_turn_and_betting_closes_after_the_last() -> None:
    table, cards = rotating_table()
    table.execute(c.PassBetTurn(command_id="pass-ann", actor="ann", player="ann"), cards)
    with pytest.raises(RuleViolation) as claimed:
        table.execute(c.PassBetTurn(command_id="x", actor="bob", player="bob",
                                    reason=PassReason.CLOCK), cards)
    assert claimed.value.rule == "pass-reason"
    with pytest.raises(OutOfTurn) as other:
        table.execute(c.PassBetTurn(command_id="y", actor="cy", player="cy"), cards)
    assert other.value.rule == "not-your-turn"
    table.execute(bet("bob"), cards)
    table.execute(c.PassBetTurn(command_id="pass-cy", actor="cy", player="cy", coup=1), cards)
    assert bettor(table.state) is None
    table.execute(c.CloseBetting(command_id="close"), cards)
    assert table.state.phase is Phase.PLAYING
    passed = events(table, "BetTurnPassed")
    assert [(e.coup, e.player, e.reason) for e in passed] == [
        (1, "ann", PassReason.PASS), (1, "cy", PassReason.PASS)]


def test_a_free_order_has_no_turns() -> None:
    settings = TableSettings.default(Variant.PUNTO_BANCO)
    table = Table(name=f"t-{uuid.uuid4()}", settings=settings, tournament=None, actor="@o",
                  command_id="open")
    cards = SeededCards()
    for player in PLAYERS[:2]:
        table.execute(c.SeatPlayer(command_id=f"seat-{player}", player=player, chips=100), cards)
    play_until(table, cards, lambda: table.state.phase is Phase.BETTING)
    table.execute(bet("bob"), cards)
    table.execute(bet("ann"), cards)
    assert Action("bet", None) in table.state.legal_actions()
    with pytest.raises(RuleViolation) as refused:
        table.execute(c.PassBetTurn(command_id="p", actor="ann", player="ann"), cards)
    assert refused.value.rule == "no-betting-order"
    assert not events(table, "BetTurnBegan")


class FakeClock:
    """The workers' deadlines on a clock the test moves: each command's `BetDeadline`s are
    due `seconds` after it; when due, the clock passes the turn as `expire_bet_turn` does."""

    def __init__(self, table: Table, cards: SeededCards) -> None:
        self.table, self.cards, self.now = table, cards, 0.0
        self.due: list[tuple[float, BetDeadline]] = []
        self.fired: list[tuple[float, int]] = []  # (when, events recorded)
        self.collect()

    def execute(self, command: c.TableCommand) -> None:
        self.table.execute(command, self.cards)
        self.collect()

    def collect(self) -> None:
        self.due += [(self.now + e.seconds, e) for e in follow_ups(self.table)
                     if isinstance(e, BetDeadline)]

    def advance(self, seconds: float) -> None:
        self.now += seconds
        while ready := [d for d in self.due if d[0] <= self.now]:
            when, deadline = min(ready, key=lambda d: d[0])
            self.due.remove((when, deadline))
            version = self.table.version
            self.execute(c.PassBetTurn(
                command_id=f"bet-deadline:{deadline.coup}:{deadline.player}:{when}",
                actor=CLOCK, player=deadline.player, coup=deadline.coup,
                reason=PassReason.CLOCK))
            self.fired.append((when, self.table.version - version))


def test_the_clock_passes_a_turn_only_once_its_time_is_up() -> None:
    table, cards = rotating_table(seconds=20)
    clock = FakeClock(table, cards)
    assert [d.player for _, d in clock.due] == ["ann"]
    assert events(table, "BetTurnBegan")[-1].seconds == 20

    clock.advance(19.5)
    assert bettor(table.state) == "ann" and not clock.fired
    clock.advance(0.5)
    assert bettor(table.state) == "bob"
    [passed] = events(table, "BetTurnPassed")
    assert (passed.player, passed.reason, passed.actor) == ("ann", PassReason.CLOCK, CLOCK)

    clock.advance(5)
    clock.execute(bet("bob"))  # in time: bob's deadline will find nothing to do
    clock.advance(15)
    assert bettor(table.state) == "cy"
    assert clock.fired[-1] == (40.0, 0)
    clock.advance(20)  # cy lets the clock run out too
    assert bettor(table.state) is None
    assert [(e.player, e.reason) for e in events(table, "BetTurnPassed")] == [
        ("ann", PassReason.CLOCK), ("cy", PassReason.CLOCK)]
    assert [b.player for b in table.state.bets] == ["bob"]
    clock.execute(c.CloseBetting(command_id="close"))
    assert not [e for e in follow_ups(table) if isinstance(e, BetDeadline)]


def test_a_deadline_for_a_turn_gone_by_records_nothing() -> None:
    table, cards = rotating_table(seconds=20)
    table.execute(bet("ann"), cards)
    version = table.version
    table.execute(c.PassBetTurn(command_id="late", actor=CLOCK, player="ann", coup=1,
                                reason=PassReason.CLOCK), cards)
    table.execute(c.PassBetTurn(command_id="old", actor=CLOCK, player="bob", coup=0,
                                reason=PassReason.CLOCK), cards)
    assert table.version == version and bettor(table.state) == "bob"


def test_the_record_says_whose_turn_it_was_and_replays_to_the_same_table() -> None:
    table, cards = rotating_table(seconds=5, players=4)
    play_until(table, cards, lambda: table.state.coup_number == 3)
    recorded = events(table)
    replayed = None
    for event in recorded:
        replayed = event.mutate(replayed)
    assert replayed is not None and replayed.state == table.state

    began = next(e for e in recorded if type(e).__name__ == "BetTurnBegan")
    forged = copy.copy(began)
    object.__setattr__(forged, "player", "bob")  # a record that lies about whose turn it was
    replay = None
    for event in recorded[:recorded.index(began)]:
        replay = event.mutate(replay)
    with pytest.raises(DomainError) as caught:
        forged.mutate(replay)
    assert caught.value.rule == "event-mismatch"


def test_a_table_refuses_a_clock_or_an_order_it_cannot_keep() -> None:
    cases = [
        ({"betting_order": "rotating", "bet_seconds": -1}, "settings-bet-clock"),
        ({"betting_order": "rotating", "bet_seconds": 3601}, "settings-bet-clock"),
        ({"bet_seconds": 20}, "bet-clock-without-turns"),
    ]
    for overrides, rule in cases:
        with pytest.raises(RuleViolation) as refused:
            TableSettings.default(Variant.PUNTO_BANCO, **overrides)
        assert refused.value.rule == rule, overrides
    for variant in (Variant.CHEMIN_DE_FER, Variant.DEUX_TABLEAUX):
        with pytest.raises(RuleViolation) as refused:
            TableSettings.default(variant, betting_order="rotating")
        assert refused.value.rule == "settings-betting-order"
    assert TableSettings.default(Variant.SIMPLIFIED, betting_order="rotating",
                                 bet_seconds=10).bet_seconds == 10


def a_format(**overrides: Any) -> TournamentSettings:
    base: dict[str, Any] = {
        "variant": Variant.PUNTO_BANCO, "seats_per_table": 4, "starting_chips": 1000,
        "min_stake": 10, "max_stake": 100, "coups_per_round": 2, "prizes": (10000,),
        "betting_order": "rotating", "bet_seconds": 20,
        "stages": ({"name": "heats", "rounds": 1, "advance": {"overall": 2}},
                   {"name": "final", "rounds": 1, "bet_seconds": 10, "secret_bet": True})}
    return msgspec.convert({**base, **overrides}, TournamentSettings).check()


def test_a_format_s_betting_rules_are_checked_at_creation_with_the_stage_named() -> None:
    plan = a_format().plan()
    assert [stage.bet_seconds for stage in plan] == [20, 10]
    with pytest.raises(RuleViolation) as free:
        a_format(betting_order="free", bet_seconds=0)
    assert free.value.rule == "bet-clock-without-turns"
    assert "stage 2 (final)" in free.value.message
    with pytest.raises(RuleViolation) as long:
        a_format(bet_seconds=4000)
    assert long.value.rule == "settings-bet-clock" and "stage 1 (heats)" in long.value.message
    with pytest.raises(RuleViolation) as cercle:
        a_format(variant="chemin-de-fer", bet_seconds=0, stages=())
    assert cercle.value.rule == "settings-betting-order"
    with pytest.raises(msgspec.ValidationError):
        a_format(betting_order="clockwise")


def test_the_presets_bet_in_turn_where_the_casinos_do() -> None:
    heats = PRESETS["punto-banco-heats"]
    assert (heats.betting_order, heats.bet_seconds) == (BettingOrder.ROTATING, 20)
    tables = heats.table_settings()
    assert (tables.betting_order, tables.bet_seconds) == (BettingOrder.ROTATING, 20)
    freeze = preset("chemin-de-fer-freeze-out").table_settings()
    assert (freeze.betting_order, freeze.bet_seconds) == (BettingOrder.FREE, 0)


def test_each_round_sends_its_clock_and_a_secret_bet_uses_the_turn() -> None:
    final = {"name": "final", "rounds": 1, "secret_bet": True}
    t = Tournament(name="cup", settings=a_format(stages=(final,)), actor="@organiser",
                   command_id="create")
    seed = bytes(32)
    for i in range(4):
        t.execute(tc.RegisterPlayer(player=f"p{i}", actor="@organiser", command_id=f"r{i}"),
                  lambda: seed)
    t.execute(tc.DrawSeating(actor="@organiser", command_id="draw"), lambda: seed)
    t.execute(tc.StartRound(actor="@director", command_id="round-1"), lambda: seed)
    started = t.collect_events()[-1]
    [order] = table_orders(t, started)
    assert isinstance(order.command, c.ChangeLimits)
    assert (order.command.min_stake, order.command.bet_seconds) == (10, 20)

    player = "p0"
    table = t.state.entrant(player).table or ""
    t.execute(tc.PlaceSecretBet(player=player, table=table, coup=3,
                                commitment=secret_commitment("banker", 10, "ab" * 16),
                                actor=player, command_id="secret"), lambda: seed)
    placed = t.collect_events()[-1]
    [turn] = table_orders(t, placed)
    assert turn.table == table
    assert turn.command == c.PassBetTurn(
        command_id=f"{t.id}/secret/secret-turn/{player}", actor="@tournament", player=player,
        coup=3, reason=PassReason.SECRET_BET)


def test_a_changed_clock_times_the_next_turns() -> None:
    table, cards = rotating_table(seconds=20)
    table.execute(c.ChangeLimits(command_id="lim", actor="@director", min_stake=20,
                                 max_stake=400, bet_seconds=5), cards)
    assert table.state.settings.bet_seconds == 5
    table.execute(bet("ann", 20), cards)
    assert events(table, "BetTurnBegan")[-1].seconds == 5
    table.execute(c.ChangeLimits(command_id="lim2", actor="@director", min_stake=20,
                                 max_stake=400), cards)
    assert table.state.settings.bet_seconds == 5
    with pytest.raises(RuleViolation) as refused:
        table.execute(c.ChangeLimits(command_id="lim3", actor="@director", min_stake=20,
                                     max_stake=400, bet_seconds=4000), cards)
    assert refused.value.rule == "settings-bet-clock"


def test_a_secret_bet_uses_its_player_s_turn_placed_at_it_or_before_never_after() -> None:
    table, cards = rotating_table()
    secret = "@tournament"
    table.execute(c.PassBetTurn(command_id="secret-cy", actor=secret, player="cy", coup=1,
                                reason=PassReason.SECRET_BET), cards)
    assert bettor(table.state) == "ann"  # ahead of cy's turn: the order skips cy
    table.execute(bet("ann"), cards)
    check_turn_to_come(table.state, "bob")
    with pytest.raises(OutOfTurn) as over:
        check_turn_to_come(table.state, "ann")  # the tournament's check before placing it
    assert over.value.rule == "not-your-turn"
    version = table.version
    table.execute(c.PassBetTurn(command_id="secret-ann", actor=secret, player="ann", coup=1,
                                reason=PassReason.SECRET_BET), cards)
    assert table.version == version  # a turn gone by is not used again
    table.execute(c.PassBetTurn(command_id="secret-bob", actor=secret, player="bob",
                                reason=PassReason.SECRET_BET), cards)  # in turn
    assert bettor(table.state) is None
    assert [(e.player, e.reason) for e in events(table, "BetTurnPassed")] == [
        ("cy", PassReason.SECRET_BET), ("bob", PassReason.SECRET_BET)]
    assert [e.player for e in events(table, "BetTurnBegan") if e.coup == 1] == ["ann", "bob"]
    with pytest.raises(RuleViolation) as own:
        table.execute(c.PassBetTurn(command_id="x", actor="cy", player="cy",
                                    reason=PassReason.SECRET_BET), cards)
    assert own.value.rule == "pass-reason"
    table.execute(c.CloseBetting(command_id="close"), cards)
    with pytest.raises(OutOfTurn) as dealing:
        check_turn_to_come(table.state, "cy")
    assert dealing.value.rule == "out-of-turn"
