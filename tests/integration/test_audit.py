"""`verify` and `sabot audit verify`: an intact store passes; each kind of tampering made
directly with SQL is caught, and the first broken event is named exactly.

Two toys are written interleaved: A gets versions 1-4 and B versions 1-3, at notifications
A1=1 A2=2 B1=3 A3=4 B2=5 A4=6 B3=7.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit
from uuid import UUID

import psycopg
import pytest

from api.cli import main
from infra.audit.snapshots import snapshots_match_events
from infra.audit.verify import Finding, Problem, verify
from infra.errors import NotAStore
from infra.store.chain import GENESIS, global_digest, stream_digest
from infra.store.opening import Store
from tests.integration.test_store import (
    Card,
    SnapshottingToyApp,
    Suit,
    Toy,
    ToyApp,
    a_toy_saved_twice,
)


@dataclass(frozen=True)
class Filled:
    url: str
    a: UUID
    b: UUID
    nid: dict[tuple[str, int], int]


@pytest.fixture
def filled(database_url: str) -> Iterator[Filled]:
    with ToyApp(url=database_url) as app:
        a, b = Toy("a", Suit.HEARTS), Toy("b", Suit.SPADES)
        a.deal(Card("9", Suit.SPADES))
        app.save(a)  # A1 A2
        app.save(b)  # B1
        a.deal(Card("K", Suit.HEARTS))
        app.save(a)  # A3
        b.deal(Card("2", Suit.HEARTS))
        app.save(b)  # B2
        a.deal(Card("5", Suit.HEARTS))
        app.save(a)  # A4
        b.deal(Card("7", Suit.SPADES))
        app.save(b)  # B3
        names = {a.id: "A", b.id: "B"}
        nid = {
            (names[n.originator_id], n.originator_version): n.id  # type: ignore[index]
            for n in app.recorder.select_notifications(start=1, limit=100)
        }
    assert nid == {("A", 1): 1, ("A", 2): 2, ("B", 1): 3, ("A", 3): 4, ("B", 2): 5, ("A", 4): 6,
                   ("B", 3): 7}
    yield Filled(database_url, a.id, b.id, nid)


def sql(url: str, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """Run one statement straight on the database, as someone tampering with it would."""
    if url.startswith("sqlite:"):
        with sqlite3.connect(url[len("sqlite:///") :]) as connection:
            return connection.execute(statement, params).fetchall()
    parts = urlsplit(url)
    schema = parse_qs(parts.query)["schema"][0]
    with psycopg.connect(parts._replace(query="").geturl(), autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{schema}"')
        cursor = connection.execute(statement.replace("?", "%s"), params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


def db_id(url: str, originator_id: UUID) -> Any:
    return originator_id.hex if url.startswith("sqlite:") else originator_id


def nid_column(url: str) -> str:
    return "rowid" if url.startswith("sqlite:") else "notification_id"


def first_break(url: str) -> Finding:
    report = verify(url)
    assert not report.ok
    assert report.first_break is not None
    return report.first_break


def where(finding: Finding) -> tuple[str, UUID | None, int | None, int | None]:
    return (
        finding.problem,
        finding.originator_id,
        finding.originator_version,
        finding.notification_id,
    )


def test_intact_store_verifies(filled: Filled) -> None:
    report = verify(filled.url)
    assert report.ok
    assert (report.events, report.streams, report.head_notification_id) == (7, 2, 7)
    assert len(bytes.fromhex(report.head_digest)) == 32
    assert report.first_break is None
    assert report.checks == ("chain",)


def test_head_digest_is_the_documented_computation(filled: Filled) -> None:
    rows = sql(
        filled.url,
        f"SELECT {nid_column(filled.url)}, originator_id, originator_version, topic, state"
        f" FROM stored_events ORDER BY {nid_column(filled.url)}",
    )
    streams: dict[str, bytes] = {}
    head = GENESIS
    for notification_id, originator_id, version, topic, state in rows:
        oid = UUID(str(originator_id))
        streams[str(oid)] = stream_digest(
            streams.get(str(oid), GENESIS), oid, version, topic, bytes(state)
        )
        head = global_digest(head, notification_id, streams[str(oid)])
    assert verify(filled.url).head_digest == head.hex()


def test_update_of_a_state_is_named(filled: Filled) -> None:
    sql(
        filled.url,
        "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = 2",
        (b"\x81\xa4card\x82\xa4rank\xa1A\xa4suit\xa1s", db_id(filled.url, filled.a)),
    )
    assert where(first_break(filled.url)) == (Problem.STATE_ALTERED, filled.a, 2, 2)


def test_deleted_event_is_named(filled: Filled) -> None:
    sql(
        filled.url,
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 3",
        (db_id(filled.url, filled.a),),
    )
    assert where(first_break(filled.url)) == (Problem.EVENT_MISSING, filled.a, 3, 4)


def test_forged_event_is_named(filled: Filled) -> None:
    topic, state = sql(
        filled.url,
        "SELECT topic, state FROM stored_events WHERE originator_id = ? AND originator_version = 4",
        (db_id(filled.url, filled.a),),
    )[0]
    sql(
        filled.url,
        "INSERT INTO stored_events (originator_id, originator_version, topic, state)"
        " VALUES (?, 5, ?, ?)",
        (db_id(filled.url, filled.a), topic, bytes(state)),
    )
    assert where(first_break(filled.url)) == (Problem.NOT_IN_CHAIN, filled.a, 5, 8)


def test_swapped_states_are_named_as_reordering(filled: Filled) -> None:
    a = db_id(filled.url, filled.a)
    (second,), (third,) = (
        sql(
            filled.url,
            "SELECT state FROM stored_events WHERE originator_id = ? AND originator_version = ?",
            (a, version),
        )[0]
        for version in (2, 3)
    )
    for version, state in ((2, third), (3, second)):
        sql(
            filled.url,
            "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = ?",
            (bytes(state), a, version),
        )
    finding = first_break(filled.url)
    assert where(finding) == (Problem.ORDER_CHANGED, filled.a, 2, 2)
    assert "version 3" in finding.detail


def test_deleted_chain_row_is_named(filled: Filled) -> None:
    sql(filled.url, "DELETE FROM event_chain WHERE notification_id = ?", (filled.nid["B", 2],))
    assert where(first_break(filled.url)) == (Problem.NOT_IN_CHAIN, filled.b, 2, 5)


def test_swapped_positions_are_named_as_reordering(filled: Filled) -> None:
    column = nid_column(filled.url)
    for old, new in ((4, 100), (5, 4), (100, 5)):  # A3 and B2 trade notification ids
        sql(filled.url, f"UPDATE stored_events SET {column} = ? WHERE {column} = ?", (new, old))
    finding = first_break(filled.url)
    assert where(finding) == (Problem.ORDER_CHANGED, filled.b, 2, 4)


def test_altered_chain_digest_is_named(filled: Filled) -> None:
    sql(
        filled.url,
        "UPDATE event_chain SET stream_digest = ? WHERE notification_id = 3",
        (bytes(32),),
    )
    assert where(first_break(filled.url)) == (Problem.CHAIN_ALTERED, filled.b, 1, 3)


def test_event_removed_with_its_chain_row_is_named(filled: Filled) -> None:
    for table, column in (("stored_events", nid_column(filled.url)),
                          ("event_chain", "notification_id")):
        sql(filled.url, f"DELETE FROM {table} WHERE {column} = 4", ())  # A3
    finding = first_break(filled.url)
    assert where(finding) == (Problem.EVENT_MISSING, filled.b, 2, 5)
    assert "removed" in finding.detail


def test_rewritten_chain_is_caught_by_an_anchor(filled: Filled) -> None:
    published = {
        n: bytes(digest)  # digests published at notifications 2 and 7, before the forgery
        for n, digest in sql(
            filled.url,
            "SELECT notification_id, global_digest FROM event_chain"
            " WHERE notification_id IN (2, 7)",
        )
    }
    sql(
        filled.url,
        "UPDATE stored_events SET state = ? WHERE originator_id = ? AND originator_version = 1",
        (b"\x80", db_id(filled.url, filled.b)),
    )
    rechain(filled.url)  # a forger with write access recomputes every digest after the change
    assert verify(filled.url, signatures=False).ok  # the bare chain cannot see it...
    assert verify(filled.url, anchors={2: published[2]}, signatures=False).ok
    finding = verify(filled.url, anchors=published, signatures=False).first_break  # an anchor can
    assert finding is not None
    assert where(finding) == (Problem.ANCHOR_MISMATCH, filled.b, 3, 7)


def test_truncated_store_is_caught_by_an_anchor(filled: Filled) -> None:
    anchor = (7, bytes.fromhex(verify(filled.url).head_digest))
    for table, column in (("stored_events", nid_column(filled.url)),
                          ("event_chain", "notification_id")):
        sql(filled.url, f"DELETE FROM {table} WHERE {column} = 7", ())
    assert verify(filled.url, signatures=False).ok  # the bare chain cannot see it...
    finding = verify(filled.url, anchors=dict([anchor]), signatures=False).first_break
    assert finding is not None
    assert (finding.problem, finding.notification_id) == (Problem.EVENT_MISSING, 7)


def rechain(url: str) -> None:
    column = nid_column(url)
    rows = sql(
        url,
        f"SELECT {column}, originator_id, originator_version, topic, state FROM stored_events"
        f" ORDER BY {column}",
    )
    streams: dict[str, bytes] = {}
    partition_of = {str(oid): key for oid, key in
                    sql(url, "SELECT originator_id, partition_key FROM event_chain")}
    heads: dict[str, bytes] = {}
    sql(url, "DELETE FROM event_chain")
    for notification_id, originator_id, version, topic, state in rows:
        oid = UUID(str(originator_id))
        streams[str(oid)] = stream_digest(
            streams.get(str(oid), GENESIS), oid, version, topic, bytes(state)
        )
        key = partition_of.get(str(originator_id), "")  # a forged stream: the main partition
        heads[key] = global_digest(heads.get(key, GENESIS), notification_id, streams[str(oid)])
        sql(
            url,
            "INSERT INTO event_chain (notification_id, originator_id, originator_version,"
            " stream_digest, global_digest, partition_key) VALUES (?, ?, ?, ?, ?, ?)",
            (notification_id, originator_id, version, streams[str(oid)], heads[key], key),
        )


def test_extra_checks_plug_in(filled: Filled) -> None:
    seen: list[int] = []

    def count_streams(store: Store) -> list[Finding]:
        seen.append(store.recorder.max_notification_id() or 0)
        return [Finding(problem="shoe mismatch", detail="card 3 differs", notification_id=4)]

    def crashes(store: Store) -> list[Finding]:
        raise RuntimeError("boom")

    report = verify(filled.url, extra_checks=[count_streams, crashes])
    assert seen == [7]
    assert not report.ok
    assert report.first_break is None
    assert report.checks == ("chain", "count_streams", "crashes")
    assert [(f.check, f.problem) for f in report.findings] == [
        ("count_streams", "shoe mismatch"),
        ("crashes", Problem.CHECK_FAILED),
    ]


def test_extra_checks_do_not_run_on_a_broken_chain(filled: Filled) -> None:
    sql(filled.url, "DELETE FROM event_chain WHERE notification_id = 1")
    calls: list[str] = []
    report = verify(filled.url, extra_checks=[lambda store: calls.append("ran") or []])
    assert calls == []
    assert report.first_break is not None
    assert report.checks == ("chain",)


def test_verify_of_an_empty_store(database_url: str) -> None:
    with ToyApp(url=database_url):
        pass
    report = verify(database_url)
    assert (report.ok, report.events, report.head_notification_id) == (True, 0, None)


def test_cli_exit_codes(filled: Filled, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify", "--database", filled.url]) == 0
    out = capsys.readouterr().out
    assert "intact" in out
    assert f"7:{verify(filled.url).head_digest}" in out

    sql(
        filled.url,
        "DELETE FROM stored_events WHERE originator_id = ? AND originator_version = 3",
        (db_id(filled.url, filled.a),),
    )
    assert main(["audit", "verify", "--database", filled.url]) == 1
    out = capsys.readouterr().out
    assert f"event missing at stream {filled.a}, version 3, notification 4" in out

    assert main(["audit", "verify", "--json", "--database", filled.url]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    assert report["first_break"]["problem"] == "event missing"
    assert report["first_break"]["notification_id"] == 4


def test_cli_anchor_option(filled: Filled, capsys: pytest.CaptureFixture[str]) -> None:
    head = verify(filled.url).head_digest
    assert main(["audit", "verify", "--database", filled.url, "--anchor", f"7:{head}"]) == 0
    wrong = f"7:{'00' * 32}"
    assert main(["audit", "verify", "--database", filled.url, "--anchor", wrong]) == 1
    assert main(["audit", "verify", "--database", filled.url, "--anchor", "x"]) == 2
    capsys.readouterr()


def test_cli_unreadable_store(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify", "--database", f"sqlite:///{tmp_path}/none.db"]) == 2
    assert main(["audit", "verify", "--database", "oracle://db"]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2
    assert all(line.startswith("sabot: ") for line in errors)


def test_not_a_store(tmp_path: Any) -> None:
    sqlite3.connect(tmp_path / "other.db").execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(NotAStore):
        verify(f"sqlite:///{tmp_path}/other.db")


def test_altered_snapshot_is_caught_by_the_snapshot_check(database_url: str) -> None:
    with SnapshottingToyApp(url=database_url) as app:
        toy = a_toy_saved_twice(app)  # snapshots at versions 2 and 4
    assert verify(database_url, extra_checks=[snapshots_match_events]).ok
    sql(
        database_url,
        "UPDATE stored_snapshots SET state ="
        " (SELECT state FROM stored_snapshots WHERE originator_version = 2)"
        " WHERE originator_version = 4",
    )
    report = verify(database_url, extra_checks=[snapshots_match_events])
    assert report.first_break is None  # the chain does not cover snapshots...
    found = [(f.check, f.problem, f.originator_id, f.originator_version) for f in report.findings]
    assert found == [("snapshots", "snapshot altered", toy.id, 4)]  # ...the snapshot check does


def test_snapshot_check_without_snapshots(filled: Filled) -> None:
    report = verify(filled.url, extra_checks=[snapshots_match_events])
    assert (report.ok, report.checks) == (True, ("chain", "snapshots"))


def test_empty_postgres_schema_is_not_a_store(postgres_url: str) -> None:
    with pytest.raises(NotAStore) as raised:
        verify(postgres_url)
    assert "\n" not in str(raised.value)
    assert "stored_events" in str(raised.value)


def test_cli_snapshots_option(database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with SnapshottingToyApp(url=database_url) as app:
        a_toy_saved_twice(app)
    assert main(["audit", "verify", "--snapshots", "--database", database_url]) == 0
    sql(
        database_url,
        "UPDATE stored_snapshots SET state ="
        " (SELECT state FROM stored_snapshots WHERE originator_version = 2)"
        " WHERE originator_version = 4",
    )
    assert main(["audit", "verify", "--database", database_url]) == 1  # complete by default
    assert "[snapshots] snapshot altered" in capsys.readouterr().out
    assert main(["audit", "verify", "--snapshots", "--database", database_url]) == 1
    assert "[snapshots] snapshot altered" in capsys.readouterr().out
