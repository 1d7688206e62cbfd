"""Attacks on the roots of trust, made as an insider would: raw SQL on the database and key
material of the attacker's own (`cryptography`), never Sabot's code to forge. Nothing inside
the database vouches for the database: the writer's fold and `sabot audit verify` trust only
the key file, the keys given and those of the checkpoints (`infra.store.trust`).

The attacks run on an uncovered tail (events written since the last checkpoint: normal for up
to `SABOT_CHECKPOINT_SECONDS`, indefinitely after a crash), on SQLite and PostgreSQL; each
ends in a named discrepancy, a refused checkpoint, or (for what no checkpoint anchors) the
distinct exit code 3, never "intact".
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import msgspec
import psycopg
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api.cli import main
from domain.game.settings import Variant
from infra.audit.verify import AuditReport, Problem, verify
from infra.services.tables import TableService
from infra.store.checkpoints import CHECKPOINT_PREFIX, checkpoint_path, last_checkpoint
from infra.store.opening import open_store
from infra.store.signing import load_key
from tests.integration.test_audit import sql
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table, play
from tests.integration.test_tamper import Played, played  # noqa: F401 (a fixture)

NOT_INTACT = "the store is NOT intact"


@dataclass
class Tail:
    """A store whose last events (a punto banco table's, bets and payouts) no checkpoint
    covers yet: its writer is still open, its next checkpoint an hour away."""

    url: str
    service: TableService
    covered: int  # the events the checkpoint file covers
    total: int
    path: Path


@pytest.fixture
def tail(played: Played, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tail]:  # noqa: F811
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", "3600")
    service = a_service(played.url)
    path = checkpoint_path(service.recorder.database)
    assert path is not None
    covered = last_checkpoint(path)
    assert covered is not None
    table_id = open_table(service, "tail", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
    play(service, table_id, 3, prefix="tail")
    ((total,),) = sql(played.url, "SELECT COUNT(*) FROM stored_events")
    assert total > covered.size
    yield Tail(played.url, service, covered.size, int(total), path)
    service.close()


# --- the insider's tools: SQL, SHA-256 and a key of their own --------------------------


@contextmanager
def database(url: str) -> Iterator[Any]:
    """One connection, in autocommit, as the insider's SQL shell."""
    if url.startswith("sqlite:"):
        connection = sqlite3.connect(url[len("sqlite:///"):], isolation_level=None)
        try:
            yield connection
        finally:
            connection.close()
        return
    parts = urlsplit(url)
    with psycopg.connect(parts._replace(query="").geturl(), autocommit=True) as connection:
        connection.execute(f'SET search_path TO "{parse_qs(parts.query)["schema"][0]}"')
        yield connection


def run(connection: Any, statement: str, params: tuple[Any, ...] = ()) -> list[Any]:
    if isinstance(connection, sqlite3.Connection):
        return connection.execute(statement, params).fetchall()
    cursor = connection.execute(statement.replace("?", "%s"), params)
    return cursor.fetchall() if cursor.description else []


def canonical(oid: Any, version: int, topic: str, state: bytes) -> bytes:
    """An event's bytes as docs/audit.md (and infra/store/chain.py's docstring) spell them."""
    raw = uuid.UUID(str(oid)).bytes
    name = topic.encode()
    return b"".join((len(raw).to_bytes(4, "big"), raw, version.to_bytes(8, "big"),
                     len(name).to_bytes(4, "big"), name, len(state).to_bytes(4, "big"), state))


def rechain(connection: Any, url: str) -> dict[int, bytes]:
    """Recompute every stream and partition digest from the stored events, rewrite the chain
    rows that differ: the partition digest at each notification."""
    nid = "rowid" if url.startswith("sqlite:") else "notification_id"
    events = run(connection, f"SELECT {nid}, originator_id, originator_version, topic, state"
                 f" FROM stored_events ORDER BY {nid}")
    links = {row[0]: row[1:] for row in run(
        connection, "SELECT notification_id, stream_digest, global_digest, partition_key"
        " FROM event_chain")}
    streams: dict[str, bytes] = {}
    partitions: dict[str, bytes] = {}
    digests = {}
    for n, oid, version, topic, state in events:
        old_stream, old_global, key = links[n]
        stream = hashlib.sha256(streams.get(str(oid), bytes(32))
                                + canonical(oid, version, topic, bytes(state))).digest()
        chained = hashlib.sha256(partitions.get(key, bytes(32)) + n.to_bytes(8, "big")
                                 + stream).digest()
        streams[str(oid)], partitions[key], digests[n] = stream, chained, chained
        if (stream, chained) != (bytes(old_stream), bytes(old_global)):
            run(connection, "UPDATE event_chain SET stream_digest = ?, global_digest = ?"
                " WHERE notification_id = ?", (stream, chained, n))
    return digests


def attacker_key() -> tuple[Ed25519PrivateKey, bytes]:
    key = Ed25519PrivateKey.generate()
    return key, key.public_key().public_bytes(serialization.Encoding.Raw,
                                              serialization.PublicFormat.Raw)


def operator_key(url: str) -> tuple[str, bytes]:
    ((key_id, public),) = sql(url, "SELECT key_id, public_key FROM signing_keys")
    return str(key_id), bytes(public)


def forge_tail(tail: Tail, *, keep_intermediate_signatures: bool = True,
               key: Ed25519PrivateKey | None = None) -> int:
    """Double a bet of the uncovered tail and its payout (staked, net and commission), rechain,
    re-sign the heads from there with the attacker's key filed under the operator's key id,
    and put that public key in `signing_keys` (given `key`: filed under that key's own id, its
    row added beside the operator's). The forged bet's notification id."""
    own = key is not None
    key = key or attacker_key()[0]
    public = key.public_key().public_bytes(serialization.Encoding.Raw,
                                           serialization.PublicFormat.Raw)
    operator = hashlib.sha256(public).digest()[:8].hex() if own else operator_key(tail.url)[0]
    nid = "rowid" if tail.url.startswith("sqlite:") else "notification_id"
    with database(tail.url) as connection:
        bets = run(connection, f"SELECT {nid}, state FROM stored_events WHERE {nid} > ?"
                   f" AND topic LIKE ? ORDER BY {nid}", (tail.covered, "%.BetPlaced"))
        payouts = run(connection, f"SELECT {nid}, state FROM stored_events WHERE {nid} > ?"
                      f" AND topic LIKE ? ORDER BY {nid}", (tail.covered, "%.PayoutMade"))
        decoded = [(n, msgspec.msgpack.decode(bytes(s))) for n, s in payouts]
        for bet_n, bet_state in bets:  # noqa: B007 (the bet found is the one forged)
            bet = msgspec.msgpack.decode(bytes(bet_state))
            paid = [(n, p) for n, p in decoded if p["coup"] == bet["coup"]
                    and p["payout"]["player"] == bet["player"]]
            if paid:
                break
        else:
            raise AssertionError("the tail holds no bet with its payout")
        payout_n, payout = paid[0]
        bet["amount"] *= 2
        for field in ("staked", "net", "commission"):
            payout["payout"][field] *= 2
        for n, state in ((bet_n, bet), (payout_n, payout)):
            run(connection, f"UPDATE stored_events SET state = ? WHERE {nid} = ?",
                (msgspec.msgpack.encode(state), n))
        digests = rechain(connection, tail.url)
        heads = run(connection, "SELECT s.notification_id, c.partition_key FROM"
                    " chain_signatures s JOIN event_chain c ON c.notification_id ="
                    " s.notification_id WHERE s.notification_id >= ?", (bet_n,))
        last = {key_: max(n for n, k in heads if k == key_) for _, key_ in heads}
        for n, partition in heads:
            if keep_intermediate_signatures or n == last[partition]:
                signature = key.sign(b"sabot-head-v1\n" + n.to_bytes(8, "big") + digests[n])
                run(connection, "UPDATE chain_signatures SET key_id = ?, signature = ?"
                    " WHERE notification_id = ?", (operator, signature, n))
            else:
                run(connection, "DELETE FROM chain_signatures WHERE notification_id = ?", (n,))
        if own:
            run(connection, "INSERT INTO signing_keys (key_id, public_key) VALUES (?, ?)",
                (operator, public))
        else:
            run(connection, "UPDATE signing_keys SET public_key = ? WHERE key_id = ?",
                (public, operator))
    return int(bet_n)


def checkpoint_refused(tail: Tail, capsys: pytest.CaptureFixture[str]) -> str:
    """`sabot audit checkpoint` (the operator's key signing whatever the fold accepts) refuses,
    and the checkpoint file still covers only what it covered."""
    assert main(["audit", "checkpoint", "--database", tail.url]) == 1
    said = capsys.readouterr()
    assert "no checkpoint" in said.err, said
    last = last_checkpoint(tail.path)
    assert last is not None and last.size == tail.covered
    return said.err


def problems(report: AuditReport) -> set[str]:
    return {f.problem for f in (report.first_break, *report.findings) if f is not None}


def refuted(url: str, problem: str, capsys: pytest.CaptureFixture[str]) -> AuditReport:
    """verify names `problem`; the CLI exits 1 and never says intact."""
    report = verify(url)
    assert not report.ok and problem in problems(report), (report.first_break,
                                                           report.findings)
    assert main(["audit", "verify", "--database", url]) == 1
    out = capsys.readouterr().out
    assert problem in out and out.rstrip().endswith(NOT_INTACT), out
    return report


# --- the untouched store -----------------------------------------------------------------


def test_an_uncovered_tail_is_said_then_anchored_at_close(
        tail: Tail, capsys: pytest.CaptureFixture[str]) -> None:
    report = verify(tail.url)
    assert report.ok, report.findings
    assert report.signatures > 0 and report.trust == "the store's key file"
    (said,) = report.unanchored
    assert f"{tail.total - tail.covered} events" in said and "no checkpoint" in said
    assert main(["audit", "verify", "--database", tail.url]) == 3
    out = capsys.readouterr().out
    assert "UNANCHORED" in out and "\nintact" not in out
    assert main(["audit", "verify", "--strict", "--database", tail.url]) == 1
    capsys.readouterr()
    tail.service.close()  # the writer's last checkpoint covers the tail
    last = last_checkpoint(tail.path)
    assert last is not None and last.size == tail.total
    assert main(["audit", "verify", "--database", tail.url]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("\nintact")
    operator, public = operator_key(tail.url)
    assert f"key:     {operator} {public.hex()} (trusted:" in out  # the id the paper shows


# --- the attacks -----------------------------------------------------------------------


def test_a_tail_forged_and_signed_with_a_spoofed_key_is_never_checkpointed(
        tail: Tail, capsys: pytest.CaptureFixture[str]) -> None:
    operator, real = operator_key(tail.url)
    forged = forge_tail(tail)
    said = checkpoint_refused(tail, capsys)
    assert f"key {operator}" in said and "replaced" in said
    sql(tail.url, "UPDATE signing_keys SET public_key = ? WHERE key_id = ?", (real, operator))
    checkpoint_refused(tail, capsys)  # the real key back: the forged signatures do not hold
    report = refuted(tail.url, Problem.SIGNATURE_INVALID, capsys)
    first = min(f.notification_id or 0 for f in report.findings
                if f.problem == Problem.SIGNATURE_INVALID)
    assert first >= forged


def test_a_key_slipped_into_the_checkpoint_file_is_never_adopted(
        tail: Tail, capsys: pytest.CaptureFixture[str]) -> None:
    """An insider who can write the database and the checkpoint file, but holds no trusted
    key: forges a bet and its payout in the uncovered tail, re-signs the tail with a key of
    their own (its row added to `signing_keys`) and appends to the checkpoint file a copy of
    its last checkpoint re-signed by that key. The operator's routine checkpoint refuses,
    naming the foreign key, instead of adopting it and signing the forged tree; after the
    insider's clean-up (the line and the key row removed, the signatures filed under the
    operator's key id) verify still fails."""
    operator, _ = operator_key(tail.url)
    key, public = attacker_key()
    stranger = hashlib.sha256(public).digest()[:8].hex()
    forged = forge_tail(tail, key=key)
    original = tail.path.read_bytes()
    last = last_checkpoint(tail.path)
    assert last is not None
    copy = msgspec.structs.replace(last, key=stranger, public_key=public.hex(), note="",
                                   signature="")
    copy = msgspec.structs.replace(copy, signature=key.sign(
        CHECKPOINT_PREFIX + copy.text()).hex())
    assert copy.signed_by_its_key()  # a checkpoint as good as the operator's, but its key
    tail.path.write_bytes(original + msgspec.json.encode(copy) + b"\n")

    assert main(["audit", "checkpoint", "--database", tail.url]) == 1
    said = capsys.readouterr().err
    assert f"key {stranger}" in said and "does not trust" in said, said
    assert last_checkpoint(tail.path) == copy  # nothing signed after it
    report = verify(tail.url)  # verify names the foreign checkpoint too
    assert not report.ok and any(stranger in f.detail for f in report.findings)
    capsys.readouterr()

    tail.path.write_bytes(original)  # the insider's clean-up
    sql(tail.url, "DELETE FROM signing_keys WHERE key_id = ?", (stranger,))
    sql(tail.url, "UPDATE chain_signatures SET key_id = ? WHERE key_id = ?",
        (operator, stranger))
    checkpoint_refused(tail, capsys)
    report = refuted(tail.url, Problem.SIGNATURE_INVALID, capsys)
    assert min(f.notification_id or 0 for f in report.findings
               if f.problem == Problem.SIGNATURE_INVALID) >= forged
    assert main(["audit", "verify", "--strict", "--database", tail.url]) != 0


def test_a_spoofed_tail_without_its_intermediate_signatures_is_named(
        tail: Tail, capsys: pytest.CaptureFixture[str]) -> None:
    operator, real = operator_key(tail.url)
    forge_tail(tail, keep_intermediate_signatures=False)
    checkpoint_refused(tail, capsys)
    sql(tail.url, "UPDATE signing_keys SET public_key = ? WHERE key_id = ?", (real, operator))
    checkpoint_refused(tail, capsys)
    report = refuted(tail.url, Problem.SIGNATURE_INVALID, capsys)
    assert Problem.SIGNATURE_MISSING in problems(report)


def test_a_covered_partition_head_signature_of_random_bytes_is_named(
        played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    """Every partition's head signature is checked, covered by a witnessed checkpoint or not
    (docs/audit.md said heads are checked; random bytes there passed verify)."""
    witness = tmp_path / "witness.key"
    assert main(["keys", "create", "--out", str(witness)]) == 0
    assert main(["audit", "witness", "--key", str(witness), "--database", played.url]) == 0
    report = verify(played.url, witness_keys=[load_key(witness).public_key])
    assert report.ok and report.covered > 0  # the co-signed checkpoint covers the store
    ((head,),) = sql(played.url, "SELECT MAX(notification_id) FROM chain_signatures")
    sql(played.url, "UPDATE chain_signatures SET signature = ? WHERE notification_id = ?",
        (os.urandom(64), head))
    report = refuted(played.url, Problem.SIGNATURE_INVALID, capsys)
    assert [f.notification_id for f in report.findings
            if f.problem == Problem.SIGNATURE_INVALID] == [head]


def test_a_deleted_signature_row_is_named(played: Played,  # noqa: F811
                                          capsys: pytest.CaptureFixture[str]) -> None:
    ((n,),) = sql(played.url, "SELECT MIN(notification_id) FROM chain_signatures")
    sql(played.url, "DELETE FROM chain_signatures WHERE notification_id = ?", (n,))
    report = refuted(played.url, Problem.SIGNATURE_MISSING, capsys)
    missing = [f for f in report.findings if f.problem == Problem.SIGNATURE_MISSING]
    assert missing[0].notification_id is not None and missing[0].notification_id <= n


def test_a_replaced_signing_key_is_named_and_stops_checkpointing_loudly(
        tail: Tail, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    operator, _ = operator_key(tail.url)
    _, public = attacker_key()
    sql(tail.url, "UPDATE signing_keys SET public_key = ? WHERE key_id = ?", (public, operator))
    report = refuted(tail.url, Problem.KEY_REPLACED, capsys)
    assert any(operator in f.detail for f in report.findings)
    with caplog.at_level(logging.ERROR, logger="sabot.checkpoints"):
        tail.service.close()  # the writer's last checkpoint, refused
    assert [r for r in caplog.records if r.levelno == logging.ERROR
            and "no checkpoint written" in r.getMessage() and operator in r.getMessage()]
    last = last_checkpoint(tail.path)
    assert last is not None and last.size == tail.covered


def test_an_unknown_recorded_key_is_named(played: Played,  # noqa: F811
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, public = attacker_key()
    stranger = hashlib.sha256(public).digest()[:8].hex()
    sql(played.url, "INSERT INTO signing_keys (key_id, public_key) VALUES (?, ?)",
        (stranger, public))
    report = refuted(played.url, Problem.UNTRUSTED_KEY, capsys)
    assert any(stranger in f.detail for f in report.findings)


def test_a_randomised_stored_frontier_is_named_and_never_checkpointed(played: Played,  # noqa: F811
                                               capsys: pytest.CaptureFixture[str]) -> None:
    ((frontier,),) = sql(played.url, "SELECT frontier FROM merkle_tree")
    sql(played.url, "UPDATE merkle_tree SET frontier = ?", (os.urandom(len(frontier)),))
    assert main(["audit", "checkpoint", "--database", played.url]) == 1  # the fold's check
    assert "does not extend the checkpoint" in capsys.readouterr().err
    report = refuted(played.url, Problem.TREE_ALTERED, capsys)
    assert any("merkle_tree" in f.detail for f in report.findings)


def test_an_emptied_checkpoint_file_beside_a_tree_that_says_more_is_unanchored(
        played: Played, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    with open_store(played.url, create=False) as store:
        path = checkpoint_path(store.database)
    assert path is not None and path.stat().st_size > 0
    path.write_bytes(b"")
    report = verify(played.url)
    assert report.ok and report.checkpoints == 0
    assert any(f"says {played.count} events were folded" in said and "shows 0" in said
               for said in report.unanchored), report.unanchored
    assert main(["audit", "verify", "--database", played.url]) == 3
    out = capsys.readouterr().out
    assert "UNANCHORED" in out and "\nintact" not in out
    assert main(["audit", "verify", "--strict", "--database", played.url]) == 1

