"""Betting limits that rise from round to round reach the tables: when a round starts, the
director sends every open table the round's limits (`ChangeLimits`), so after each tick of a
running round each table's limits are the format's for that round, and every bet placed in a
round keeps within them."""

from __future__ import annotations

from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.formats import Limits, Stage
from domain.tournament.settings import TournamentSettings
from infra.services.tournaments import Director, Tournaments
from tests.integration.test_director import prepared

ROUNDS = (Limits(min_stake=100, max_stake=1_000), Limits(min_stake=200, max_stake=2_000),
          Limits(min_stake=400, max_stake=4_000))
RISING = TournamentSettings(
    variant="punto-banco", seats_per_table=5, starting_chips=20_000, min_stake=100,
    max_stake=1_000, coups_per_round=3, buy_in=50, prizes=(6000, 4000),
    stages=(Stage(name="heats", rounds=3, limits=ROUNDS),))


def test_the_tables_limits_follow_the_format_round_by_round(sqlite_url: str) -> None:
    service, tournament_id = prepared(sqlite_url, RISING, players=12)
    tournaments = Tournaments(service)
    seen: dict[int, set[tuple[str, int, int]]] = {}

    def check() -> None:
        state = tournaments.state(tournament_id)
        if state.round == 0 or state.phase.value != "running":
            return
        expected = ROUNDS[state.round - 1]
        for name, table in tournaments.tables(tournament_id).items():
            limits = (table.settings.min_stake, table.settings.max_stake)
            assert limits == (expected.min_stake, expected.max_stake), (state.round, name)
            seen.setdefault(state.round, set()).add((name, *limits))

    Director(service).run(tournament_id, on_tick=check)
    assert sorted(seen) == [1, 2, 3]

    started = [e for e in service.events_of(tournament_id)
               if isinstance(e, Tournament.RoundStarted)]
    assert [(e.min_stake, e.max_stake) for e in started] == [
        (limits.min_stake, limits.max_stake) for limits in ROUNDS]
    state = tournaments.state(tournament_id)
    bets = 0
    for number in range(1, state.tables_opened + 1):
        limits: Limits | None = None
        changes = []
        for event in service.events_of(Table.create_id(state.table_name(number))):
            if isinstance(event, Table.LimitsChanged):
                limits = Limits(min_stake=event.min_stake, max_stake=event.max_stake)
                changes.append(limits)
            elif isinstance(event, Table.BetPlaced) and limits is not None:
                assert limits.min_stake <= event.amount <= limits.max_stake
                bets += 1
        assert changes == list(ROUNDS[:len(changes)]) and changes, number
    assert bets > 0
