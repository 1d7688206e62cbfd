"""The engine records the same bytes, however fast it is made (issue 39).

A seeded game of each variant, played by the product's bots (`tests/unit/play.Driver`), gives
a sequence of events; each is encoded by the store's mapper (`MsgspecMapper`, the bytes a
store keeps), its timestamp left out (the only field that depends on when it runs), and the
whole is hashed. The digests were taken on the engine before its hot path was rewritten: any
change to an event's class, field, field order or value changes them.
"""

from __future__ import annotations

import hashlib

import msgspec
import pytest

from domain.game.settings import Variant
from infra.store.mapper import MsgspecMapper
from tests.unit.play import Driver

COUPS = 40
IN_TURN = {"betting_order": "rotating", "bet_seconds": 20, "decision_seconds": 10,
           "sitting_out": "min-stake"}
"""Bets in turn against a bet clock: each turn to bet is recorded too."""
GAMES: dict[str, tuple[Variant, dict[str, object], str]] = {
    "punto banco": (Variant.PUNTO_BANCO, {},
        "dd767ede89efb63aef315bc39e89c722b5293313d36e982ee891d0832d6a3dcb"),
    "chemin de fer": (Variant.CHEMIN_DE_FER, {},
        "567f64432bf6116621ca7588761e7a3dc438da089fbd15db349ef6c43dc94a10"),
    "à deux tableaux": (Variant.DEUX_TABLEAUX, {},
        "c85363012ddaa0d3883225d40e70690c76a8b4d291628b249408ebd0cc7ece13"),
    "the family game": (Variant.SIMPLIFIED, {},
        "9b2b0c16331f1ebb2ad7342f206e62256ec1fa66ab9e983119ad104d832ffe0d"),
    "punto banco in turn": (Variant.PUNTO_BANCO, IN_TURN,
        "e62fb83282aef9a7ad7c0041944517343ce79852cba1996c2fce4be44a4e14d6"),
}


class RecordingDriver(Driver):
    """The tests' driver, keeping every event the table records."""

    def __post_init__(self) -> None:
        self.events: list[object] = []
        super().__post_init__()

    def _execute(self, command: object) -> None:
        self.table.execute(command, self.cards)  # type: ignore[arg-type]
        self.events.extend(self.table.collect_events())


def digest(events: list[object]) -> str:
    mapper = MsgspecMapper()
    hashed = hashlib.sha256()
    for event in events:
        stored = mapper.to_stored_event(event)  # type: ignore[arg-type]
        state = msgspec.msgpack.decode(stored.state)
        state.pop("timestamp")
        hashed.update(f"{stored.originator_version} {stored.topic}\n".encode())
        hashed.update(msgspec.msgpack.encode(state))
    return hashed.hexdigest()


def played(game: str) -> list[object]:
    variant, overrides, _ = GAMES[game]
    driver = RecordingDriver(variant, seed=39, players=6, standing=2, retire_rate=0.1,
                             overrides=overrides)
    for _ in range(COUPS):
        driver.coup()
    return driver.events


@pytest.mark.parametrize("game", list(GAMES))
def test_a_seeded_game_records_the_same_events(game: str) -> None:
    events = played(game)
    assert len(events) > COUPS * 10
    assert digest(events) == GAMES[game][2]
