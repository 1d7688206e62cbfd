"""Cancelling and archiving on the pure Tournament aggregate: a tournament is cancelled before
its start only, and nothing is taken of it after; it is archived after its finish only, and
once; both are events that replay, and leave the tournament out of the lobby (`listed`)."""

from __future__ import annotations

from typing import Any

from eventsourcing.domain import Snapshot

from domain.errors import OutOfTurn
from domain.tournament.aggregate import Tournament
from domain.tournament.base import TournamentStatus
from domain.tournament.commands import (
    ArchiveTournament,
    CancelTournament,
    DrawSeating,
    FinishTournament,
    RegisterPlayer,
)
from infra.store.mapper import MsgspecMapper
from tests.unit.test_tournament import SEED, bust, execute, one_table, org, refused, registered


def replayed(tournament: Tournament) -> Tournament:
    events = tournament.collect_events()
    copy: Tournament | None = None
    for event in events:
        copy = event.mutate(copy)
    assert copy is not None
    return copy


def test_a_tournament_is_cancelled_before_its_start_and_takes_nothing_after() -> None:
    tournament = registered(4)
    assert tournament.state.listed
    refused(tournament, lambda: execute(tournament, CancelTournament(actor="p001",
            command_id="mine")), OutOfTurn, "official-step")
    execute(tournament, CancelTournament(**org("cancel")))
    assert tournament.state.status is TournamentStatus.CANCELLED
    assert not tournament.state.listed
    for command in (RegisterPlayer(player="late", **org("late")), DrawSeating(**org("draw")),
                    CancelTournament(**org("again"))):
        refused(tournament, lambda command=command: execute(tournament, command), OutOfTurn,
                "tournament-cancelled")
    copy = replayed(tournament)
    assert copy.state.cancelled and len(copy.state.entrants) == 4


def test_a_started_tournament_is_not_cancelled() -> None:
    tournament = one_table(3)
    refused(tournament, lambda: execute(tournament, CancelTournament(**org("cancel"))),
            OutOfTurn, "out-of-turn")


def test_a_finished_tournament_is_archived_once() -> None:
    tournament = one_table(3)
    refused(tournament, lambda: execute(tournament, ArchiveTournament(**org("early"))),
            OutOfTurn, "out-of-turn")
    bust(tournament, 1, p001=10, p002=5)
    execute(tournament, FinishTournament(**org("finish")), SEED)
    tournament.collect_events()
    mapper = MsgspecMapper()
    before = mapper.to_stored_event(Snapshot.take(tournament))  # stored before the archive
    execute(tournament, ArchiveTournament(**org("archive")))
    assert tournament.state.archived and not tournament.state.listed
    assert tournament.state.status is TournamentStatus.FINISHED  # its results stand
    refused(tournament, lambda: execute(tournament, ArchiveTournament(**org("again"))),
            OutOfTurn, "archived")
    [archived] = tournament.collect_events()
    assert isinstance(archived, Tournament.TournamentArchived)
    restored: Any = mapper.to_domain_event(before).mutate(None)
    assert not restored.state.archived
    restored = mapper.to_domain_event(mapper.to_stored_event(archived)).mutate(restored)
    assert restored.state.archived
