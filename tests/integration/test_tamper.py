"""The tamper suite: each attack of the threat model, made straight on the database by someone
with full access to it and to the code but not to the signing key, is caught by
`sabot audit verify` (exit 1), which names what differs; the untouched store verifies.

Every test plays the same short chemin de fer game (two tailles, snapshots at versions 100
and 200, every projection run), closes the service (which writes a checkpoint to the file
beside the store, or to `$SABOT_CHECKPOINTS` on PostgreSQL), then tampers.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api.cli import main
from domain.game.settings import Variant
from domain.table.aggregate import Table
from infra.audit.checks import complete_checks
from infra.audit.shoes import ShoeAudit
from infra.audit.verify import AuditReport, Finding, Problem, verify
from infra.services.tables import TableService
from infra.store.chain import canonical_bytes, global_digest, stream_digest
from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import (
    WriterTrust,
    append_line,
    checkpoint_path,
    checkpoints,
    read_lines,
    sign_checkpoint,
    tree_head,
)
from infra.store.merkle import Frontier, event_leaf, verify_inclusion
from infra.store.opening import open_store
from infra.store.signing import Signer, SigningKeyError, create_key
from infra.store.witness import WitnessRefusal, state_path, witness
from projections.audit_port import PROJECTIONS
from projections.registry import VIEWS
from projections.runner import Runner
from tests.integration.test_audit import db_id, nid_column, rechain, sql
from tests.integration.test_shoe_audit import forge_and_rechain, other_card
from tests.integration.test_table_service import SECRET, SMALL_SHOE, a_service, open_table, play


@dataclass(frozen=True)
class Played:
    url: str
    table_id: uuid.UUID
    events: list[Any]
    count: int


def a_game(url: str, coups: int = 12, *, name: str = "tamper") -> TableService:
    service = a_service(url)
    table_id = open_table(service, name, Variant.CHEMIN_DE_FER, players=3, **SMALL_SHOE)
    play(service, table_id, coups)
    runner = Runner(service, VIEWS)
    for view in VIEWS:
        runner.catch_up(view.name)
    return service


@pytest.fixture
def played(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Played:
    monkeypatch.setenv("SABOT_SECRET_KEY", SECRET.hex())  # the vault's key, to open its seals
    if database_url.startswith("postgresql"):
        monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "pg.checkpoints"))
    with a_game(database_url) as service:
        (table_id,) = {e.originator_id for e in service.recorder.select_notifications(1, 1)}
        events = service.events_of(table_id)
    return Played(database_url, table_id, events, len(events))


def audit(url: str) -> AuditReport:
    return verify(url, extra_checks=[ShoeAudit(), *complete_checks(PROJECTIONS)])


def caught(played: Played, problem: str, capsys: pytest.CaptureFixture[str]) -> Finding:
    """verify fails and names `problem`; the CLI exits 1 and prints it. The first such."""
    report = audit(played.url)
    assert not report.ok
    found = [f for f in (report.first_break, *report.findings)
             if f is not None and f.problem == problem]
    assert found, f"{problem!r} not among {report.first_break} {report.findings}"
    assert main(["audit", "verify", "--database", played.url]) == 1
    out = capsys.readouterr().out
    assert problem in out and "the store is NOT intact" in out
    return found[0]


def event_row(url: str, table_id: uuid.UUID, version: int) -> tuple[int, str, bytes]:
    ((nid, topic, state),) = sql(
        url, f"SELECT {nid_column(url)}, topic, state FROM stored_events"
        " WHERE originator_id = ? AND originator_version = ?",
        (db_id(url, table_id), version))
    return int(nid), str(topic), bytes(state)


def last_nid(url: str) -> int:
    ((n,),) = sql(url, f"SELECT MAX({nid_column(url)}) FROM stored_events")
    return int(n)


# --- the untouched store --------------------------------------------------------------


def test_the_untouched_store_verifies(played: Played,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    report = audit(played.url)
    assert report.ok, report.findings
    assert report.tree_size == report.events == played.count
    assert report.checkpoints >= 1
    assert report.trust == "the store's key file"
    assert report.checks == ("chain", "shoes", "snapshots", "vault", "commands", "attribution",
                             "views")
    assert main(["audit", "verify", "--database", played.url]) == 0
    out = capsys.readouterr().out
    assert "intact" in out and "checkpoints: 1 matched" in out
    every = verify(played.url, all_signatures=True)
    assert every.ok and every.signatures > 0 and every.covered == 0


# --- the events and the chain ---------------------------------------------------------


def test_deleting_the_last_events_with_their_chain_rows(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    cut = last_nid(played.url) - 5
    for table, column in (("stored_events", nid_column(played.url)),
                          ("event_chain", "notification_id"),
                          ("chain_signatures", "notification_id")):
        sql(played.url, f"DELETE FROM {table} WHERE {column} > ?", (cut,))
    assert verify(played.url, signatures=False).ok  # the bare chain cannot see it
    finding = caught(played, Problem.STORE_TRUNCATED, capsys)
    assert finding.notification_id == cut + 5
    assert f"the store holds {played.count - 5}" in finding.detail


def test_changing_an_event_and_recomputing_the_whole_chain(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    dealt = [e for e in played.events if isinstance(e, Table.CardDealt)][3]
    forge_and_rechain(played.url, dealt, card=other_card(dealt.card))
    assert verify(played.url, signatures=False).ok  # the bare chain cannot see it
    caught(played, Problem.CHECKPOINT_MISMATCH, capsys)
    finding = caught(played, Problem.SIGNATURE_INVALID, capsys)
    # the first transaction whose signature fails is the forged one: the deal
    assert (finding.originator_id, finding.originator_version) == (
        played.table_id, dealt.originator_version)


def test_appending_a_forged_event_with_correct_links(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    version = played.events[-1].originator_version
    _, topic, state = event_row(played.url, played.table_id, version)
    head = last_nid(played.url)
    ((previous_global,),) = sql(played.url, "SELECT global_digest FROM event_chain"
                                " WHERE notification_id = ?", (head,))
    ((previous_stream,),) = sql(played.url, "SELECT stream_digest FROM event_chain"
                                " WHERE originator_id = ? AND originator_version = ?",
                                (db_id(played.url, played.table_id), version))
    sql(played.url, f"INSERT INTO stored_events ({nid_column(played.url)}, originator_id,"
        " originator_version, topic, state) VALUES (?, ?, ?, ?, ?)",
        (head + 1, db_id(played.url, played.table_id), version + 1, topic, state))
    stream = stream_digest(bytes(previous_stream), played.table_id, version + 1, topic, state)
    sql(played.url, "INSERT INTO event_chain SELECT ?, ?, ?, ?, ?, partition_key"
        " FROM event_chain WHERE notification_id = ?",
        (head + 1, db_id(played.url, played.table_id), version + 1, stream,
         global_digest(bytes(previous_global), head + 1, stream), head))
    assert verify(played.url, signatures=False).ok  # the links are right
    finding = caught(played, Problem.UNSIGNED_HEAD, capsys)
    assert (finding.originator_id, finding.originator_version, finding.notification_id) == (
        played.table_id, version + 1, head + 1)

    sql(played.url, "INSERT INTO chain_signatures SELECT ?, key_id, signature"
        " FROM chain_signatures WHERE notification_id = ?", (head + 1, head))
    finding = caught(played, Problem.SIGNATURE_INVALID, capsys)  # an old signature, copied
    assert finding.notification_id == head + 1


def test_reordering_events(played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    a = db_id(played.url, played.table_id)
    (_, _, second), (_, _, third) = (event_row(played.url, played.table_id, v) for v in (30, 31))
    for version, state in ((30, third), (31, second)):
        sql(played.url, "UPDATE stored_events SET state = ? WHERE originator_id = ?"
            " AND originator_version = ?", (state, a, version))
    finding = caught(played, Problem.ORDER_CHANGED, capsys)
    assert (finding.originator_id, finding.originator_version) == (played.table_id, 30)


def test_inserting_an_event_and_recomputing_every_hash(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    column, at = nid_column(played.url), 50
    _, topic, state = event_row(played.url, played.table_id, 1)
    for shift in (10**6, 1 - 10**6):  # move every later event up by one
        sql(played.url, f"UPDATE stored_events SET {column} = {column} + ? WHERE {column} > ?",
            (shift, at if shift > 0 else 10**6))
    forged = uuid.uuid4()
    sql(played.url, f"INSERT INTO stored_events ({column}, originator_id, originator_version,"
        " topic, state) VALUES (?, ?, 1, ?, ?)", (at + 1, db_id(played.url, forged), topic,
                                                  state))
    rechain(played.url)
    assert verify(played.url, signatures=False).ok  # every hash recomputed
    caught(played, Problem.CHECKPOINT_MISMATCH, capsys)
    finding = caught(played, Problem.SIGNATURE_INVALID, capsys)
    assert finding.notification_id is not None and finding.notification_id > at


def test_recomputing_every_hash_and_signing_with_ones_own_key(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    dealt = [e for e in played.events if isinstance(e, Table.CardDealt)][5]
    forge_and_rechain(played.url, dealt, card=other_card(dealt.card))
    forger = Signer(Ed25519PrivateKey.generate(), "the forger's")
    resign(played.url, forger)
    finding = caught(played, Problem.UNTRUSTED_KEY, capsys)
    assert forger.key_id in finding.detail
    caught(played, Problem.CHECKPOINT_MISMATCH, capsys)
    # pinning the forger's key instead still leaves the checkpoints the real key signed
    report = verify(played.url, trusted_keys=[forger.public_key])
    assert {f.problem for f in report.findings} >= {Problem.CHECKPOINT_INVALID}


def resign(url: str, signer: Signer) -> None:
    """Recompute the Merkle tree and every signature with `signer`'s key, as a forger would."""
    column = nid_column(url)
    rows = sql(url, f"SELECT {column}, originator_id, originator_version, topic, state"
               f" FROM stored_events ORDER BY {column}")
    tree = Frontier()
    for n, oid, version, topic, state in rows:
        tree.append(event_leaf(n, canonical_bytes(uuid.UUID(str(oid)), version, topic,
                                                  bytes(state))))
    sql(url, "UPDATE merkle_tree SET size = ?, head = ?, frontier = ?",
        (tree.size, rows[-1][0], tree.to_bytes()))
    sql(url, "DELETE FROM signing_keys")
    sql(url, "INSERT INTO signing_keys (key_id, public_key) VALUES (?, ?)",
        (signer.key_id, signer.public_key))
    for n, digest in sql(url, "SELECT notification_id, global_digest FROM event_chain"
                         " WHERE notification_id IN (SELECT notification_id"
                         " FROM chain_signatures)"):
        sql(url, "UPDATE chain_signatures SET key_id = ?, signature = ?"
            " WHERE notification_id = ?", (signer.key_id, signer.sign_head(n, bytes(digest)), n))


def test_deleting_the_head_signature(played: Played,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    sql(played.url, "DELETE FROM chain_signatures WHERE notification_id = ?",
        (last_nid(played.url),))
    finding = caught(played, Problem.UNSIGNED_HEAD, capsys)
    assert finding.notification_id == last_nid(played.url)


# --- what lives beside the events -----------------------------------------------------


def test_editing_a_snapshot(played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    ((state,),) = sql(played.url, "SELECT state FROM stored_snapshots WHERE originator_id = ?"
                      " AND originator_version = 200", (db_id(played.url, played.table_id),))
    snapshot = msgspec.msgpack.decode(bytes(state))
    seat = snapshot["state"]["state"]["seats"][0]
    chips = seat["chips"]
    seat["chips"] = chips + 50_000  # e.g. 670 becomes 50,670
    sql(played.url, "UPDATE stored_snapshots SET state = ? WHERE originator_id = ?"
        " AND originator_version = 200",
        (msgspec.msgpack.encode(snapshot), db_id(played.url, played.table_id)))
    with a_service(played.url) as service:  # the attack works: the table now shows it
        assert max(s.chips for s in service.state(played.table_id).seats) > 40_000
    finding = caught(played, "snapshot altered", capsys)
    assert (finding.originator_id, finding.originator_version) == (played.table_id, 200)


def test_altering_the_seed_vault(played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    (shoe, sealed), *_ = sql(played.url, "SELECT shoe_id, sealed FROM shoe_seeds"
                             " ORDER BY shoe_id")
    sql(played.url, "UPDATE shoe_seeds SET sealed = ? WHERE shoe_id = ?",
        (bytes(sealed)[:-1] + bytes([sealed[-1] ^ 1]), shoe))
    finding = caught(played, "vault seal broken", capsys)
    assert shoe[:16] in finding.detail

    sql(played.url, "DELETE FROM shoe_seeds WHERE shoe_id = ?", (shoe,))
    finding = caught(played, "vault seed missing", capsys)
    shuffled = next(e for e in played.events
                    if isinstance(e, Table.ShoeShuffled) and e.commitment == shoe)
    assert (finding.originator_id, finding.originator_version) == (
        played.table_id, shuffled.originator_version)


def test_emptying_the_command_log(played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    sql(played.url, "DELETE FROM command_log")
    finding = caught(played, "command not logged", capsys)
    assert (finding.originator_id, finding.originator_version) == (played.table_id, 1)


def test_editing_a_projection_row(played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    sql(played.url, "UPDATE view_standings SET chips = chips + 50000")
    finding = caught(played, "view altered", capsys)
    assert "projection standings, table view_standings" in finding.detail


# --- restoring an older copy of the database ------------------------------------------


def test_restoring_an_older_copy_of_the_database(
        played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    restore = backup(played.url, tmp_path)
    with a_service(played.url) as service:  # the tournament goes on: more events, checkpointed
        play(service, played.table_id, 16, prefix="later")
    restore()
    assert verify(played.url, signatures=False).ok  # an older store is a consistent store
    finding = caught(played, Problem.STORE_TRUNCATED, capsys)
    assert f"the store holds {played.count}" in finding.detail


def backup(url: str, folder: Path) -> Any:
    """Copy the whole database now; return what puts the copy back (a file copy on SQLite, a
    copy of the schema on PostgreSQL)."""
    if url.startswith("sqlite:"):
        path, copy = url[len("sqlite:///"):], folder / "copy.db"
        with sqlite3.connect(path) as source, sqlite3.connect(copy) as target:
            source.backup(target)

        def restore_file() -> None:
            with sqlite3.connect(copy) as source, sqlite3.connect(path) as target:
                source.backup(target)
        return restore_file
    schema = url.rsplit("schema=", 1)[1]
    saved = f"{schema}_copy"
    sql(url, f'CREATE SCHEMA "{saved}"')
    for (table,) in sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = ?", (schema,)):
        sql(url, f'CREATE TABLE "{saved}"."{table}" AS TABLE "{schema}"."{table}"')

    def restore_schema() -> None:
        sql(url, f'DROP SCHEMA "{schema}" CASCADE')
        sql(url, f'ALTER SCHEMA "{saved}" RENAME TO "{schema}"')
    return restore_schema


# --- checkpoints on demand, and witnesses ---------------------------------------------


def test_a_checkpoint_on_demand_and_a_witness(played: Played, tmp_path: Path) -> None:
    with open_store(played.url) as store:
        path = checkpoint_path(store.database)
        assert path is not None and path.exists()
        assert write_checkpoint(store) is None  # the file already holds this size
        witness_key = create_key(tmp_path / "witness.key")
        state = state_path(tmp_path / "witness.key")
        first = witness(store.database, latest(path), witness_key, state)
        append_line(path, first)
        assert first.size == played.count
    with a_service(played.url) as service:
        play(service, played.table_id, 14, prefix="round-2")
        made = write_checkpoint(service)  # a round ends: the director asks for a checkpoint
        assert made is not None and made.size > played.count
        assert made.fingerprint().startswith(f"#{made.size} ")
    with open_store(played.url) as store:
        second = witness(store.database, latest(path), witness_key, state)
        assert second.size == made.size and second.valid_for(made)
        append_line(path, second)
        # a store rewritten after the witness saw it: the witness refuses the next checkpoint
        dealt = [e for e in played.events if isinstance(e, Table.CardDealt)][2]
        forge_and_rechain(played.url, dealt, card=other_card(dealt.card))
        resign(played.url, store.recorder.signer())  # even signed with the real key
        append_line(path, write_and_read(store))
        with pytest.raises(WitnessRefusal, match="does not extend"):
            witness(store.database, latest(path), witness_key, state)


def latest(path: Path) -> Any:
    """The latest checkpoint of the file: the candidate a witness is asked to co-sign."""
    return max(checkpoints(read_lines(path)), key=lambda c: (c.size, c.time))


def write_and_read(store: Any) -> Any:
    """A checkpoint signed with the real key over the store as it is now (a key holder)."""
    signer = store.recorder.signer()
    return sign_checkpoint(tree_head(store.database, WriterTrust(signer, None).keys), signer)


def test_verify_since_a_checkpoint_is_incremental(played: Played,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with a_service(played.url) as service:
        play(service, played.table_id, 16, prefix="later")
        events = service.events_of(played.table_id)
    report = verify(played.url, since=played.count)
    assert report.ok, report.findings
    assert report.since == played.count and report.proof is not None and report.proof > 0
    assert report.tree_size > played.count
    assert main(["audit", "verify", "--database", played.url, "--since",
                 str(played.count)]) == 0
    assert "from checkpoint" in capsys.readouterr().out
    assert main(["audit", "verify", "--database", played.url, "--since", "3"]) == 2

    # events after the checkpoint changed and the chain recomputed: caught incrementally
    later = [e for e in events if isinstance(e, Table.CardDealt)][-3]
    forge_and_rechain(played.url, later, card=other_card(later.card))
    report = verify(played.url, since=played.count)
    assert not report.ok
    assert {f.problem for f in report.findings} & {Problem.CHECKPOINT_MISMATCH,
                                                   Problem.SIGNATURE_INVALID}


def test_a_writer_without_its_configured_key_refuses_to_start(
        sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SABOT_SIGNING_KEY", str(tmp_path / "absent.key"))
    assert main(["play", "--database", sqlite_url, "--coups", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"sabot: the signing key {tmp_path}/absent.key does not exist: create it "
                    f"with `sabot keys create --out {tmp_path}/absent.key`")
    assert main(["keys", "create", "--out", str(tmp_path / "absent.key")]) == 0
    assert "public key:" in capsys.readouterr().out
    played = subprocess.run(  # a process of its own: it checkpoints when it stops
        [sys.executable, "-m", "api.cli", "play", "--database", sqlite_url, "--coups", "1",
         "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert played.returncode == 0, played.stderr
    report = verify(sqlite_url)
    assert report.ok and report.trust == "the store's key file"
    lines = checkpoints(read_lines(Path(sqlite_url[len("sqlite:///"):] + ".checkpoints")))
    assert lines and all(c.signed_by_its_key() for c in lines)
    assert not Path(sqlite_url[len("sqlite:///"):] + ".signing.key").exists()


def test_the_checkpoint_and_witness_commands(played: Played, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    key = tmp_path / "witness.key"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert main(["audit", "witness", "--key", str(key), "--database", played.url]) == 0
    assert f"co-signed: checkpoint of {played.count} events" in capsys.readouterr().out
    assert main(["audit", "checkpoint", "--database", played.url]) == 0
    assert "no new checkpoint" in capsys.readouterr().out
    with a_service(played.url) as service:
        play(service, played.table_id, 14, prefix="round-2")
        assert main(["audit", "checkpoint", "--database", played.url]) == 0  # a round's end
        assert "checkpoint: #" in capsys.readouterr().out
    wrong = "00" * 32
    assert main(["audit", "witness", "--key", str(key), "--database", played.url,
                 "--public-key", wrong]) == 1
    assert "not the operator's" in capsys.readouterr().err
    assert main(["audit", "witness", "--key", str(tmp_path / "none.key"),
                 "--database", played.url]) == 2
    assert main(["audit", "witness", "--key", str(key), "--database", played.url]) == 0
    assert main(["audit", "verify", "--database", played.url]) == 0


def test_a_store_that_lost_its_key_file_refuses_a_new_key(sqlite_url: str) -> None:
    a_game(sqlite_url, coups=2).close()
    key = Path(sqlite_url[len("sqlite:///"):] + ".signing.key")
    key.rename(key.with_suffix(".moved"))
    with pytest.raises(SigningKeyError, match=r"its key file .* is missing"):
        a_service(sqlite_url)
    assert not key.exists()  # no new key was made in its place
    key.with_suffix(".moved").rename(key)
    with a_service(sqlite_url) as service:
        assert service.chained_recorder.signer().key_id in verify(sqlite_url).keys


def test_an_event_s_inclusion_proof_in_the_latest_checkpoint(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:
    dealt = [e for e in played.events if isinstance(e, Table.CardDealt)][1]
    nid, topic, state = event_row(played.url, played.table_id, dealt.originator_version)
    assert main(["audit", "prove", str(nid), "--json", "--database", played.url]) == 0
    body = json.loads(capsys.readouterr().out)
    leaf = event_leaf(nid, canonical_bytes(played.table_id, dealt.originator_version, topic,
                                           state))
    assert body["leaf"] == leaf.hex() and body["holds"] is True
    checkpoint = body["checkpoint"]
    assert verify_inclusion(leaf, body["position"], checkpoint["size"],
                            bytes.fromhex(checkpoint["root"]),
                            [bytes.fromhex(node) for node in body["proof"]])
    forge_and_rechain(played.url, dealt, card=other_card(dealt.card))
    assert main(["audit", "prove", str(nid), "--database", played.url]) == 1
    assert "DOES NOT HOLD" in capsys.readouterr().out
