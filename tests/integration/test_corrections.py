"""Corrections at a tournament's tables: while it runs, an approved correction is the
organiser's `correct-chips` intervention (chips before and after, the reason naming the coup
and the dispute) at each player's table now, and the tournament plays on to its end; once it
is finished, a correction is refused and stays approved but unapplied."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from api.cli import main
from domain.errors import OutOfTurn
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.services.disputes import DisputeService
from infra.services.replay import replay_coup
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.e2e.test_api_disputes import FaultyReader
from tests.integration.test_tournament_run import SETTINGS


def first_misread(service: TableService, tables: list[str],
                  skip: tuple[uuid.UUID, int] | None = None) -> tuple[uuid.UUID, int] | None:
    """A closed coup (not `skip`) whose replay against its seed moves chips."""
    for name in tables:
        table_id = Table.create_id(name)
        events = service.events_of(table_id)
        for e in events:
            if isinstance(e, Table.CoupClosed) and (table_id, e.coup) != skip and replay_coup(
                    events, e.coup, service.vault.unseal).corrections:
                return table_id, e.coup
    return None


def until_a_misread(service: TableService,
                    name: str) -> tuple[Director, uuid.UUID, tuple[uuid.UUID, int]]:
    """A tournament `name` of 10 players, its cards read by a reader that misreads, directed
    until one of its closed coups replays with chips to correct: the director, the
    tournament and that coup (its table, its number)."""
    service.cards = FaultyReader(service)
    director = Director(service)
    tournaments = director.tournaments
    tournament_id = tournaments.create(name, SETTINGS, seed=b"fix", command_id="create")
    for n in range(10):
        tournaments.register(tournament_id, f"p{n:02d}", bot=True, command_id=f"reg-{n}")
    tournaments.start(tournament_id, command_id="draw")
    found = None
    while found is None:
        director.tick(tournament_id)
        state = tournaments.state(tournament_id)
        assert state.status.value == "running"
        found = first_misread(service, [state.table_name(n)
                                        for n in range(1, state.tables_opened + 1)])
    return director, tournament_id, found


def approved(disputes: DisputeService, table_id: uuid.UUID, coup: int) -> uuid.UUID:
    dispute_id = disputes.open(table_id, coup, reason="the reader misread a card",
                               by="@organiser", command_id=f"dispute/{coup}")
    assert disputes.replay(dispute_id).corrections
    disputes.approve(dispute_id, role="organiser", by="@organiser",
                     command_id=f"{dispute_id}/a/1")
    assert disputes.approve(dispute_id, role="auditor", by="@auditor",
                            command_id=f"{dispute_id}/a/2").approved
    return dispute_id


def test_a_correction_during_a_tournament_then_after_it(
        sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = TableService(url=sqlite_url)
    director, tournament_id, found = until_a_misread(service, "cup")
    tournaments = director.tournaments
    table_id, coup = found
    disputes = DisputeService(url=sqlite_url)
    dispute_id = approved(disputes, table_id, coup)
    before = tournaments.chips(tournament_id)
    dispute = disputes.apply_correction(dispute_id, service)
    assert dispute.applied
    after = tournaments.chips(tournament_id)
    assert {p: after[p] - before[p] for p in dispute.corrections} == dispute.corrections
    name = service.table(table_id).name
    reason = (f"correction of coup {coup} at {name} (dispute {dispute_id}): the reader misread "
              "a card")
    interventions = [e for e in service.events_of(tournament_id)
                     if isinstance(e, Tournament.InterventionMade)]
    assert {(e.player, e.chips_after - e.chips_before, e.reason, e.kind)
            for e in interventions} == {(p, d, reason, "correct-chips")
                                        for p, d in dispute.corrections.items()}
    assert disputes.apply_correction(dispute_id, service).applied  # again: nothing more
    assert len([e for e in service.events_of(tournament_id)
                if isinstance(e, Tournament.InterventionMade)]) == len(interventions)

    capsys.readouterr()
    assert main(["dispute", "show", str(dispute_id), "--database", sqlite_url]) == 1
    shown = capsys.readouterr().out
    assert "verdict: discrepancies" in shown
    assert "(applied; approved by @organiser as organiser, @auditor as auditor)" in shown

    director.run(tournament_id)
    state = tournaments.state(tournament_id)
    assert state.status.value == "finished"
    late = first_misread(service, [state.table_name(n)
                                   for n in range(1, state.tables_opened + 1)], skip=found)
    assert late is not None
    refused = approved(disputes, *late)
    with pytest.raises(OutOfTurn, match="cannot intervene now"):
        disputes.apply_correction(refused, service)
    assert disputes.dispute(refused).approved and not disputes.dispute(refused).applied

    out = tmp_path / "bundle"
    assert main(["audit", "export", "--tournament", "cup", "--out", str(out),
                 "--database", sqlite_url]) == 0
    significant = [json.loads(line) for line in (out / "significant.jsonl").read_text()
                   .splitlines()]
    corrected = [s for s in significant if s["kind"] == "intervention" and s["reason"] == reason]
    assert {(s["subject"], s["after"] - s["before"]) for s in corrected} == set(
        dispute.corrections.items())
    assert [s["details"]["role"] for s in significant if s["kind"] == "correction approved"
            and s["stream"] == str(dispute_id)] == ["organiser", "auditor"]
    disputes.close()
    service.close()
