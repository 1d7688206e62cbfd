"""The log partitioned by tournament: each partition's events form their own chain, and a
break names its partition."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from api.cli import main
from domain.game.settings import Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.audit.verify import Problem, verify
from infra.errors import ChainError
from infra.store import ledger
from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import checkpoints, read_lines
from infra.store.database import PostgresDatabase
from infra.store.opening import open_store
from tests.integration.test_audit import db_id, nid_column, sql
from tests.integration.test_shoe_audit import forge_and_rechain, other_card
from tests.integration.test_store import Card, Suit, Toy, ToyApp
from tests.integration.test_table_service import SECRET, SMALL_SHOE, a_service, open_table, play
from tests.integration.test_tamper import event_row

CUP = str(Tournament.create_id("cup"))
SOLO = str(Table.create_id("solo"))


@pytest.fixture
def partitioned(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Two tables of tournament "cup" and one table outside it, played in turns."""
    monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "store.checkpoints"))
    monkeypatch.setenv("SABOT_SECRET_KEY", SECRET.hex())  # the vault's key, to open its seals
    with a_service(database_url) as service:
        solo = open_table(service, "solo", Variant.CHEMIN_DE_FER, players=3, **SMALL_SHOE)
        tables = [solo]
        for name in ("cup-1", "cup-2"):
            table_id = service.open_table(name, service.state(solo).settings,
                                          command_id=f"{name}:open", tournament="cup").table_id
            for i in range(3):
                service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{i}",
                                                       player=f"p{i}", chips=1000))
            tables.append(table_id)
        for coups in (2, 4):
            for table_id in tables:
                play(service, table_id, coups, prefix=f"{table_id}:{coups}")
    return database_url


def test_each_stream_is_chained_in_its_partition(partitioned: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    url = partitioned
    rows = sql(url, "SELECT originator_id, partition_key FROM event_chain")
    by_stream: dict[str, set[str]] = {}
    for oid, key in rows:
        by_stream.setdefault(str(oid), set()).add(key)
    assert by_stream[str(db_id(url, Table.create_id("solo")))] == {SOLO}
    for name in ("cup-1", "cup-2"):
        assert by_stream[str(db_id(url, Table.create_id(name)))] == {CUP}
    report = verify(url)
    assert report.ok, report.first_break
    assert report.partitions == 2 and report.checkpoints > 0
    (checkpoint, *_) = checkpoints(read_lines(tmp_path / "store.checkpoints"))[::-1]
    assert [p.key for p in checkpoint.partitions] == sorted([CUP, SOLO])
    assert sum(p.size for p in checkpoint.partitions) == checkpoint.size
    assert main(["audit", "verify", "--database", url]) == 0
    assert "in 2 partitions" in capsys.readouterr().out
    # each partition's chain starts afresh: its first row is digested from the genesis
    (first_solo,), (first_cup,) = (
        sql(url, "SELECT MIN(notification_id) FROM event_chain WHERE partition_key = ?", (k,))[0]
        for k in (SOLO, CUP))
    assert first_solo != first_cup


def test_an_altered_event_names_its_partition(partitioned: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    url = partitioned
    column = nid_column(url)
    ((n,),) = sql(url, f"SELECT MAX({column}) FROM stored_events WHERE originator_id = ?",
                  (db_id(url, Table.create_id("cup-2")),))
    sql(url, f"UPDATE stored_events SET state = ? WHERE {column} = ?", (b"forged", n))
    report = verify(url)
    assert report.first_break is not None
    assert report.first_break.problem == Problem.STATE_ALTERED
    assert (report.first_break.notification_id, report.first_break.partition) == (n, CUP)
    assert f"partition {CUP}" in report.first_break.where()
    assert main(["audit", "verify", "--database", url]) == 1
    assert f"notification {n}, partition {CUP}" in capsys.readouterr().out


def test_rewriting_one_partition_is_named_while_the_others_verify(partitioned: str) -> None:
    """A forger without the key changes an event of the tournament and recomputes the
    chain: every signature of that partition after the change breaks, and only those."""
    url = partitioned
    with a_service(url) as service:
        dealt = [e for e in service.events_of(Table.create_id("cup-1"))
                 if isinstance(e, Table.CardDealt)][1]
    n, _, _ = event_row(url, dealt.originator_id, dealt.originator_version)
    forge_and_rechain(url, dealt, card=other_card(dealt.card))
    assert verify(url, signatures=False).ok  # the chain alone was made to agree
    report = verify(url, all_signatures=True)
    broken = [f for f in report.findings if f.problem == Problem.SIGNATURE_INVALID]
    assert broken and {f.partition for f in broken} == {CUP}
    assert min(f.notification_id or 0 for f in broken) >= n
    assert Problem.CHECKPOINT_MISMATCH in {f.problem for f in report.findings}
    # the checkpoints sign each partition's head: they name the rewritten one, and only it
    assert {f.partition for f in report.findings
            if f.problem == Problem.CHECKPOINT_MISMATCH and f.partition is not None} == {CUP}
    signed_solo = sql(url, "SELECT COUNT(*) FROM chain_signatures s JOIN event_chain c"
                      " ON c.notification_id = s.notification_id WHERE c.partition_key = ?",
                      (SOLO,))[0][0]
    assert signed_solo > 0  # the table outside the tournament: signed, and every one holds


def test_writers_of_different_partitions_never_wait_on_each_other(postgres_url: str) -> None:
    """On PostgreSQL a writer holds its partitions' locks, not the table: another partition
    is written at once, the same partition waits, and a reader in notification order
    (`committed_head`) waits for the writer in flight."""
    with open_store(postgres_url) as store:
        database = store.database
        assert isinstance(database, PostgresDatabase)
        with database.transaction(write=True) as holder:
            ledger.lock_partitions(database, holder, [CUP])
            with database.transaction(write=True) as other:
                database.execute(other, "SET LOCAL lock_timeout = '200ms'")
                ledger.lock_partitions(database, other, [SOLO])  # at once
                with pytest.raises(psycopg.errors.LockNotAvailable):
                    ledger.lock_partitions(database, other, [CUP])
            head: list[int] = []
            reader = threading.Thread(target=lambda: head.append(ledger.committed_head(database)))
            reader.start()
            reader.join(0.5)
            assert reader.is_alive() and not head  # waits for the writer in flight
        reader.join(10)
        assert head == [0]


def test_readers_up_to_the_committed_head_never_skip_an_event(postgres_url: str) -> None:
    """Four tournaments written at once commit out of notification order; a reader that
    reads up to `committed_head` finds every event below it, every time."""
    writers = [ToyApp(url=postgres_url) for _ in range(4)]
    toys = [Toy(f"t{i}", Suit.HEARTS) for i in range(4)]

    def write(app: ToyApp, toy: Toy) -> None:
        for _ in range(40):
            for _ in range(5):
                toy.deal(Card("9", Suit.SPADES))
            app.save(toy, partitions={toy.id: f"cup-{toy.name}"})

    threads = [threading.Thread(target=write, args=pair) for pair in zip(writers, toys,
                                                                          strict=True)]
    for thread in threads:
        thread.start()
    database = writers[0].database
    reads = []
    while any(thread.is_alive() for thread in threads) or not reads:
        head = ledger.committed_head(database)
        with database.transaction(write=False) as cursor:
            seen = database.execute(cursor, "SELECT COUNT(*) AS n FROM {stored_events}"
                                    " WHERE {nid} <= ?", (head,)).fetchone()["n"]
        reads.append((head, seen))
    for thread in threads:
        thread.join()
    assert all(seen == head for head, seen in reads), [r for r in reads if r[0] != r[1]]
    assert ledger.committed_head(database) == 4 * (1 + 40 * 5)
    for app in writers:
        app.close()


def test_a_store_chained_before_partitions_opens_verifies_and_grows(
        database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store of the one global chain (no `partition_key` column, no schema version) gets the
    column when next opened, every old event in the main partition; it verifies, and grows by
    partitions."""
    monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "store.checkpoints"))
    with ToyApp(url=database_url) as app:
        old = Toy("old", Suit.HEARTS)
        for _ in range(3):
            old.deal(Card("9", Suit.SPADES))
            app.save(old)
    sql(database_url, "DROP INDEX event_chain_partition")
    sql(database_url, "ALTER TABLE event_chain DROP COLUMN partition_key")  # as it was,
    for table in ("schema_version", "api_token_generation", "partition_homes"):  # before them
        sql(database_url, f"DROP TABLE {table}")
    with ToyApp(url=database_url) as app:
        assert verify(database_url).ok
        new = Toy("new", Suit.SPADES)
        new.deal(Card("K", Suit.HEARTS))
        again = app.repository.get(old.id)
        again.deal(Card("K", Suit.HEARTS))
        app.save(new, again, partitions={new.id: CUP})  # the old stream stays in the main one
    report = verify(database_url)
    assert report.ok, (report.first_break, report.findings)
    assert report.partitions == 2
    assert sql(database_url, "SELECT DISTINCT partition_key FROM event_chain"
               " ORDER BY partition_key") == [("",), (CUP,)]


def test_a_checkpoint_never_signs_events_altered_since_they_were_written(
        database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Merkle tree is folded when a checkpoint is written, after the writes: an event
    altered in between (without the key to re-sign its chain) stops the fold, named."""
    monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "store.checkpoints"))
    with ToyApp(url=database_url) as app:
        toy = Toy("toy", Suit.HEARTS)
        for _ in range(3):
            toy.deal(Card("9", Suit.SPADES))
            app.save(toy, partitions={toy.id: CUP})
        column = nid_column(database_url)
        ((n, state),) = sql(database_url, f"SELECT {column}, state FROM stored_events"
                            " WHERE originator_version = 2")
        sql(database_url, f"UPDATE stored_events SET state = ? WHERE {column} = ?",
            (bytes(state) + b"\x00", n))
        with pytest.raises(ChainError, match=f"notification {n} is not folded"):
            write_checkpoint(app)
        sql(database_url, f"UPDATE stored_events SET state = ? WHERE {column} = ?",
            (bytes(state), n))
        checkpoint = write_checkpoint(app)
        assert checkpoint is not None and checkpoint.size == 4
    assert verify(database_url).ok
