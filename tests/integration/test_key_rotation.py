"""A key rotation is a signed act the writers, `sabot audit verify` and the witness follow
(`sabot audit hand-over`, `infra.store.hand_overs`); an insider's hand-over of a key of their
own is never followed; and plain verify checks every signature the last witnessed checkpoint
does not cover. The insider's tools are raw SQL, the checkpoint file appended to by hand and
keys of their own (`cryptography`), never Sabot's code to forge. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api.cli import main
from domain.game.settings import Variant
from infra.audit.verify import Problem, verify
from infra.store.checkpoint_notes import witness_name
from infra.store.checkpoints import checkpoint_path, last_checkpoint, read_lines
from infra.store.hand_overs import HandOver
from infra.store.notes import CosignatureVerifier
from infra.store.opening import open_store
from infra.store.signing import Signer, load_key
from infra.store.witness import read_state
from tests.integration.test_audit import sql
from tests.integration.test_table_service import (
    SECRET,
    SMALL_SHOE,
    a_service,
    open_table,
    play,
)
from tests.integration.test_trust_roots import attacker_key

NOT_INTACT = "the store is NOT intact"


@dataclass
class Log:
    """A store played and checkpointed under the operator's key `old`, a witness that
    co-signed that checkpoint, and a key `new` to hand over to."""

    url: str
    path: Path
    old: Path
    new: Path
    witness: Path
    tmp: Path

    def vkey(self) -> str:
        signer = load_key(self.witness)
        return CosignatureVerifier(witness_name(signer), signer.public_key).vkey()


def signer(path: Path) -> Signer:
    return load_key(path)


def played(url: str, name: str, coups: int) -> None:
    """A punto banco table played by bots, then its writer closed (its last checkpoint)."""
    service = a_service(url)
    try:
        play(service, open_table(service, name, Variant.PUNTO_BANCO, players=2, **SMALL_SHOE),
             coups, prefix=name)
    finally:
        service.close()


def cosign(log: Log, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["audit", "witness", "--key", str(log.witness), "--database", log.url])
    said = capsys.readouterr()
    return code, said.out + said.err


def verified(log: Log, capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str]:
    code = main(["audit", "verify", "--database", log.url, *options])
    return code, capsys.readouterr().out


@pytest.fixture
def log(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Iterator[Log]:
    for name in ("old", "new", "witness"):
        assert main(["keys", "create", "--out", str(tmp_path / f"{name}.key")]) == 0
    monkeypatch.setenv("SABOT_SIGNING_KEY", str(tmp_path / "old.key"))
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", "3600")
    monkeypatch.setenv("SABOT_SECRET_KEY", SECRET.hex())  # the vault's key, to open its seals
    monkeypatch.delenv("SABOT_TRUSTED_KEYS", raising=False)
    monkeypatch.delenv("SABOT_WITNESSES", raising=False)
    if database_url.startswith("postgresql"):
        monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "pg.checkpoints"))
    played(database_url, "before", 2)
    with open_store(database_url, create=False) as store:
        path = checkpoint_path(store.database)
    assert path is not None
    made = Log(database_url, path, tmp_path / "old.key", tmp_path / "new.key",
               tmp_path / "witness.key", tmp_path)
    assert cosign(made, capsys)[0] == 0
    capsys.readouterr()
    yield made


def rotate(log: Log, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
           ) -> HandOver:
    """The operator's rotation: the hand-over signed by the old key, then the writers on the
    new key, the old one's public half in SABOT_TRUSTED_KEYS."""
    assert main(["audit", "hand-over", "--new-key", str(log.new), "--database", log.url]) == 0
    said = capsys.readouterr().out
    old, new = signer(log.old), signer(log.new)
    assert f"key {old.key_id} -> key {new.key_id}" in said, said
    (line,) = [h for h in read_lines(log.path) if isinstance(h, HandOver)]
    assert (line.key, line.new_key, line.new_public_key) == (old.key_id, new.key_id,
                                                             new.public_key.hex())
    monkeypatch.setenv("SABOT_SIGNING_KEY", str(log.new))
    monkeypatch.setenv("SABOT_TRUSTED_KEYS", old.public_key.hex())
    return line


def test_a_rotation_is_followed_by_the_writers_verify_and_the_witness(
        log: Log, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = signer(log.old), signer(log.new)
    rotate(log, monkeypatch, capsys)
    played(log.url, "after", 2)  # signed and checkpointed by the new key
    latest = last_checkpoint(log.path)
    assert latest is not None and latest.key == new.key_id
    code, said = cosign(log, capsys)  # pinned to the old key, it follows the hand-over
    assert code == 0, said
    state = read_state(log.witness.with_name("witness.key.state"))
    assert state is not None and (state.log_key, state.size) == (old.public_key.hex(),
                                                                 latest.size)

    monkeypatch.delenv("SABOT_TRUSTED_KEYS")
    monkeypatch.setenv("SABOT_SIGNING_KEY", str(log.old))  # a writer left on the old key
    played(log.url, "late", 1)  # its fold accepts the new key's signatures: it follows too
    last = last_checkpoint(log.path)
    assert last is not None and last.key == old.key_id and last.size > latest.size

    code, out = verified(log, capsys, "--public-key", old.public_key.hex())
    assert code == 0 and out.rstrip().endswith("\nintact"), out
    assert new.key_id in out and "handed over to" in out
    bundle = log.tmp / "bundle"
    assert main(["audit", "export", "--table", "after", "--out", str(bundle), "--database",
                 log.url]) == 0
    capsys.readouterr()
    assert main(["audit", "check-dossier", str(bundle)]) == 0  # the hand-over line checks too
    assert "every signature holds (2 by witnesses)" in capsys.readouterr().out

    rotated = log.path.read_text()
    log.path.write_text("".join(line + "\n" for line in rotated.splitlines()
                                if '"kind":"hand-over"' not in line))
    code, out = verified(log, capsys, "--public-key", old.public_key.hex())
    assert code == 1 and f"key {new.key_id}" in out and out.rstrip().endswith(NOT_INTACT)
    assert "untrusted key" in out


def forged_hand_over(log: Log, key: Ed25519PrivateKey, public: bytes, *,
                     spoofing: Signer | None = None) -> str:
    """Append a hand-over from `key` (named as `spoofing`, the operator's key, if given) to a
    key of the insider's own, signed by `key` over the text docs/audit.md spells; its key id."""
    latest = last_checkpoint(log.path)
    assert latest is not None
    _, target = attacker_key()
    line = {"kind": "hand-over",
            "key": spoofing.key_id if spoofing else hashlib.sha256(public).digest()[:8].hex(),
            "public_key": (spoofing.public_key if spoofing else public).hex(),
            "new_key": hashlib.sha256(target).digest()[:8].hex(), "new_public_key": target.hex(),
            "size": latest.size, "root": latest.root, "time": "2026-01-01T00:00:00.000Z"}
    text = "".join(f"{line[field]}\n" for field in ("key", "public_key", "new_key",
                                                    "new_public_key", "size", "root", "time"))
    line["signature"] = key.sign(b"sabot-hand-over-v1\n" + text.encode()).hex()
    with log.path.open("a") as file:
        file.write(json.dumps(line, separators=(",", ":")) + "\n")
    return str(line["key"])


@pytest.mark.parametrize("spoofed", [False, True], ids=["own-key", "spoofed-key-id"])
def test_an_insiders_hand_over_is_refused_and_named(
        log: Log, spoofed: bool, capsys: pytest.CaptureFixture[str]) -> None:
    """The insider, who can write the file but holds no trusted key, hands "over" from a key
    of their own (or from the operator's key id, signed by theirs) to another key: the
    writer's checkpoint refuses, naming the key; verify names the hand-over."""
    key, public = attacker_key()
    named = forged_hand_over(log, key, public, spoofing=signer(log.old) if spoofed else None)
    played(log.url, "after", 1)  # the writer's own checkpoint at close: refused
    assert main(["audit", "checkpoint", "--database", log.url]) == 1
    said = capsys.readouterr().err
    assert "no checkpoint" in said and f"from key {named}" in said, said
    assert ("not validly signed by the trusted key" if spoofed else "which is not trusted"
            ) in said
    report = verify(log.url)
    refused = [f for f in report.findings if f.problem == Problem.HAND_OVER_REFUSED]
    assert not report.ok and len(refused) == 1 and named in refused[0].detail
    code, out = verified(log, capsys)
    assert code == 1 and "hand-over refused" in out and out.rstrip().endswith(NOT_INTACT)


def tail_signature(url: str, after: int) -> int:
    """A transaction's signature after notification `after` that is not its partition's
    head (what verify checked only when no matching checkpoint covered it)."""
    rows = sql(url, "SELECT s.notification_id, c.partition_key FROM chain_signatures s JOIN"
               " event_chain c ON c.notification_id = s.notification_id"
               " WHERE s.notification_id > ? ORDER BY s.notification_id", (after,))
    heads = {partition: n for n, partition in rows}
    return min(n for n, partition in rows if heads[partition] != n)


def resign(url: str, n: int, key: Ed25519PrivateKey) -> bytes:
    """Re-sign the transaction at `n` with the insider's key, over what it signed; the
    signature it had."""
    ((digest, signature),) = sql(
        url, "SELECT c.global_digest, s.signature FROM event_chain c JOIN chain_signatures s"
        " ON s.notification_id = c.notification_id WHERE c.notification_id = ?", (n,))
    sql(url, "UPDATE chain_signatures SET signature = ? WHERE notification_id = ?",
        (key.sign(b"sabot-head-v1\n" + n.to_bytes(8, "big") + bytes(digest)), n))
    return bytes(signature)


def test_a_forged_signature_after_the_last_witnessed_checkpoint_is_caught(
        log: Log, capsys: pytest.CaptureFixture[str]) -> None:
    """A tail covered by the operator's checkpoint, but by none a witness co-signed: plain
    verify checks its every signature; before the witnessed checkpoint, `--all-signatures`
    does."""
    witnessed = last_checkpoint(log.path)
    assert witnessed is not None
    played(log.url, "after", 2)  # checkpointed at close, not co-signed
    covered = last_checkpoint(log.path)
    assert covered is not None and covered.size > witnessed.size
    key, _ = attacker_key()
    forged = tail_signature(log.url, witnessed.head)
    original = resign(log.url, forged, key)
    for options in ([], ["--witness", log.vkey()]):
        code, out = verified(log, capsys, *options)
        assert code == 1 and "signature invalid" in out and f"notification {forged}" in out
    report = verify(log.url, witness_keys=[signer(log.witness).public_key])
    assert [f.notification_id for f in report.findings] == [forged]

    sql(log.url, "UPDATE chain_signatures SET signature = ? WHERE notification_id = ?",
        (original, forged))  # put back as it was
    early = tail_signature(log.url, 0)
    assert early < witnessed.head
    resign(log.url, early, key)
    code, out = verified(log, capsys, "--witness", log.vkey())
    assert code == 0, out  # the witnessed checkpoint vouches for it
    code, out = verified(log, capsys, "--witness", log.vkey(), "--all-signatures")
    assert code == 1 and f"notification {early}" in out
    code, out = verified(log, capsys)  # no witness named: every signature is checked
    assert code == 1 and f"notification {early}" in out


def test_a_hand_over_to_no_key_or_to_the_same_key_is_refused_in_one_line(
        log: Log, capsys: pytest.CaptureFixture[str]) -> None:
    before = log.path.read_bytes()
    for new_key, said in ((log.tmp / "missing.key", "does not exist"),
                          (log.old, "is the store's current key")):
        assert main(["audit", "hand-over", "--new-key", str(new_key), "--database",
                     log.url]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sabot: ") and said in err and "Traceback" not in err, err
        assert "PRIVATE KEY" not in err
    assert log.path.read_bytes() == before
