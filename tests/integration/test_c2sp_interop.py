"""A Sabot checkpoint and a witness's co-signature, checked by a C2SP signed-note verifier
written here from the specifications alone (https://c2sp.org/signed-note,
https://c2sp.org/tlog-checkpoint, https://c2sp.org/tlog-cosignature), with `cryptography`
and hashlib only: nothing of Sabot's note code (`infra.store.notes`, `checkpoint_notes`,
`tlog`) is imported, so that a misreading of the specification shared by both would have to
be made twice. The same verifier first checks the specifications' and Go's published
examples, so that it is known to read notes as the rest of the world writes them.

The store is written by `sabot play` in a process of its own (it checkpoints at its exit),
and co-signed by `sabot audit witness`; the files are read as the JSON lines they are.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from api.cli import main

# --- the verifier, from the specifications ---------------------------------------------------


class Rejected(Exception):
    pass


def key_id(name: str, kind: int, public: bytes) -> bytes:
    """signed-note: SHA-256(key name || 0x0A || signature type || public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([kind]) + public).digest()[:4]


def split_note(note: bytes) -> tuple[bytes, list[tuple[str, bytes, bytes]]]:
    """The text (with its final newline) and each signature line's name, key id, signature."""
    text = note.decode("utf-8")
    if any(ord(c) < 0x20 and c != "\n" for c in text):
        raise Rejected("control character")
    cut = note.rindex(b"\n\n")
    body, lines = note[:cut + 1], note[cut + 2:]
    if not lines.endswith(b"\n"):
        raise Rejected("no final newline")
    signatures = []
    for line in lines.decode().splitlines():
        dash, name, encoded = line.split(" ")
        if dash != "\u2014" or not name or "+" in name:
            raise Rejected(f"bad signature line {line!r}")
        raw = base64.b64decode(encoded, validate=True)
        signatures.append((name, raw[:4], raw[4:]))
    return body, signatures


def ed25519(public: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except InvalidSignature:
        return False
    return True


def verify_note(note: bytes, name: str, public: bytes) -> bytes:
    """The text of a note signed (type 0x01, Ed25519) by the key `name`/`public`."""
    body, signatures = split_note(note)
    mine = [s for n, k, s in signatures if (n, k) == (name, key_id(name, 0x01, public))]
    if not mine or not all(ed25519(public, s, body) for s in mine):
        raise Rejected(f"not signed by {name}")
    return body


def verify_cosignature(note: bytes, name: str, public: bytes) -> int:
    """The time of a valid tlog-cosignature/v1 (type 0x04) by `name`/`public` of the note."""
    body, signatures = split_note(note)
    for n, k, s in signatures:
        if (n, k) == (name, key_id(name, 0x04, public)) and len(s) == 72:
            when = int.from_bytes(s[:8], "big")
            if ed25519(public, s[8:], b"cosignature/v1\ntime %d\n" % when + body):
                return when
    raise Rejected(f"no co-signature by {name}")


def checkpoint_body(body: bytes) -> tuple[str, int, bytes, list[str]]:
    """tlog-checkpoint: origin, decimal size, base64 root, then extension lines."""
    origin, size, root, *extensions = body.decode()[:-1].split("\n")
    if not origin or not size.isdigit() or (size != "0" and size.startswith("0")):
        raise Rejected("bad checkpoint")
    return origin, int(size), base64.b64decode(root, validate=True), extensions


def verify_inclusion(leaf: bytes, index: int, size: int, proof: list[bytes],
                     root: bytes) -> bool:
    """RFC 9162, 2.1.3.2, as written there."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + p + r).digest()
            while fn and not fn & 1:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = hashlib.sha256(b"\x01" + r + p).digest()
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


# --- the published examples -----------------------------------------------------------------

GO_TEXT = (b"If you think cryptography is the answer to your problem,\n"
           b"then you don't know what your problem is.\n")
GO_NOTE = GO_TEXT + (
    "\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotp"
    "RZb6KE6RyyBwJnAM=\n— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5"
    "ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n").encode()


def vkey(text: str) -> tuple[str, bytes]:
    """signed-note's verifier key: name+hex key id+base64(type || public key)."""
    name, hexid, encoded = text.split("+", 2)
    raw = base64.b64decode(encoded)
    assert key_id(name, raw[0], raw[1:]).hex() == hexid
    return name, raw[1:]


def test_the_spec_verifier_reads_gos_examples() -> None:
    peter = vkey("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW")
    enoch = vkey("EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop")
    assert verify_note(GO_NOTE, *peter) == GO_TEXT
    assert verify_note(GO_NOTE, *enoch) == GO_TEXT
    with pytest.raises(Rejected):
        verify_note(GO_NOTE.replace(b"answer", b"reply!"), *peter)
    with pytest.raises(Rejected):
        verify_cosignature(GO_NOTE, *peter)  # an Ed25519 key is not a witness's key


def test_the_spec_verifier_reads_the_tlog_cosignature_example() -> None:
    sofa = ("example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n"
            "\n— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URY"
            "N7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n— witness.example.com/w1 jWbPPwAAAABkGFDLEZ"
            "MHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA"
            "==\n").encode()
    body, signatures = split_note(sofa)
    assert checkpoint_body(body)[:2] == ("example.com/behind-the-sofa", 20852163)
    (_, _, cosignature) = signatures[1]
    assert int.from_bytes(cosignature[:8], "big") == 1679315147  # the spec's "time 1679315147"


# --- a Sabot checkpoint, a witness's co-signature, a dossier's proof ------------------------


def public_of(key_file: Path) -> bytes:
    private = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    return private.public_key().public_bytes(serialization.Encoding.Raw,
                                             serialization.PublicFormat.Raw)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A store written by `sabot play` (its own process: it checkpoints at exit), and the
    name of its table."""
    store = tmp_path_factory.mktemp("c2sp") / "play.db"
    settings = {k: v for k, v in os.environ.items() if not k.startswith("SABOT_")}
    done = subprocess.run(
        [sys.executable, "-m", "api.cli", "play", "--database", f"sqlite:///{store}",
         "--coups", "3", "--seed", "c2", "--json"],
        env=settings, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return store, json.loads(done.stdout)["table"]


def test_a_sabot_checkpoint_and_its_cosignature_check_by_the_spec(played: tuple[Path, str],
                                                                   tmp_path: Path) -> None:
    store, _ = played
    url = f"sqlite:///{store}"
    checkpoint = [line for line in lines_of(Path(f"{store}.checkpoints"))
                  if line["kind"] == "checkpoint"][-1]
    public = public_of(Path(f"{store}.signing.key"))
    note = checkpoint["note"].encode()
    origin = split_note(note)[1][0][0]
    body = verify_note(note, origin, public)
    name, size, root, extensions = checkpoint_body(body)
    assert (name, size, root.hex()) == (origin, checkpoint["size"], checkpoint["root"])
    assert origin.startswith("sabot.") and len(root) == 32 and len(extensions) == 1
    with pytest.raises(Rejected):
        verify_note(note.replace(b"\n%d\n" % size, b"\n%d\n" % (size + 1), 1), origin, public)

    key = tmp_path / "witness.key"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert main(["audit", "witness", "--key", str(key), "--database", url]) == 0
    cosigned = [line for line in lines_of(Path(f"{store}.checkpoints"))
                if line["kind"] == "witness"][-1]
    witness_line = cosigned["note_signature"]
    witness_name = witness_line.split(" ")[1]
    with_witness = note + witness_line.encode() + b"\n"
    when = verify_cosignature(with_witness, witness_name, public_of(key))
    assert abs(when - int(time.time())) < 600
    assert verify_note(with_witness, origin, public) == body
    with pytest.raises(Rejected):  # the witness's key does not sign as the log
        verify_note(with_witness, witness_name, public_of(key))


def canonical_leaf(event: dict[str, Any]) -> bytes:
    """Sabot's leaf (docs/audit.md): SHA-256(0x00 || u64 notification || u32-length-prefixed
    stream id, u64 version, topic and stored bytes)."""
    stream, topic = bytes.fromhex(event["stream"].replace("-", "")), event["topic"].encode()
    state = bytes.fromhex(event["state"])
    data = (event["n"].to_bytes(8, "big") + len(stream).to_bytes(4, "big") + stream
            + event["version"].to_bytes(8, "big") + len(topic).to_bytes(4, "big") + topic
            + len(state).to_bytes(4, "big") + state)
    return hashlib.sha256(b"\x00" + data).digest()


def test_a_dossiers_tlog_proofs_check_by_the_spec(played: tuple[Path, str],
                                                  tmp_path: Path) -> None:
    store, table = played
    url = f"sqlite:///{store}"
    key = tmp_path / "witness.key"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert main(["audit", "witness", "--key", str(key), "--database", url]) == 0
    out = tmp_path / "coup-1.json"
    assert main(["audit", "dossier", table, "1", "--out", str(out), "--database", url]) == 0
    document = json.loads(out.read_text())
    public = bytes.fromhex(document["checkpoint"]["public_key"])
    (witness,) = [w for w in document["witnesses"]
                  if w["public_key"] == public_of(key).hex()]  # the test above's co-signed too
    for text, event in zip(document["tlog_proofs"], document["events"], strict=True):
        head, _, note = text.partition("\n\n")  # tlog-proof: header, index, hashes, checkpoint
        header, index, *hashes = head.split("\n")
        assert header == "c2sp.org/tlog-proof@v1" and index.startswith("index ")
        origin = split_note(note.encode())[1][0][0]
        _, size, root, _ = checkpoint_body(verify_note(note.encode(), origin, public))
        assert verify_cosignature(note.encode(), witness["name"], public_of(key)) > 0
        proof = [base64.b64decode(h, validate=True) for h in hashes]
        assert verify_inclusion(canonical_leaf(event), int(index[6:]), size, proof, root)
        assert not verify_inclusion(canonical_leaf(event), int(index[6:]) + 1, size, proof,
                                    root)


def test_a_checkpoint_note_edited_in_the_file_is_named_by_verify(
        played: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The operator's file edited as an attacker would (a text editor, no Sabot code): the
    note's root replaced by another tree's, its signature left as it was."""
    store, _ = played
    copy = tmp_path / "copy.db"
    for suffix in ("", ".signing.key", ".checkpoints"):
        Path(f"{copy}{suffix}").write_bytes(Path(f"{store}{suffix}").read_bytes())
    Path(f"{copy}.signing.key").chmod(0o600)
    url = f"sqlite:///{copy}"
    assert main(["audit", "verify", "--database", url]) == 0
    path = Path(f"{copy}.checkpoints")
    lines = lines_of(path)
    last = max(i for i, line in enumerate(lines) if line["kind"] == "checkpoint")
    body, _ = split_note(lines[last]["note"].encode())
    root = base64.b64encode(hashlib.sha256(b"another tree").digest()).decode()
    edited = body.decode().split("\n")
    edited[2] = root
    lines[last]["note"] = "\n".join(edited) + "\n" + lines[last]["note"][len(body) + 1:]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    capsys.readouterr()
    assert main(["audit", "verify", "--database", url]) == 1
    out = capsys.readouterr().out
    assert "checkpoint invalid" in out and "the store is NOT intact" in out
