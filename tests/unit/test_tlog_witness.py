"""C2SP tlog-witness's add-checkpoint: the request's form, and a witness's answers to a log's
trees as the specification (https://c2sp.org/tlog-witness) lists them, quoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.errors import SettingsError
from infra.settings import witnesses
from infra.store.checkpoint_notes import checkpoint_note
from infra.store.merkle import Frontier, consistency_proof, leaf_hash, root_of
from infra.store.notes import CosignatureVerifier, Ed25519Verifier, MalformedNote, open_note
from infra.store.signing import create_key
from infra.store.tlog_witness import (
    SIZE_TYPE,
    AddCheckpoint,
    Answer,
    LogWitness,
    parse_request,
)
from infra.store.witness import read_state

LEAVES = [leaf_hash(i.to_bytes(2, "big")) for i in range(40)]
ORIGIN = "sabot.example/log"


def test_a_request_reads_back_as_written() -> None:
    request = AddCheckpoint(7, [bytes(32), bytes(range(32))], "note\n\n\u2014 x AAAA\n")
    assert parse_request(request.encode()) == request
    assert request.encode().startswith(b"old 7\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n")


@pytest.mark.parametrize("body", [
    b"old 01\n\nnote\n",  # "no leading zeroes"
    b"old -1\n\nnote\n",
    b"new 3\n\nnote\n",
    b"old 3\nnote\n",  # no blank line
    b"old 3\nAAAA\n\nnote\n",  # not a 32-byte hash
    b"old 3\n" + b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n" * 64 + b"\nnote\n",
    b"\xff\n\n",
])
def test_a_malformed_request_is_refused(body: bytes) -> None:
    """'The client MUST NOT send more than 63 consistency proof lines.' 'encoded as an ASCII
    decimal with no leading zeroes'."""
    with pytest.raises(MalformedNote):
        parse_request(body)


class Log:
    """A log of `LEAVES`, its key, and a witness of it with its state in `tmp_path`."""

    def __init__(self, tmp_path: Path) -> None:
        self.key = create_key(tmp_path / "log.key")
        self.signer = create_key(tmp_path / "witness.key")
        self.state = tmp_path / "witness.state"
        self.witness = LogWitness(self.signer, Ed25519Verifier(ORIGIN, self.key.public_key),
                                  self.state, "witness.example/w1")

    def note(self, size: int, leaves: list[bytes] = LEAVES) -> str:
        return checkpoint_note(ORIGIN, size, root_of(leaves[:size]), b"text", self.key)

    def proof(self, old: int, new: int) -> list[bytes]:
        tree = Frontier()
        for leaf in LEAVES[:old]:
            tree.append(leaf)
        return consistency_proof(tree, LEAVES[old:new]) if old else []

    def add(self, old: int, new: int, note: str | None = None,
            proof: list[bytes] | None = None) -> Answer:
        return self.witness.add_checkpoint(AddCheckpoint(
            old, self.proof(old, new) if proof is None else proof,
            note or self.note(new)).encode())


def test_a_witness_cosigns_a_growing_log_and_remembers_it(tmp_path: Path) -> None:
    """'If all the checks above pass, the witness MUST update its record of the latest
    cosigned checkpoint and respond with a "200 Success" HTTP status code. The response body
    MUST be a sequence of one or more note signature lines'."""
    log = Log(tmp_path)
    for old, new in ((0, 3), (3, 8), (8, 8), (8, 21)):
        status, body, _ = log.add(old, new)
        assert status == 200, body
        verifier = CosignatureVerifier("witness.example/w1", log.signer.public_key)
        assert open_note(log.note(new) + body, [verifier]).verified
        state = read_state(log.state)
        assert state is not None and (state.size, state.root) == (new,
                                                                   root_of(LEAVES[:new]).hex())


def test_a_witness_refuses_as_the_specification_says(tmp_path: Path) -> None:
    log = Log(tmp_path)
    assert log.add(0, 8)[0] == 200
    # 'If it doesn't match, the witness MUST respond with a "409 Conflict" HTTP status code.
    # The response body MUST consist of the tree size of the latest cosigned checkpoint'
    assert log.add(0, 13) == (409, "8\n", SIZE_TYPE)
    assert log.add(5, 13)[:2] == (409, "8\n")
    # 'If the old size matches the checkpoint size, the witness MUST check that the root
    # hashes are also identical. If they don't match, ... "409 Conflict"'
    forked = [*LEAVES[:2], leaf_hash(b"rewritten"), *LEAVES[3:]]
    assert log.add(8, 8, note=log.note(8, forked), proof=[])[:2] == (409, "8\n")
    # 'If the Merkle Consistency Proof doesn't verify, ... "422 Unprocessable Entity"'
    assert log.add(8, 13, note=log.note(13, forked))[0] == 422
    assert log.add(8, 13, proof=[])[0] == 422
    # 'The old size MUST be equal to or lower than the checkpoint size. Otherwise, ... "400
    # Bad Request"'
    assert log.add(8, 5, proof=[])[0] == 400
    # 'If none of the signatures verify against a trusted public key, ... "403 Forbidden"'
    other = create_key(tmp_path / "other.key")
    foreign = checkpoint_note(ORIGIN, 13, root_of(LEAVES[:13]), b"text", other)
    assert log.add(8, 13, note=foreign)[0] == 403
    # 'If the checkpoint origin is unknown, the witness MUST respond with a "404 Not Found"'
    elsewhere = checkpoint_note("example.com/other", 13, root_of(LEAVES[:13]), b"t", log.key)
    assert log.add(8, 13, note=elsewhere)[0] == 404
    state = read_state(log.state)
    assert state is not None and state.size == 8  # nothing refused was remembered
    assert log.add(8, 13)[0] == 200


def test_the_witnesses_setting_is_url_and_vkey_pairs() -> None:
    vkey = "w+01234567+BAAA"
    assert witnesses({"SABOT_WITNESSES": f"http://a:1 {vkey}, https://b/w {vkey}"}) == [
        ("http://a:1", vkey), ("https://b/w", vkey)]
    assert witnesses({}) == []
    for wrong in ("http://a:1", f"ftp://a {vkey}", f"http://a {vkey} extra"):
        with pytest.raises(SettingsError, match="SABOT_WITNESSES"):
            witnesses({"SABOT_WITNESSES": wrong})
