"""Every clock's start is in the record, through the real director on the store, at house-dealt
and croupier-dealt tables alike (`domain.table.clocks`): a person's turn to bet records
`BetTurnBegan` with the seconds the director applies to it, a person's decision on a hand
or on the shoe offered to them records `DecisionClockStarted` with the seconds of its clock,
and when that clock runs out the default is the house's (`@deadline`): the hand's default, the
shoe passed on; a bot's decision starts no clock event. The resume sends the clocks again
through the outbox, so a broker down at that moment loses none."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import msgspec
import pytest

from domain.bots import next_command
from domain.table import commands as c
from domain.table.betting_order import PassReason, bettor
from domain.table.clocks import decision_awaited
from domain.table.defaults import CLOCK, bank_deadline_command_id
from domain.table.room import Room, seat_of
from domain.table.state import Phase
from infra.services.tables import TableService
from infra.services.tournaments import Director
from infra.store.outbox import BankDeadline, BetDeadline, Deadline, Sweeper, follow_ups
from tests.integration.test_people_at_tables import (
    BOTS,
    Clock,
    clock_passes,
    evening,
    table_of,
    until_waiting,
)

ANN = frozenset({"ann"})


def named(service: TableService, table_id: uuid.UUID, kind: str) -> list[Any]:
    return [e for e in service.events_of(table_id) if type(e).__name__ == kind]


def test_a_person_s_turn_records_the_bet_clock_the_director_applies(sqlite_url: str) -> None:
    """Betting in turn with no table bet clock, ann's turn records the format's clock for
    people (45 s), which is what the director waits; the bots' turns record none."""
    service, director, tournament_id, clock = evening(
        sqlite_url, betting_order="rotating", people_bet_seconds=45)
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        assert bettor(table) == "ann"
        turns = {e.player: e.seconds for e in named(service, table_id, "BetTurnBegan")}
        settings = director.tournaments.state(tournament_id).settings
        applied = settings.person_clock(c.PassBetTurn(command_id="-", player="ann"),
                                        table.settings)
        assert turns["ann"] == applied == 45
        assert {turns[bot] for bot in BOTS if bot in turns} <= {0}
        clock.offset += 44
        until_waiting(director, tournament_id)
        assert clock_passes(service, table_id) == []  # 1 s left of the 45 recorded
        clock.offset += 2  # her clock ran out, and every later one of hers runs out too
        until_waiting(director, tournament_id, finished=True)
        [passed, *_] = clock_passes(service, table_id)
        assert (passed.player, passed.reason, passed.coup) == ("ann", PassReason.CLOCK, 1)
    finally:
        service.close()


def drive_to_ann_s_decision(service: TableService, director: Director,
                            tournament_id: uuid.UUID, clock: Clock, *,
                            croupier: bool, shoe: bool = False) -> uuid.UUID:
    """Play a chemin de fer evening until a hand of ann's awaits her decision (`shoe`: until
    the shoe is offered to her): ann stakes and takes the bank as a bot would (with her own
    actor), the bots act by themselves (the director), and at a croupier's table the croupier
    deals."""
    rng = random.Random(7)
    for n in range(400):
        until_waiting(director, tournament_id)
        table_id, state = table_of(service, director, tournament_id)
        awaited = decision_awaited(state, Room(people=ANN))
        if awaited is not None and (awaited[2] is None) == shoe:
            return table_id
        people = ANN | (frozenset(state.seated()) if croupier else frozenset())
        move = next_command(state, rng, lambda label, n=n: f"drive-{n}-{label}",
                            people=people if state.phase is Phase.SHUFFLED else frozenset())
        seat = seat_of(move, state)
        if seat == "ann":
            service.execute(table_id, msgspec.structs.replace(move, actor="ann"))
        elif seat is None and croupier:
            service.execute(table_id, move)  # the croupier's step
        else:
            clock.offset += 3  # a bot thinks (croupier) or the director waits on ann's bet
    raise AssertionError(f"ann never held a hand: {state.phase} {move}")


@pytest.mark.parametrize("dealing", ["automatic", "croupier"])
def test_a_person_s_decision_records_its_clock_and_runs_out_as_the_house_s_default(
        sqlite_url: str, dealing: str) -> None:
    service, director, tournament_id, clock = evening(
        sqlite_url, variant="chemin-de-fer", dealing=dealing, decision_seconds=7,
        coups_per_round=30)
    try:
        table_id = drive_to_ann_s_decision(service, director, tournament_id, clock,
                                           croupier=dealing == "croupier")
        state = service.state(table_id)
        side = state.coup.to_act() if state.coup is not None else None
        started = named(service, table_id, "DecisionClockStarted")
        assert [(e.coup, e.player, e.side, e.seconds) for e in started][-1] == (
            state.coup_number, "ann", side, 7)
        assert {e.player for e in started} == {"ann"}  # the bots' decisions start no clock
        clocks = [e for e in follow_ups(service.table(table_id)) if isinstance(e, Deadline)]
        assert clocks == [Deadline(table_id, state.coup_number, side, 7)]  # the clock applied
        if dealing == "croupier":  # the deadline's worker applies the default
            service.execute(table_id, c.PlayDefault(
                command_id=f"deadline:{table_id}:{state.coup_number}:{side}", actor=CLOCK,
                coup=state.coup_number, side=side))
        else:  # the director keeps the clock itself
            clock.offset += 6
            until_waiting(director, tournament_id)
            assert decision_awaited(service.state(table_id), Room(people=ANN)) is not None
            clock.offset += 2
            until_waiting(director, tournament_id)
        decided = [e for e in service.events_of(table_id)
                   if type(e).__name__ in ("ThirdCardAsked", "HandStood", "CardOffered")
                   and e.coup == state.coup_number and getattr(e, "side", side) == side]
        assert [e.actor for e in decided] == [CLOCK]
    finally:
        service.close()


def test_the_resume_s_clocks_wait_in_the_outbox_while_the_broker_is_down(
        sqlite_url: str) -> None:
    service, director, tournament_id, _ = evening(
        sqlite_url, betting_order="rotating", bet_seconds=20)
    tournaments = director.tournaments
    sent: list[BetDeadline] = []
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        began = service.last_move(table_id)
        tournaments.pause(tournament_id, at=began + 5, command_id="pause")

        def broker_down(clock: BetDeadline) -> None:
            raise ConnectionError("the broker is down")

        service.effects.on(BetDeadline, broker_down)
        tournaments.resume(tournament_id, at=began + 105, command_id="resume")
        service.effects.on(BetDeadline, sent.append)
        assert service.effects.relay() >= 1  # the next dispatch sends what is pending
        [again] = [e for e in sent if e.player == "ann" and e.seconds < 20]  # the resume's
        assert again.seconds == pytest.approx(15, abs=0.01)
        assert msgspec.structs.replace(again, seconds=20) == BetDeadline(
            table_id, table.coup_number + 1, "ann", 20)
        assert service.effects.relay() == 0  # sent once, marked dispatched
    finally:
        service.close()


def test_the_clocks_a_resume_armed_without_a_handler_are_swept_by_another_process(
        sqlite_url: str) -> None:
    """`sabot tournament resume` runs in a process with no clock handler (the CLI's): the
    clocks it arms wait in the outbox. A process that has one (an API replica) sweeps them a
    second later: the table is not stranded until some other command happens to relay them."""
    service, director, tournament_id, _ = evening(
        sqlite_url, betting_order="rotating", bet_seconds=20)
    api = TableService(url=sqlite_url)
    sent: list[BetDeadline] = []
    api.effects.on(BetDeadline, sent.append)
    sweeper = Sweeper(api.effects, interval=0.05)
    try:
        until_waiting(director, tournament_id)
        table_id, table = table_of(service, director, tournament_id)
        began = service.last_move(table_id)
        director.tournaments.pause(tournament_id, at=began + 5, command_id="pause")
        sweeper.start()
        director.tournaments.resume(tournament_id, at=began + 105, command_id="resume")
        waited = time.monotonic() + 30  # a loaded machine; a sweep is due every 0.05 s
        while not [e for e in sent if e.seconds < 20] and time.monotonic() < waited:
            time.sleep(0.05)
        [again] = [e for e in sent if e.player == "ann" and e.seconds < 20]  # the resume's
        assert again.seconds == pytest.approx(15, abs=0.01)
        assert msgspec.structs.replace(again, seconds=20) == BetDeadline(
            table_id, table.coup_number + 1, "ann", 20)
        sweeper.close()
        assert api.effects.relay() == 0  # swept once, marked dispatched
    finally:
        sweeper.close()
        api.close()
        service.close()


def test_a_sweep_leaves_an_effect_just_committed_to_its_own_process(sqlite_url: str) -> None:
    """The first sweep only notes what is pending: the process that committed an effect a
    moment ago sends it itself; the next sweep relays what is still pending then."""
    service, director, tournament_id, _ = evening(
        sqlite_url, betting_order="rotating", bet_seconds=20)
    sent: list[BetDeadline] = []
    try:
        until_waiting(director, tournament_id)
        service.effects.on(BetDeadline, sent.append)
        assert service.effects.sweep() == 0 and sent == []
        assert service.effects.sweep() >= 1
        assert {e.player for e in sent} == {"ann"}
        assert service.effects.sweep() == 0  # nothing pending any more
    finally:
        service.close()


@pytest.mark.parametrize("dealing", ["automatic", "croupier"])
def test_the_shoe_offered_to_a_person_records_its_clock_and_passes_on_by_the_house(
        sqlite_url: str, dealing: str) -> None:
    """The shoe offered to ann starts her decision clock (no hand); when it runs out the
    shoe passes on as the house's (`@deadline`), never as ann's: by the deadline's worker at a
    croupier's table (its task's command), by the director at a house-dealt one."""
    service, director, tournament_id, clock = evening(
        sqlite_url, variant="chemin-de-fer", dealing=dealing, decision_seconds=7,
        coups_per_round=30)
    try:
        table_id = drive_to_ann_s_decision(service, director, tournament_id, clock,
                                           croupier=dealing == "croupier", shoe=True)
        state = service.state(table_id)
        assert (state.phase, state.bank_offered_to) == (Phase.NO_BANK, "ann")
        [*_, started] = named(service, table_id, "DecisionClockStarted")
        assert (started.coup, started.player, started.side, started.seconds) == (
            state.coup_number, "ann", None, 7)
        clocks = [e for e in follow_ups(service.table(table_id)) if isinstance(e, BankDeadline)]
        assert clocks == [BankDeadline(table_id, state.coup_number, "ann", 7)]
        if dealing == "croupier":  # the deadline's worker applies the default
            service.execute(table_id, c.DeclineBank(
                command_id=bank_deadline_command_id(table_id, state.coup_number, "ann"),
                actor=CLOCK, player="ann", coup=state.coup_number))
        else:  # the director keeps the clock itself
            clock.offset += 6
            until_waiting(director, tournament_id)
            assert service.state(table_id).bank_offered_to == "ann"  # 1 s left
            clock.offset += 2
            until_waiting(director, tournament_id)
        declined = [e for e in named(service, table_id, "BankDeclined") if e.player == "ann"]
        assert [(e.actor, e.command_id) for e in declined][-1] == (
            CLOCK, bank_deadline_command_id(table_id, state.coup_number, "ann"))
        assert service.state(table_id).bank_offered_to != "ann"
    finally:
        service.close()
