"""The directors' shares (`infra.store.leases.Census.share`): whatever leases the directors hold
to begin with (one of them the only director for a while, say), turns taken in any order leave
every running tournament with one director and no director over its fair share,
ceil(tournaments / directors); a director never takes a lease another holds."""

from __future__ import annotations

import math
import uuid

from hypothesis import given
from hypothesis import strategies as st

from infra.store.leases import Census


def take_turn(owners: dict[str, str], running: list[uuid.UUID], holders: list[str],
              holder: str) -> None:
    """`holder`'s turn on the leases' table (`owners`): it keeps or takes what it directs and
    gives back its surplus."""
    mine, surplus = Census(holders=len(holders), owners=dict(owners)).share(running, holder)
    for tournament_id in surplus:
        del owners[str(tournament_id)]
    for tournament_id in mine:
        assert owners.get(str(tournament_id), holder) == holder
        owners[str(tournament_id)] = holder


@given(tournaments=st.integers(min_value=0, max_value=40),
       directors=st.integers(min_value=1, max_value=6),
       first=st.lists(st.integers(min_value=0, max_value=5), max_size=40),
       order=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=60))
def test_turns_in_any_order_spread_the_tournaments_fairly(
        tournaments: int, directors: int, first: list[int], order: list[int]) -> None:
    running = [uuid.UUID(int=n) for n in range(tournaments)]
    holders = [f"d{n}" for n in range(directors)]
    owners = {str(t): holders[h % directors] for t, h in zip(running, first, strict=False)}
    for n in order:  # some turns in any order, then two rounds of everyone's turn
        take_turn(owners, running, holders, holders[n % directors])
    for _ in range(2):
        for holder in holders:
            take_turn(owners, running, holders, holder)
    assert set(owners) == {str(t) for t in running}
    share = math.ceil(tournaments / directors)
    assert all(list(owners.values()).count(h) <= share for h in holders), owners


def test_a_lone_director_takes_every_tournament_and_gives_back_for_a_newcomer() -> None:
    running = [uuid.UUID(int=n) for n in range(16)]
    alone = Census(holders=1, owners={})
    assert alone.share(running, "a") == (running, [])
    joined = Census(holders=4, owners={str(t): "a" for t in running})
    assert joined.share(running, "a") == (running[:4], running[4:])
    assert joined.share(running, "b") == ([], [])  # b waits for a to give back
    given_back = Census(holders=4, owners={str(t): "a" for t in running[:4]})
    assert given_back.share(running, "b") == (running[4:8], [])
