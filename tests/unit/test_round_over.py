"""A tournament's table plays its round's coups and no more: past the round's last coup a bet,
a stake, a banco or closing betting is refused (409 `round-over`, nothing recorded) until the
next round starts; the last coup follows from the round (its coups from the table's at its
first step, or, timed, the coup of the step under way only)."""

from __future__ import annotations

import msgspec
import pytest

from domain.errors import DomainError
from domain.game.coup import Side
from domain.game.payouts import Spot
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.room import FREE_ROOM, Room, require_room
from domain.table.state import Phase, TableState
from domain.tournament import stages
from domain.tournament.entrants import Entrant, Status
from domain.tournament.formats import Stage
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import TournamentState
from tests.unit.test_table_limits import bet, betting_table

TABLE = "cup-table-1"


def at_coup(closed: int) -> TableState:
    state = TableState(settings=TableSettings.default(Variant.CHEMIN_DE_FER))
    return msgspec.structs.replace(state, coup_number=closed, phase=Phase.BETTING)


PLAY = [c.PlaceBet(command_id="b", actor="ann", player="ann", spot=Spot.BANKER, amount=10),
        c.PlaceStake(command_id="s", actor="ann", player="ann", tableau=Side.PUNTER, amount=10),
        c.CallBanco(command_id="k", actor="ann", player="ann"),
        c.CloseBetting(command_id="x", actor="@croupier")]


@pytest.mark.parametrize("command", PLAY)
def test_past_the_rounds_last_coup_no_chips_go_on_the_next(command: c.TableCommand) -> None:
    with pytest.raises(DomainError) as caught:
        require_room(command.actor, command, at_coup(4), Room(last_coup=4))
    assert (caught.value.status, caught.value.rule) == (409, "round-over")
    require_room(command.actor, command, at_coup(3), Room(last_coup=4))  # its last coup
    require_room(command.actor, command, at_coup(4), FREE_ROOM)  # a free table: no round


@pytest.mark.parametrize("command", [
    c.PassBetTurn(command_id="p", actor="@deadline", player="ann", coup=5),
    c.ShuffleShoe(command_id="h", actor="@croupier"),
    c.LeaveTable(command_id="l", actor="@director", player="ann"),
    c.ChangeLimits(command_id="m", actor="@director", min_stake=20, max_stake=200),
])
def test_past_the_rounds_last_coup_the_tables_orders_and_the_shoe_go_on(
        command: c.TableCommand) -> None:
    require_room(command.actor, command, at_coup(4), Room(last_coup=4))


def test_the_table_refuses_the_bet_and_records_nothing() -> None:
    table, cards = betting_table()  # coup 1's bets: the round's last is coup 0 (between rounds)
    before = len(table.collect_events())
    with pytest.raises(DomainError) as caught:
        table.execute(bet(100), cards, Room(last_coup=0))
    assert caught.value.rule == "round-over"
    assert before and table.collect_events() == []
    table.execute(bet(100), cards, Room(last_coup=2))  # the next round's order: coups 1 and 2
    assert [type(e) for e in table.collect_events()] == [Table.BetPlaced]


def tournament(**fields: object) -> TournamentState:
    settings = TournamentSettings(**{
        "variant": Variant.PUNTO_BANCO, "seats_per_table": 6, "starting_chips": 1000,
        "min_stake": 10, "max_stake": 100, "coups_per_round": 2,
        "stages": (Stage(name="heats", rounds=2),), **fields})  # type: ignore[arg-type]
    return TournamentState(name="cup", settings=settings, tables=[TABLE],
                           phase=stages.Phase.SEATED, entrants={
                               p: Entrant(player=p, status=Status.SEATED, table=TABLE, chips=1000)
                               for p in ("ann", "bob", "cat")})


CHIPS = {"ann": 1000, "bob": 1000, "cat": 1000}


def test_the_last_coup_of_a_round_of_coups_comes_with_the_round_and_its_steps() -> None:
    state = tournament()
    assert state.room(TABLE, 0).last_coup is None  # before the first round: not bounded
    stages.start_round(state, at=0.0)
    assert state.last_coup_at(TABLE, 0) == 2
    for number, closed in ((1, 0), (2, 1)):
        stages.start_step(state, number, {TABLE: closed}, CHIPS)
        assert state.last_coup_at(TABLE, closed) == 2
        stages.end_step(state, number)
        assert state.last_coup_at(TABLE, closed + 1) == 2  # the next coup: the round's
    stages.end_round(state, 1, CHIPS)
    assert state.room(TABLE, 2).last_coup == 0  # between rounds: no coup
    stages.start_round(state, at=60.0)
    assert state.room(TABLE, 2).last_coup == 4  # the next round's order: two more
    assert state.last_coup_at("cup-playoff-1-1", 0) is None  # a play-off's: not a round's


def test_a_croupier_ahead_of_the_steps_stops_at_the_rounds_last_coup() -> None:
    state = tournament()
    stages.start_round(state, at=0.0)
    stages.start_step(state, 1, {TABLE: 0}, CHIPS)
    stages.end_step(state, 1)
    stages.start_step(state, 2, {TABLE: 2}, CHIPS)  # the croupier dealt two coups in step 1
    assert state.last_coup_at(TABLE, 2) == 2


def test_a_timed_round_has_the_coup_of_the_step_under_way_only() -> None:
    state = tournament(minutes_per_round=10)
    stages.start_round(state, at=0.0)
    assert state.last_coup_at(TABLE, 0) == 0  # the director's step comes first
    stages.start_step(state, 1, {TABLE: 0}, CHIPS)
    assert state.last_coup_at(TABLE, 0) == 1
    stages.end_step(state, 1)
    assert state.last_coup_at(TABLE, 1) == 0  # the director may end the round here
