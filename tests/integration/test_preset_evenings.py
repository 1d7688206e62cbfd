"""The presets for an evening with people, each created, started and played for a few coups
through the services: the house-dealt No-Commission heats (`punto-banco-eight`) by the
director and its bots, the croupier-dealt chemin de fer and à deux tableaux through the
croupier's commands while the director waits for each table; `sabot demo` plays a croupier
preset with bots alone."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from domain.game.coup import Outcome, Side
from domain.game.payouts import Spot
from domain.game.settings import BankerWin, BettingOrder
from domain.table.aggregate import Table
from domain.tournament.formats import ChipRule, Dealing
from domain.tournament.presets import PRESETS, preset
from infra.services.autoplay import play_coups
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director
from tests.integration.test_tournament_run import check_report, demo


def started(url: str, name: str, players: int, **overrides: object) -> tuple[
        TableService, Director, uuid.UUID]:
    service = TableService(url=url)
    director = Director(service)
    tournaments = director.tournaments
    tournament_id = tournaments.create(name, preset(name, **overrides), seed=b"an evening",
                                       command_id="create")
    for n in range(players):
        tournaments.register(tournament_id, f"p{n:02d}", bot=True, command_id=f"reg-{n}")
    tournaments.start(tournament_id, command_id="start")
    return service, director, tournament_id


def test_the_eight_preset_is_no_commission_heats_on_a_one_minute_rotating_clock() -> None:
    """The format as SkyCity's EIGHT runs it: 18 coups a round, a one-minute clock in turn,
    heats then a wildcard round then a final that starts level with a secret bet."""
    eight = PRESETS["punto-banco-eight"]
    assert eight.dealing is Dealing.AUTOMATIC
    assert [stage.name for stage in eight.plan()] == ["heats", "wildcard", "final"]
    assert all(stage.coups == 18 and stage.bet_seconds == 60 for stage in eight.plan())
    final = eight.plan()[-1]
    assert final.secret_bet and final.chips is ChipRule.RESET
    table = eight.table_settings()
    assert table.banker_pays is BankerWin.SIX_PAYS_HALF and table.commission_bp == 0
    assert table.betting_order is BettingOrder.ROTATING and table.bet_seconds == 60


def test_the_eight_preset_is_played_by_the_director_at_no_commission_tables(
        sqlite_url: str) -> None:
    service, director, tournament_id = started(sqlite_url, "punto-banco-eight", 14,
                                               coups_per_round=6)
    state = director.tournaments.state
    while state(tournament_id).steps < 6 or state(tournament_id).step is not None:
        assert director.tick(tournament_id) is not Tick.FINISHED  # the heat's six coups
    tables = state(tournament_id).tables
    assert len(tables) == 2
    banker_wins = 0
    for name in tables:
        events = service.events_of(Table.create_id(name))
        opened = service.state(Table.create_id(name)).settings
        assert opened.banker_pays is BankerWin.SIX_PAYS_HALF and opened.bet_seconds == 60
        assert any(type(e).__name__ == "BetTurnBegan" for e in events)  # bets in turn
        settled = {e.coup: e for e in events if isinstance(e, Table.CoupSettled)}
        assert settled
        for e in events:
            if not (isinstance(e, Table.PayoutMade) and e.payout.reason == f"bet on {Spot.BANKER}"
                    and settled[e.coup].outcomes[Side.PUNTER] is Outcome.BANKER):
                continue
            six = settled[e.coup].points[Side.BANKER] == 6
            banker_wins += 1
            assert e.payout.commission == 0
            assert e.payout.net == (e.payout.staked // 2 if six else e.payout.staked)
    assert banker_wins  # banker bets were won and paid by the rule


@pytest.mark.parametrize("name", ["chemin-de-fer-croupier", "deux-tableaux-croupier"])
def test_a_croupier_preset_waits_for_its_croupiers_and_plays_their_coups(
        sqlite_url: str, name: str) -> None:
    assert PRESETS[name].dealing is Dealing.CROUPIER
    service, director, tournament_id = started(sqlite_url, name, 8, coups_per_round=2)
    state = director.tournaments.state
    while state(tournament_id).step is None:
        assert director.tick(tournament_id) is Tick.ACTED  # the round, then its first step
    assert director.tick(tournament_id) is Tick.WAITING  # nobody dealt: the director waits
    tables = [Table.create_id(name) for name in state(tournament_id).tables]
    assert all(service.state(table).coup_number == 0 for table in tables)
    for n, table in enumerate(tables):
        play_coups(service, table, f"croupier {n}".encode(), "croupier", 1)
    assert director.tick(tournament_id) is Tick.ACTED
    assert state(tournament_id).steps == 1
    for table in tables:
        events = service.events_of(table)
        assert service.state(table).coup_number >= 1
        assert any(isinstance(e, Table.CoupSettled) for e in events)
        assert not any(e.command_id.startswith(str(tournament_id)) for e in events
                       if isinstance(e, Table.CoupSettled))  # the croupier dealt, not the house


def test_sabot_demo_plays_a_croupier_preset_with_the_house_dealing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`sabot demo` stays all bots: a croupier preset's tables are house-dealt there."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SABOT_BROKER_URL", raising=False)
    report = demo(["--preset", "deux-tableaux-croupier", "--seed", "0f",
                   "--database", f"sqlite:///{tmp_path}/demo.db"], capsys)
    check_report(report)
