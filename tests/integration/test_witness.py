"""A witness remembers what it co-signed in its own file, and refuses a history rewritten by
the key holder: attacks made as the key holder would (raw SQL, the key file read with
`cryptography`, the checkpoint file deleted or appended to by hand), never Sabot's code to
forge. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from api.cli import main
from infra.store.checkpoints import checkpoint_path, checkpoints, last_checkpoint, read_lines
from infra.store.opening import open_store
from infra.store.witness import WitnessState, read_state
from tests.integration.test_tamper import Played, played  # noqa: F401 (a fixture)
from tests.integration.test_trust_roots import canonical, database, rechain, run


def operator_key(url: str) -> Ed25519PrivateKey:
    """The operator's private key, read from its file as the key holder would."""
    if os.environ.get("SABOT_SIGNING_KEY"):
        path = Path(os.environ["SABOT_SIGNING_KEY"])
    elif url.startswith("sqlite:"):
        path = Path(url[len("sqlite:///"):] + ".signing.key")
    else:
        path = Path(".sabot/signing.key")
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def rewrite_a_payout(url: str) -> None:
    """Double the table's first payout (a coup rewritten), rechain, re-sign every partition
    head with the real key and empty the stored tree, so that the next fold refolds the
    rewritten history."""
    key = operator_key(url)
    nid = "rowid" if url.startswith("sqlite:") else "notification_id"
    with database(url) as connection:
        ((n, state),) = run(connection, f"SELECT {nid}, state FROM stored_events"
                            f" WHERE topic LIKE ? ORDER BY {nid} LIMIT 1", ("%.PayoutMade",))
        payout = msgspec.msgpack.decode(bytes(state))
        for field in ("staked", "net", "commission"):
            payout["payout"][field] *= 2
        run(connection, f"UPDATE stored_events SET state = ? WHERE {nid} = ?",
            (msgspec.msgpack.encode(payout), n))
        digests = rechain(connection, url)
        for (head,) in run(connection, "SELECT notification_id FROM chain_signatures"):
            signature = key.sign(b"sabot-head-v1\n" + head.to_bytes(8, "big") + digests[head])
            run(connection, "UPDATE chain_signatures SET signature = ? WHERE notification_id = ?",
                (signature, head))
        run(connection, "UPDATE merkle_tree SET size = 0, head = 0, frontier = ?,"
            " partitions = ?", (b"", ""))


def rewritten_root(url: str) -> tuple[int, bytes]:
    """The size and RFC 9162 root of the store's events as they are now (the spec's hashes)."""
    nid = "rowid" if url.startswith("sqlite:") else "notification_id"
    with database(url) as connection:
        rows = run(connection, f"SELECT {nid}, originator_id, originator_version, topic, state"
                   f" FROM stored_events ORDER BY {nid}")
    level = [hashlib.sha256(b"\x00" + n.to_bytes(8, "big")
                            + canonical(oid, v, t, bytes(s))).digest() for n, oid, v, t, s in rows]

    def mth(leaves: list[bytes]) -> bytes:
        if len(leaves) == 1:
            return leaves[0]
        k = 1 << ((len(leaves) - 1).bit_length() - 1)
        return hashlib.sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:])).digest()

    return len(level), mth(level)


def forge_checkpoint_line(path: Path, key: Ed25519PrivateKey, root: bytes, *,
                          own_key: bool = False) -> None:
    """Append a copy of the file's last checkpoint with another root, re-signed with `key`
    over its text as docs/audit.md spells it (the frontier dropped: a key holder would not
    bother, nor with the signed note); `own_key`: naming `key` as its key."""
    last = json.loads([line for line in path.read_text().splitlines()
                       if '"kind":"checkpoint"' in line][-1])
    last["root"], last["frontier"] = root.hex(), []
    last.pop("note", None)
    if own_key:
        public = key.public_key().public_bytes(serialization.Encoding.Raw,
                                               serialization.PublicFormat.Raw)
        last["public_key"], last["key"] = public.hex(), hashlib.sha256(public).hexdigest()[:16]
    text = (f"{last['size']}\n{last['root']}\n{last['head']}\n{last['chain']}\n{last['time']}\n"
            + "".join(f"partition {p['key']} {p['size']} {p['head']} {p['chain']}\n"
                      for p in last["partitions"]))
    last["signature"] = key.sign(b"sabot-checkpoint-v1\n" + text.encode()).hex()
    with path.open("a") as file:
        file.write(json.dumps(last, separators=(",", ":")) + "\n")


def checkpoint_file(url: str) -> Path:
    with open_store(url, create=False) as store:
        path = checkpoint_path(store.database)
    assert path is not None
    return path


def cosigned(url: str, key: Path, state: Path | None,
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`sabot audit witness`: its exit code and what it said."""
    options = ["--state", str(state)] if state is not None else []
    code = main(["audit", "witness", "--key", str(key), "--database", url, *options])
    said = capsys.readouterr()
    return code, said.out + said.err


def test_a_witness_keeps_its_own_state_beside_its_key(
        played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    key = tmp_path / "witness.key"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert cosigned(played.url, key, None, capsys)[0] == 0
    state = read_state(tmp_path / "witness.key.state")
    latest = last_checkpoint(checkpoint_file(played.url))
    assert isinstance(state, WitnessState) and latest is not None
    assert (state.size, state.root, state.log_key) == (latest.size, latest.root,
                                                        latest.public_key)
    assert state.tree() is not None  # the frontier folds to the root
    assert not list(tmp_path.glob(".witness.key.state.*"))  # written atomically, no leftover
    assert cosigned(played.url, key, None, capsys)[0] == 0  # the same checkpoint again: fine


def test_the_key_holder_who_deletes_the_checkpoint_file_and_recheckpoints_is_refused(
        played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    key, state = tmp_path / "witness.key", tmp_path / "elsewhere" / "witness.state"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert cosigned(played.url, key, state, capsys)[0] == 0
    remembered = read_state(state)
    assert remembered is not None and remembered.size == played.count

    rewrite_a_payout(played.url)
    path = checkpoint_file(played.url)
    path.unlink()  # the operator's file gone: nothing in it says what was co-signed
    assert main(["audit", "checkpoint", "--database", played.url]) == 0
    capsys.readouterr()
    (forged,) = checkpoints(read_lines(path))
    size, root = rewritten_root(played.url)
    assert (forged.size, forged.root) == (size, root.hex()) == (played.count, forged.root)
    assert forged.root != remembered.root and forged.signed_by_its_key()

    code, said = cosigned(played.url, key, state, capsys)
    assert code == 1 and "does not extend" in said, said
    assert checkpoints(read_lines(path)) == read_lines(path)  # no co-signature written
    assert read_state(state) == remembered  # a refusal leaves the memory as it was
    # a witness without memory (a fresh state) would co-sign the rewritten history
    assert cosigned(played.url, key, tmp_path / "amnesiac.state", capsys)[0] == 0


def test_at_an_unchanged_size_another_root_or_a_store_that_moved_is_refused(
        played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    key, state = tmp_path / "witness.key", tmp_path / "witness.state"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert cosigned(played.url, key, state, capsys)[0] == 0
    path = checkpoint_file(played.url)
    before = path.read_bytes()

    rewrite_a_payout(played.url)  # the file left in place, its checkpoint now the store's past
    code, said = cosigned(played.url, key, state, capsys)
    assert code == 1 and "do not give the root" in said, said  # the leaves recomputed

    size, root = rewritten_root(played.url)
    assert size == played.count
    forge_checkpoint_line(path, operator_key(played.url), root)  # same size, another root
    code, said = cosigned(played.url, key, state, capsys)
    assert code == 1 and "does not extend" in said, said
    assert path.read_bytes().startswith(before)
    assert b'"kind":"witness"' not in path.read_bytes()[len(before):]


def test_a_checkpoint_signed_by_another_key_is_refused(
        played: Played, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    key, state = tmp_path / "witness.key", tmp_path / "witness.state"
    assert main(["keys", "create", "--out", str(key)]) == 0
    assert cosigned(played.url, key, state, capsys)[0] == 0
    path = checkpoint_file(played.url)
    forge_checkpoint_line(path, Ed25519PrivateKey.generate(), bytes(32), own_key=True)
    code, said = cosigned(played.url, key, state, capsys)
    assert code == 1 and "not the operator's" in said, said
