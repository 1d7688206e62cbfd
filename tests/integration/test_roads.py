"""The roads view on real stored events of bot games, every variant, SQLite and PostgreSQL:
its bead road is exactly the settled coups of the current taille (outcomes and points, one
board a tableau), and the view run live a few coups at a time equals the view rebuilt."""

from __future__ import annotations

from typing import Any

from domain.game.coup import tableaux_of
from infra.services.tables import TableService
from infra.store.opening import Store
from projections.registry import VIEWS
from projections.roads import roads
from projections.runner import Runner
from tests.integration.test_projections import Game, games, service, store  # noqa: F401


def settled_this_taille(game: Game) -> list[dict[str, Any]]:
    settled: list[dict[str, Any]] = []
    for event in game.service.events_of(game.table_id):
        kind = type(event).__name__
        if kind == "ShoeShuffled":
            settled = []
        elif kind == "CoupSettled":
            settled.append({"coup": event.coup, "outcomes": event.outcomes,
                            "points": event.points})
    return settled


def test_roads_follow_the_settled_coups_and_rebuild_to_the_same(service: TableService,  # noqa: F811
                                                                store: Store) -> None:  # noqa: F811
    runner = Runner(store, VIEWS, batch_size=50)
    tables = games(service)
    for _ in range(3):
        for game in tables:
            game.coups(3)
        runner.catch_up("roads")
    live = {game.name: roads(store.database, game.table_id) for game in tables}
    for game in tables:
        found = live[game.name]
        assert found is not None and found.taille == game.state.taille
        sides = tableaux_of(game.state.variant)
        assert [board.tableau for board in found.boards] == [s.value for s in sides]
        settled = settled_this_taille(game)
        assert settled, game.name
        for side, board in zip(sides, found.boards, strict=True):
            assert [(r.coup, r.outcome, r.punter, r.banker) for r in board.bead] == [
                (s["coup"], s["outcomes"][side], s["points"][side], s["points"]["banker"])
                for s in settled]
            wins = [r for r in board.bead if r.outcome != "tie"]
            assert sum(len(column) for column in board.big_road) == len(wins)
    runner.rebuild("roads")
    assert {game.name: roads(store.database, game.table_id) for game in tables} == live
