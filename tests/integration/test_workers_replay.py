"""The replay of a disputed coup, on events altered in memory: each alteration is named
(what, where, expected, recorded), and nothing else is. No worker: `replay_coup` is pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from domain.dispute.verdicts import Discrepancy, Verdict
from infra.services.replay import replay_coup
from infra.services.tables import TableService, seeds_from
from tests.integration.test_workers import SECRET, past_the_first_taille

COUP = 3


def no_vault(commitment: str) -> bytes | None:
    return None


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Any]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('replay')}/sabot.db"
    with TableService(url=url, secret_key=SECRET) as service:
        service.seed_source = seeds_from(b"sabot-test-workers")
        table_id = past_the_first_taille(service)
        yield service.events_of(table_id)


def altered(events: list[Any], kind: str, n: int = 0, **changes: Any) -> list[Any]:
    """The events with the `n`-th `kind` event of coup `COUP` changed."""
    matching = [i for i, e in enumerate(events)
                if type(e).__name__ == kind and getattr(e, "coup", COUP) == COUP]
    copy = list(events)
    copy[matching[n]] = dataclasses.replace(events[matching[n]], **changes)
    return copy


def test_every_recorded_coup_is_consistent(events: list[Any]) -> None:
    closed = [e.coup for e in events if type(e).__name__ == "CoupClosed"]
    assert len(closed) >= 5
    for coup in closed:
        replay = replay_coup(events, coup, no_vault)
        if replay.verdict is Verdict.UNVERIFIABLE:  # the second taille: no seed without vault
            assert "neither revealed nor in the vault" in replay.notes[0]
            continue
        assert replay.verdict is Verdict.CONSISTENT, (coup, replay)


def test_an_altered_card_is_named(events: list[Any]) -> None:
    first = next(e for e in events if type(e).__name__ == "CardDealt" and e.coup == COUP)
    other = "2c" if first.card != "2c" else "3c"
    replay = replay_coup(altered(events, "CardDealt", card=other), COUP, no_vault)
    assert replay.verdict is Verdict.DISCREPANCIES
    assert replay.discrepancies == [Discrepancy(
        what="card", where=f"position {first.position} ({first.side})",
        expected=str(first.card), recorded=other)]


def test_an_altered_outcome_and_point_are_named(events: list[Any]) -> None:
    settled = next(e for e in events if type(e).__name__ == "CoupSettled" and e.coup == COUP)
    side = next(iter(settled.points))
    replay = replay_coup(altered(events, "CoupSettled",
                                 points={**settled.points, side: (settled.points[side] + 1) % 10}),
                         COUP, no_vault)
    assert replay.discrepancies == [Discrepancy(
        what="point", where=str(side), expected=str(settled.points[side]),
        recorded=str((settled.points[side] + 1) % 10))]


def test_a_missing_payout_and_a_wrong_bank_are_named(events: list[Any]) -> None:
    payouts = [e for e in events if type(e).__name__ == "PayoutMade" and e.coup == COUP]
    closed = next(e for e in events if type(e).__name__ == "CoupClosed" and e.coup == COUP)
    last = payouts[-1].payout
    without = [e for e in altered(events, "CoupClosed", bank=closed.bank + 5)
               if e is not payouts[-1]]
    replay = replay_coup(without, COUP, no_vault)
    assert replay.discrepancies == [
        Discrepancy(what="payout", where=f"{last.player} (coup {COUP})",
                    expected=f"{last.player} {last.net:+d} on {last.staked}"
                    + (f", commission {last.commission}" if last.commission else ""),
                    recorded="none"),
        Discrepancy(what="bank", where=f"after coup {COUP}",
                    expected=f"{closed.banker}: {closed.bank}",
                    recorded=f"{closed.banker}: {closed.bank + 5}"),
    ]


def test_a_seed_that_is_not_the_committed_one_is_named(events: list[Any]) -> None:
    revealed = next(e for e in events if type(e).__name__ == "ShoeSeedRevealed")
    forged = "00" * 32
    replay = replay_coup(altered(events, "ShoeSeedRevealed", seed=forged), COUP, no_vault)
    [seed] = replay.discrepancies
    assert (seed.what, seed.where) == ("seed", f"taille {revealed.taille}")
    assert seed.recorded.startswith(forged)


def test_a_coup_not_played_is_unverifiable(events: list[Any]) -> None:
    replay = replay_coup(events, 999, no_vault)
    assert (replay.verdict, replay.discrepancies) == (Verdict.UNVERIFIABLE, [])
