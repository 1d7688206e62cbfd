"""The record's bytes do not follow the code when it moves: a seeded run of each variant
records the events it recorded before the house was organised by concept.

Each digest below was taken from `sabot play --coups 40 --seed 0badc0de` run by the code as it
stood before the moves (commit 69c9d51): SHA-256 over every stored event in order, its topic
then its MessagePack state with the `timestamp` left out (the only field that depends on the
clock). A changed topic (a class that moved without keeping its topic, `domain/topics.py`),
a renamed field or an event recorded differently changes the digest.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import msgspec
import pytest

from api.cli import main

BEFORE = {
    "punto-banco": "c7b4c2c0c649637efd190452fdf89755ec848b9582ebf3c5edcd80acfeb83dea",
    "chemin-de-fer": "671fd5a663776ed5339fca16c77f0b0f8d1da8dfadb88e0cf93924930990999b",
    "deux-tableaux": "458f8779a7d60c6201d24f354fc26325d79eaa20e19344a9bc50aa8c1ee1d72c",
    "simplified": "78f4960d34b390692018f43ea54d4dfced60cb8214e8a64eccff602b632ea578",
}


def digest(path: Path) -> str:
    decoder = msgspec.msgpack.Decoder()
    encoder = msgspec.msgpack.Encoder(order="sorted")
    sha = hashlib.sha256()
    with sqlite3.connect(path) as connection:
        for topic, state in connection.execute(
                "SELECT topic, state FROM stored_events ORDER BY rowid"):
            fields = decoder.decode(state)
            fields.pop("timestamp", None)
            sha.update(topic.encode() + b"\0" + encoder.encode(fields))
    return sha.hexdigest()


@pytest.mark.parametrize("variant", sorted(BEFORE))
def test_a_seeded_run_records_the_events_it_recorded_before(
        variant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / f"{variant}.db"
    assert main(["play", "--variant", variant, "--coups", "40", "--seed", "0badc0de",
                 "--database", f"sqlite:///{path}", "--json"]) == 0
    capsys.readouterr()
    assert digest(path) == BEFORE[variant]
