"""Whole tournaments through the store: the director in-process on SQLite and PostgreSQL, and
`sabot demo` with a real celery worker (embedded broker; Redis with PostgreSQL)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from api.cli import main
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.settings import TournamentSettings
from infra.audit.shoes import audit_events
from infra.services.tables import TableService
from infra.services.tournaments import Director, Tournaments
from infra.store.checkpoints import checkpoint_path, checkpoints, read_lines

SETTINGS = TournamentSettings(variant="chemin-de-fer", seats_per_table=5, starting_chips=500,
                              min_stake=5, max_stake=100, coups_per_round=8, advance=5,
                              prizes=(5000, 3000, 2000), buy_in=50)


def run_tournament(url: str, seed: bytes, settings: TournamentSettings = SETTINGS,
                   players: int = 20, name: str = "cup"
                   ) -> tuple[Tournaments, uuid.UUID, list[int]]:
    """Play a whole tournament in-process with the director; returns the organiser's service,
    the tournament's id, and the spread of table sizes seen after every step."""
    service = TableService(url=url)
    director = Director(service)
    tournaments = director.tournaments
    tournament_id = tournaments.create(name, settings, seed=seed, command_id=f"{name}-create")
    for n in range(players):
        tournaments.register(tournament_id, f"p{n:02d}", bot=True, command_id=f"{name}-reg-{n}")
    tournaments.start(tournament_id, command_id=f"{name}-draw")
    spreads: list[int] = []

    def after_step() -> None:
        state = tournaments.state(tournament_id)
        if state.step is None and state.phase.value != "finished":
            sizes = state.table_sizes().values()
            spreads.append(max(sizes) - min(sizes))

    director.run(tournament_id, on_tick=after_step)
    return tournaments, tournament_id, spreads


def test_a_tournament_of_four_tables_ends_with_one_winner(database_url: str) -> None:
    director, tournament_id, spreads = run_tournament(database_url, b"cup-1")
    state = director.state(tournament_id)
    results = state.results()
    assert len(results) == 20
    winners = [r for r in results if r.position == 1]
    assert len(winners) == 1
    # every position is given once; tied players share the best position of their range
    covered = sorted(p for r in results for p in [r.position] if r.tied <= 1)
    shared = {(r.position, r.tied) for r in results if r.tied > 1}
    assert len(covered) + sum(t for _, t in shared) == 20
    for position, tied in shared:
        assert sum(1 for r in results if r.position == position) == tied
    assert sum(r.prize for r in results) == state.pool == 20 * 50
    assert all(spread <= SETTINGS.tolerance for spread in spreads)
    tables = [director.service.state(Table.create_id(state.table_name(n)))
              for n in range(1, state.tables_opened + 1)]
    assert state.tables_opened == 4
    assert all(table.chips_accounted() for table in tables)
    in_play = sum(t.chips_at_table for t in tables)
    carried = sum(t.chips_out for t in tables)
    house = sum(t.house_result for t in tables)
    assert in_play + carried + house == state.chips_issued == 20 * 500
    assert house == sum(t.commission_total for t in tables) > 0  # chemin de fer: the cagnotte
    # the finish ends every table's taille and reveals its seed: every card can be re-dealt
    names = [state.table_name(n) for n in range(1, state.tables_opened + 1)]
    shoes = audit_events(event for name in names
                         for event in director.service.events_of(Table.create_id(name)))
    assert shoes.ok and not shoes.pending and len(shoes.checked) >= 4 and shoes.cards > 0


def test_the_same_seed_plays_the_same_tournament(tmp_path: Path) -> None:
    first, first_id, _ = run_tournament(f"sqlite:///{tmp_path}/a.db", b"same")
    second, second_id, _ = run_tournament(f"sqlite:///{tmp_path}/b.db", b"same")
    other, other_id, _ = run_tournament(f"sqlite:///{tmp_path}/c.db", b"other")
    assert first.state(first_id).results() == second.state(second_id).results()
    assert first.state(first_id).seating == second.state(second_id).seating
    assert first.state(first_id).seating != other.state(other_id).seating


def test_the_seating_draw_is_checked_against_its_revealed_seed(sqlite_url: str) -> None:
    director, tournament_id, _ = run_tournament(sqlite_url, b"draw")
    events = director.service.events_of(tournament_id)
    finished = next(e for e in events if isinstance(e, Tournament.TournamentFinished))
    state = director.state(tournament_id)
    state.verify(bytes.fromhex(finished.seed))  # raises if the draw is not the seed's
    with pytest.raises(Exception, match="seed"):
        state.verify(bytes(32))


def demo(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["demo", "--tables", "2", "--players", "8", "--coups-per-round", "4",
                 "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def check_report(report: dict) -> None:
    positions = sorted(row["position"] for row in report["standings"])
    assert positions[0] == 1 and len(positions) == 8
    accounting = report["accounting"]
    assert accounting["balanced"]
    assert accounting["chips_issued"] == (accounting["players_chips"]
                                          + accounting["house_result"]) == 8 * 1000
    assert sum(p["amount"] for p in report["prizes"]) == accounting["prize_pool"]


def test_sabot_demo_with_an_embedded_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SABOT_BROKER_URL", raising=False)
    report = demo(["--seed", "0d", "--database", f"sqlite:///{tmp_path}/demo.db"], capsys)
    check_report(report)
    assert report["tournament"] == "demo-chemin-de-fer-0d"


@pytest.mark.serial  # its worker consumes the default queue of Redis db 0 (tests/conftest.py)
def test_sabot_demo_on_postgresql_and_redis(postgres_url: str, redis_url: str,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    report = demo(["--variant", "punto-banco", "--seed", "0e", "--database", postgres_url,
                   "--broker", redis_url], capsys)
    check_report(report)


def test_every_round_s_end_is_checkpointed_outside_the_store(sqlite_url: str) -> None:
    director, tournament_id, _ = run_tournament(sqlite_url, b"signed")
    path = checkpoint_path(director.service.database)
    assert path is not None
    signed = checkpoints(read_lines(path))
    ended = [e for e in director.service.events_of(tournament_id)
             if isinstance(e, Tournament.RoundEnded)]
    assert len(signed) >= len(ended) >= 2
    assert len({c.size for c in signed}) == len(signed)  # each a new head of the store
