"""A tournament's view (what every page asks for every second) reads its tables again only
when one of its streams has moved or `FRESH_SECONDS` have passed, and shows another writer's
change at once (issue 36: pages no longer rebuild every table per request, nor when another
tournament or table of the store is written)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.tournament.state import TournamentState
from infra.services import tournaments as module
from infra.services.tables import TableService
from infra.services.tournaments import Tournaments
from tests.integration.test_director import prepared
from tests.integration.test_table_service import SMALL_SHOE, open_table


@pytest.fixture
def two_writers(database_url: str) -> Iterator[tuple[Tournaments, Tournaments, uuid.UUID]]:
    """One tournament, started, seen by two services of the store (two processes' worth)."""
    first, tournament_id = prepared(database_url, players=8)
    second = TableService(url=database_url)
    yield Tournaments(first), Tournaments(second), tournament_id
    first.close()
    second.close()


def counted(tournaments: Tournaments, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How often `tournaments` reads the tables of a view (each time: one list entry)."""
    reads: list[int] = []
    read = tournaments.open_tables

    def open_tables(state: TournamentState) -> dict[str, Table]:
        reads.append(1)
        return read(state)

    monkeypatch.setattr(tournaments, "open_tables", open_tables)
    return reads


def test_a_view_asked_again_with_nothing_written_reads_no_table(
        two_writers: tuple[Tournaments, Tournaments, uuid.UUID],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pages, _, tournament_id = two_writers
    reads = counted(pages, monkeypatch)
    first = pages.view(tournament_id, now=1000.0)
    again = pages.view(tournament_id, now=1001.0)
    assert len(reads) == 1
    assert again.tables == first.tables and again.status == first.status == "running"
    monkeypatch.setattr(module, "FRESH_SECONDS", 0.0)  # the bound: read again once it passed
    pages.view(tournament_id)
    assert len(reads) == 2


def test_another_writer_s_change_shows_at_once(
        two_writers: tuple[Tournaments, Tournaments, uuid.UUID],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pages, organiser, tournament_id = two_writers
    reads = counted(pages, monkeypatch)
    assert pages.view(tournament_id).status == "running"
    organiser.pause(tournament_id, command_id="pause")  # another service: not this one's write
    assert pages.view(tournament_id).status == "paused"
    assert len(reads) == 2


def test_a_write_elsewhere_in_the_store_reads_no_table_of_the_view(
        two_writers: tuple[Tournaments, Tournaments, uuid.UUID],
        monkeypatch: pytest.MonkeyPatch) -> None:
    pages, organiser, tournament_id = two_writers
    reads = counted(pages, monkeypatch)
    first = pages.view(tournament_id, now=1000.0)
    database = organiser.service.database
    head = database.last_notification_id()
    open_table(organiser.service, "elsewhere", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
    assert database.last_notification_id() > head  # the store moved, not the tournament
    assert pages.view(tournament_id, now=1000.5).tables == first.tables
    assert len(reads) == 1
