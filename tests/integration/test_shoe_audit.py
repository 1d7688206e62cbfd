"""The shoe audit (`infra.audit.shoes`): revealed shoes are re-dealt and every card checked.

Most tests take the events of a short bot game (SQLite is only the vehicle) and doctor the
list in memory: one wrong card, a burned card, a position, a seed, the entropy's order. The
last ones forge the stored history itself and re-chain it, as a writer with database access
could: the chain then verifies, and only the shoe audit (and `sabot audit verify`) catches it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest

from api.cli import main
from domain.game.settings import Variant
from domain.table.aggregate import Table
from domain.table.commands import ShuffleShoe
from domain.table.state import Phase
from infra.audit.shoes import SHOE_MISMATCH, ShoeAudit, audit_events
from infra.audit.verify import verify
from tests.integration.test_audit import db_id, rechain, sql
from tests.integration.test_table_service import (
    SECRET,
    SMALL_SHOE,
    a_service,
    open_table,
    play,
)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Any]]]:
    """A chemin de fer game of one-deck shoes: two tailles revealed, a third being played."""
    url = f"sqlite:///{tmp_path_factory.mktemp('shoes')}/sabot.db"
    with a_service(url) as service:
        table_id = open_table(service, "shoes", Variant.CHEMIN_DE_FER, **SMALL_SHOE)
        coups = 10
        while service.state(table_id).taille < 3:
            play(service, table_id, coups, prefix=f"bot-{coups}")
            coups += 5
        events = service.events_of(table_id)
    yield url, events


def revealed_tailles(events: list[Any]) -> int:
    return sum(isinstance(e, Table.ShoeSeedRevealed) for e in events)


def doctored(events: list[Any], kind: type | tuple[type, ...], nth: int,
             change: Callable[[Any], dict[str, Any]]) -> tuple[list[Any], Any]:
    """The events with the `nth` event of `kind` replaced by a changed copy."""
    hits = [i for i, e in enumerate(events) if isinstance(e, kind)]
    i = hits[nth]
    copy = list(events)
    copy[i] = dataclasses.replace(events[i], **change(events[i]))
    return copy, copy[i]


def other_card(card: str) -> str:
    return "Kh" if card != "Kh" else "Qh"


def test_an_honest_game_passes(game: tuple[str, list[Any]]) -> None:
    _, events = game
    assert revealed_tailles(events) >= 2
    result = audit_events(events)
    assert result.ok, result.mismatches
    assert len(result.checked) == revealed_tailles(events)
    assert [t.taille for t in result.checked] == [1, 2][: len(result.checked)]
    assert [t.taille for t in result.pending] == [len(result.checked) + 1]
    cards = sum(isinstance(e, Table.CardBurned | Table.CardDealt | Table.ThirdCardDrawn)
                and e.originator_version < _last_reveal(events) for e in events)
    assert result.cards == cards
    assert all(t.table == "shoes" for t in result.checked)


def _last_reveal(events: list[Any]) -> int:
    return max(e.originator_version for e in events if isinstance(e, Table.ShoeSeedRevealed))


def test_one_wrong_dealt_card_is_the_mismatch_reported(game: tuple[str, list[Any]]) -> None:
    _, events = game
    forged, event = doctored(events, Table.CardDealt, 7, lambda e: {"card": other_card(e.card)})
    honest = events[forged.index(event)]
    result = audit_events(forged)
    assert not result.ok
    (mismatch,) = result.mismatches
    assert (mismatch.taille.taille, mismatch.position, mismatch.expected, mismatch.recorded) == (
        1, event.position, honest.card, event.card)
    assert mismatch.version == event.originator_version
    finding = mismatch.finding()
    assert finding.problem == SHOE_MISMATCH and finding.check == "shoes"
    assert f"position {event.position}" in finding.detail and "taille 1" in finding.detail
    assert len(result.checked) == revealed_tailles(events) - 1  # the other taille passes


def test_a_wrong_burned_card_or_third_card_is_caught(game: tuple[str, list[Any]]) -> None:
    _, events = game
    for kind in (Table.CardBurned, Table.ThirdCardDrawn):
        forged, event = doctored(events, kind, 0, lambda e: {"card": other_card(e.card)})
        (mismatch,) = audit_events(forged).mismatches
        assert (mismatch.position, mismatch.recorded) == (event.position, event.card)


def test_a_card_out_of_position_is_caught(game: tuple[str, list[Any]]) -> None:
    _, events = game
    forged, event = doctored(events, Table.CardDealt, 3, lambda e: {"position": e.position + 1})
    (mismatch,) = audit_events(forged).mismatches
    assert mismatch.position == event.position
    assert "position" in mismatch.detail


def test_a_seed_that_is_not_the_committed_one_is_caught(game: tuple[str, list[Any]]) -> None:
    _, events = game
    forged, _ = doctored(events, Table.ShoeSeedRevealed, 0, lambda e: {"seed": "00" * 32})
    (mismatch,) = audit_events(forged).mismatches
    assert "commitment" in mismatch.detail and mismatch.taille.taille == 1
    forged, _ = doctored(events, Table.ShoeSeedRevealed, 0, lambda e: {"seed": "not hex"})
    assert "hexadecimal" in audit_events(forged).mismatches[0].detail


def test_the_entropy_and_the_cut_count(game: tuple[str, list[Any]]) -> None:
    _, events = game
    forged, _ = doctored(events, Table.EntropyContributed, 0, lambda e: {"entropy": "ff"})
    assert not audit_events(forged).ok
    forged, _ = doctored(events, Table.ShoeCut, 0, lambda e: {"position": e.position + 1})
    assert not audit_events(forged).ok


def test_an_unrevealed_taille_is_pending_not_failed(game: tuple[str, list[Any]]) -> None:
    _, events = game
    first_reveal = next(i for i, e in enumerate(events) if isinstance(e, Table.ShoeSeedRevealed))
    result = audit_events(events[:first_reveal])
    assert result.ok
    assert result.checked == [] and [t.taille for t in result.pending] == [1]


def test_a_physical_shoe_is_skipped(game: tuple[str, list[Any]]) -> None:
    _, events = game
    forged, _ = doctored(events, Table.ShoeShuffled, 0, lambda e: {"physical": True})
    forged, _ = doctored(forged, Table.CardDealt, 0, lambda e: {"card": other_card(e.card)})
    result = audit_events(forged)
    assert result.ok
    assert [t.taille for t in result.physical] == [1]
    assert 1 not in [t.taille for t in result.checked]


# --- a forged history, re-chained ---------------------------------------------------------


def forge_and_rechain(url: str, event: Any, **changes: Any) -> None:
    """Rewrite one stored event's state and recompute the whole chain after it."""
    (state,), = sql(url, "SELECT state FROM stored_events WHERE originator_id = ?"
                    " AND originator_version = ?",
                    (db_id(url, event.originator_id), event.originator_version))
    fields = msgspec.msgpack.decode(bytes(state))
    fields.update(changes)
    sql(url, "UPDATE stored_events SET state = ? WHERE originator_id = ?"
        " AND originator_version = ?",
        (msgspec.msgpack.encode(fields), db_id(url, event.originator_id),
         event.originator_version))
    rechain(url)


def test_sabot_audit_verify_re_deals_the_shoes(database_url: str,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABOT_SECRET_KEY", SECRET.hex())  # verify opens the vault's seals
    with a_service(database_url) as service:
        table_id = open_table(service, "cli", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
        play(service, table_id, 8)
        if service.state(table_id).phase is Phase.NO_SHOE:
            service.execute(table_id, ShuffleShoe(command_id="cli:next-shoe"))
        events = service.events_of(table_id)
    assert revealed_tailles(events) >= 1
    assert main(["audit", "verify", "--database", database_url]) == 0
    out = capsys.readouterr().out
    assert "re-dealt" in out and "PENDING: table cli, taille" in out and "intact" in out

    dealt = [e for e in events if isinstance(e, Table.CardDealt)][2]
    forge_and_rechain(database_url, dealt, card=other_card(dealt.card))
    shoes = ShoeAudit()
    report = verify(database_url, extra_checks=[shoes], signatures=False)  # the bare chain
    assert report.first_break is None  # the chain was recomputed: it cannot tell
    assert not report.ok
    (finding,) = report.findings
    assert (finding.check, finding.originator_id, finding.originator_version) == (
        "shoes", table_id, dealt.originator_version)

    assert main(["audit", "verify", "--database", database_url]) == 1
    out = capsys.readouterr().out
    assert f"FAILED:  [shoes] shoe mismatch at stream {table_id}" in out
    assert f"table cli, taille 1: position {dealt.position}" in out
    assert main(["audit", "verify", "--json", "--database", database_url]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["ok"] is False
    (mismatch,) = body["shoes"]["mismatches"]
    assert (mismatch["position"], mismatch["expected"], mismatch["recorded"]) == (
        dealt.position, dealt.card, other_card(dealt.card))
