"""The room a table decides in: a paused tournament refuses every play command, whoever sends
it, but the tournament's orders; the croupier plays the table, the house bots only if the
format says so, never a person's seat; a free table's croupier acts for anyone."""

from __future__ import annotations

import msgspec
import pytest

from domain.errors import DomainError
from domain.game.coup import Side
from domain.game.payouts import Spot
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.room import FREE_ROOM, Room, require_room
from domain.table.state import TableState
from domain.tournament.entrants import Entrant
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import TournamentState

STATE = TableState(settings=TableSettings.default(Variant.CHEMIN_DE_FER))
PEOPLE = frozenset({"chloe"})


def bet(actor: str, player: str) -> c.PlaceBet:
    return c.PlaceBet(command_id="b", actor=actor, player=player, spot=Spot.BANKER, amount=10)


def refused(actor: str, command: c.TableCommand, room: Room) -> tuple[int, str]:
    with pytest.raises(DomainError) as caught:
        require_room(actor, command, STATE, room)
    return caught.value.status, caught.value.rule


@pytest.mark.parametrize("command", [
    bet("chloe", "chloe"), bet("@croupier", "bot-a"), bet("@director", "bot-a"),
    bet("@organiser", "bot-a"), c.CloseBetting(command_id="x", actor="@croupier"),
    c.DealCard(command_id="x", actor="@croupier"),
    c.RetireBank(command_id="x", actor="chloe", player="chloe"),
    c.PlayDefault(command_id="x", actor="@deadline", coup=1, side=Side.PUNTER),
])
def test_a_paused_tournament_refuses_every_play_command(command: c.TableCommand) -> None:
    room = Room(paused=True, people=PEOPLE)
    assert refused(command.actor, command, room) == (409, "tournament-paused")
    require_room(command.actor, command, STATE, Room(people=PEOPLE))  # resumed: the table's


@pytest.mark.parametrize("command", [
    c.SeatPlayer(command_id="x", actor="@organiser", player="dan", chips=100),
    c.LeaveTable(command_id="x", actor="@organiser", player="chloe"),
    c.AdjustChips(command_id="x", actor="@organiser", player="chloe", delta=-10, reason="r"),
    c.ChangeLimits(command_id="x", actor="@director", min_stake=10, max_stake=100),
    c.RetireBank(command_id="x", actor="@organiser", player="chloe"),
])
def test_a_paused_tournament_still_takes_its_orders(command: c.TableCommand) -> None:
    require_room(command.actor, command, STATE, Room(paused=True, people=PEOPLE))


@pytest.mark.parametrize("command", [
    bet("@croupier", "chloe"),
    c.PlaceStake(command_id="x", player="chloe", tableau=Side.PUNTER, amount=500),
    c.CallBanco(command_id="x", player="chloe"),
    c.PassBetTurn(command_id="x", player="chloe", coup=1),
    c.DeclineBank(command_id="x", player="chloe"),
    c.RetireBank(command_id="x", player="chloe"),
])
def test_the_croupier_never_plays_a_persons_seat(command: c.TableCommand) -> None:
    assert command.actor == "@croupier"
    assert refused("@croupier", command, Room(people=PEOPLE)) == (403, "not-your-seat")
    require_room("@croupier", command, STATE, FREE_ROOM)  # a free table: anyone's


def test_the_croupier_plays_the_bots_where_allowed_and_the_tables_steps() -> None:
    room = Room(people=PEOPLE)
    for command in (bet("@croupier", "bot-a"),
                    c.PlaceStake(command_id="x", player="bot-a", tableau=Side.PUNTER,
                                 amount=500),
                    c.CloseBetting(command_id="x"), c.BurnCard(command_id="x"),
                    c.SettleCoup(command_id="x"), c.PayCoup(command_id="x")):
        require_room("@croupier", command, STATE, room)
    require_room("chloe", bet("chloe", "chloe"), STATE, room)


def test_a_finished_tournament_s_tables_say_so() -> None:
    """After the finish a bet is refused as the tournament's end, not as "coup 13 is past the
    round's last (0)"."""
    room = Room(people=PEOPLE, last_coup=0, finished=True)
    with pytest.raises(DomainError) as caught:
        require_room("chloe", bet("chloe", "chloe"), STATE, room)
    assert (caught.value.status, caught.value.rule) == (409, "tournament-finished")
    assert "the tournament is finished" in caught.value.message


def test_a_tournaments_room_knows_its_pause_and_its_people() -> None:
    settings = TournamentSettings(variant=Variant.PUNTO_BANCO, seats_per_table=6,
                                  starting_chips=1000, min_stake=10, max_stake=100,
                                  coups_per_round=4)
    state = TournamentState(name="cup", settings=settings, paused=True, entrants={
        "chloe": Entrant(player="chloe"), "bot-a": Entrant(player="bot-a", bot=True)})
    assert state.room() == Room(paused=True, people=frozenset({"chloe"}),
                                people_bet_seconds=60, croupier_plays_bots=False)
    allowing = msgspec.structs.replace(settings, croupier_plays_bots=True)
    assert msgspec.structs.replace(state, settings=allowing).room().croupier_plays_bots


BOTS_SEATS = [
    bet("@croupier", "bot-a"),
    c.PlaceStake(command_id="x", player="bot-a", tableau=Side.PUNTER, amount=500),
    c.CallBanco(command_id="x", player="bot-a"),
    c.PassBetTurn(command_id="x", player="bot-a", coup=1),
    c.DeclineBank(command_id="x", player="bot-a"),
    c.RetireBank(command_id="x", player="bot-a"),
]


@pytest.mark.parametrize("command", BOTS_SEATS)
def test_the_croupier_plays_a_bots_seat_only_if_the_format_says_so(
        command: c.TableCommand) -> None:
    """Issue 26: "A croupier acts for the table (deal, burn, close betting, settle, pay) and
    for house bots only if the format says so"."""
    barred = Room(people=PEOPLE, croupier_plays_bots=False)
    assert refused("@croupier", command, barred) == (403, "not-your-seat")
    require_room("@croupier", command, STATE, Room(people=PEOPLE, croupier_plays_bots=True))
    for step in (c.CloseBetting(command_id="x"), c.DealCard(command_id="x"),
                 c.SettleCoup(command_id="x"), c.PayCoup(command_id="x")):
        require_room("@croupier", step, STATE, barred)  # the table's steps stay the croupier's
    require_room("bot-a", msgspec.structs.replace(command, actor="bot-a"), STATE, barred)
