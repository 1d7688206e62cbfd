"""A seeded game records the same bytes, release after release: the engine's safety net.

Each variant is played from a seed by the tests' driver (`tests.unit.play.Driver`), every
event it records is mapped to its stored form by the product's mapper
(`infra.store.mapper.MsgspecMapper`, its timestamp set to one fixed instant first: the
clock is the only thing a replay does not repeat), and the digest of the topics, versions
and state bytes is compared with the one recorded in `event_digests.json` from the code
before the engine was made faster. A change to the engine that changes an event, its
order, its fields' values or their encoding fails here.

To record new digests after a deliberate change to the events (a new class version):
`SABOT_RECORD_DIGESTS=1 pytest tests/unit/test_event_digests.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from domain.game.settings import Variant
from domain.table import commands as c
from infra.store.mapper import MsgspecMapper
from tests.unit.play import Driver, Stalled

FIXTURE = Path(__file__).with_name("event_digests.json")
INSTANT = datetime(2026, 1, 1, tzinfo=UTC)
GAMES: dict[str, dict[str, Any]] = {
    "punto-banco": {"variant": Variant.PUNTO_BANCO, "seed": 39, "players": 6},
    "chemin-de-fer": {"variant": Variant.CHEMIN_DE_FER, "seed": 39, "players": 6,
                      "retire_rate": 0.1, "banco_rate": 0.1},
    "deux-tableaux": {"variant": Variant.DEUX_TABLEAUX, "seed": 39, "players": 6,
                      "banco_rate": 0.1, "random_choices": True},
    "simplified": {"variant": Variant.SIMPLIFIED, "seed": 39, "players": 4},
    "punto-banco-in-turn": {"variant": Variant.PUNTO_BANCO, "seed": 39, "players": 6,
                            "standing": 2, "overrides": {
                                "betting_order": "rotating", "bet_seconds": 20,
                                "decision_seconds": 10, "sitting_out": "min-stake"}},
}
STEPS = 1500


@dataclass
class RecordingDriver(Driver):
    """The driver, keeping the events its table records instead of dropping them."""

    events: list[Any] = field(init=False, default_factory=list)

    def _execute(self, command: c.TableCommand) -> None:
        self.table.execute(command, self.cards)
        self.events.extend(self.table.collect_events())


def digest(game: dict[str, Any]) -> dict[str, Any]:
    driver = RecordingDriver(**game)
    try:
        for _ in range(STEPS):
            driver.step()
    except Stalled:
        pass
    mapper = MsgspecMapper()
    sha = hashlib.sha256()
    for event in driver.events:
        object.__setattr__(event, "timestamp", INSTANT)
        stored = mapper.to_stored_event(event)
        sha.update(f"{stored.topic}\x00{stored.originator_version}\x00".encode())
        sha.update(len(stored.state).to_bytes(4, "big"))
        sha.update(stored.state)
    return {"events": len(driver.events), "coups": driver.state.coup_number,
            "sha256": sha.hexdigest()}


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_seeded_game_records_the_same_events(name: str) -> None:
    recorded = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    now = digest(GAMES[name])
    if os.environ.get("SABOT_RECORD_DIGESTS") == "1":
        recorded[name] = now
        FIXTURE.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    assert now["coups"] > 20, "the seeded game should play whole coups"
    assert now == recorded[name]
