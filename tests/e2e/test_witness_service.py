"""A witness as a process of its own on another port (`sabot audit witness serve`, C2SP
tlog-witness's add-checkpoint) co-signs the checkpoints `sabot play` pushes to it
(`SABOT_WITNESSES`), refuses a history the key holder rewrote, and `sabot audit verify
--witnesses N` counts its co-signatures. A second witness configured but down never holds the
writer up, and is named when two are required.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from api.cli import main
from infra.store.checkpoint_notes import witness_name
from infra.store.checkpoints import Cosignature, checkpoints, cosigners, read_lines
from infra.store.notes import CosignatureVerifier, b64, parse_note
from infra.store.signing import create_key
from infra.store.tlog_witness import SIZE_TYPE, AddCheckpoint
from infra.store.witness import read_state
from tests.e2e.test_api import free_port
from tests.integration.test_witness import rewrite_a_payout


@dataclass
class Setup:
    url: str
    path: Path  # the checkpoint file
    env: dict[str, str]  # a writer's: its key, its witnesses
    witness: str  # the running witness's URL
    state: Path
    vkeys: tuple[str, str]  # the running witness's, the absent one's


def sabot(setup: Setup, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "api.cli", *args], env=setup.env,
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    operator = create_key(tmp_path / "operator.key")
    absent = create_key(tmp_path / "absent.key")
    absent_vkey = CosignatureVerifier(witness_name(absent), absent.public_key).vkey()
    create_key(tmp_path / "witness.key")
    port, closed = free_port(), free_port()
    state = tmp_path / "witness-home" / "witness.state"
    served = subprocess.Popen(
        [sys.executable, "-m", "api.cli", "audit", "witness", "serve", "--key",
         str(tmp_path / "witness.key"), "--state", str(state), "--log-key",
         operator.public_key.hex(), "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert served.stdout is not None
        said = served.stdout.readline()
        assert said.startswith("sabot audit witness serve: witness "), said
        vkey = said.split()[5]
        url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "SABOT_SIGNING_KEY": str(tmp_path / "operator.key"),
               "SABOT_WITNESSES": f"{url} {vkey}, http://127.0.0.1:{closed} {absent_vkey}"}
        database = tmp_path / "sabot.db"
        yield Setup(f"sqlite:///{database}", Path(f"{database}.checkpoints"), env, url, state,
                    (vkey, absent_vkey))
    finally:
        served.send_signal(signal.SIGTERM)
        served.communicate(timeout=30)


def test_a_witness_service_cosigns_what_a_writer_pushes_and_refuses_a_rewrite(
        setup: Setup, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    played = sabot(setup, "play", "--database", setup.url, "--coups", "3", "--players", "3",
                   "--table", "witnessed", "--json")
    assert played.returncode == 0, played.stderr
    assert "not co-signed by witness" in played.stderr  # the absent one: logged, not blocking
    lines = read_lines(setup.path)
    first = checkpoints(lines)[-1]
    cosignatures = [line for line in lines if isinstance(line, Cosignature)]
    assert len(cosignatures) == 1, played.stderr
    cosigned = cosignatures[0]
    assert cosigned.valid_for(first) and cosigned.note_signature.startswith("\u2014 ")
    state = read_state(setup.state)
    assert state is not None and (state.size, state.root) == (first.size, first.root)

    # a second writer: the witness co-signs the grown tree from a consistency proof
    again = sabot(setup, "play", "--database", setup.url, "--coups", "2", "--players", "3",
                  "--json")
    assert again.returncode == 0, again.stderr
    lines = read_lines(setup.path)
    grown = checkpoints(lines)[-1]
    assert grown.size > first.size
    assert bytes.fromhex(cosigned.public_key).hex() in cosigners(lines, grown)
    state = read_state(setup.state)
    assert state is not None and state.size == grown.size

    monkeypatch.setenv("SABOT_SIGNING_KEY", setup.env["SABOT_SIGNING_KEY"])
    monkeypatch.setenv("SABOT_WITNESSES", setup.env["SABOT_WITNESSES"])
    assert main(["audit", "verify", "--database", setup.url, "--witnesses", "1"]) == 0
    assert "witnesses: 1 of 1 required" in capsys.readouterr().out
    assert main(["audit", "verify", "--database", setup.url, "--witnesses", "2"]) == 4
    out = capsys.readouterr().out
    absent = setup.vkeys[1].split("+")[0]
    assert "WITNESSES: 1 of 2 required" in out and f"(not: {absent})" in out, out
    bundle = setup.path.parent / "bundle"  # the note-only co-signatures check offline too
    assert main(["audit", "export", "--table", "witnessed", "--out", str(bundle),
                 "--database", setup.url]) == 0
    assert main(["audit", "check-dossier", str(bundle)]) == 0
    assert "every signature holds (2 by witnesses)" in capsys.readouterr().out

    # the key holder rewrites a coup, deletes the checkpoint file, and writes on
    rewrite_a_payout(setup.url)
    setup.path.unlink()
    later = sabot(setup, "play", "--database", setup.url, "--coups", "1", "--players", "3",
                  "--json")
    assert later.returncode == 0, later.stderr  # writing is never held up
    assert "answered 422" in later.stderr, later.stderr  # the consistency proof fails
    lines = read_lines(setup.path)
    forged = checkpoints(lines)[-1]
    assert forged.size > grown.size
    assert not [line for line in lines if isinstance(line, Cosignature)]  # nothing co-signed
    assert read_state(setup.state) == state
    # verify alone cannot tell (the key holder re-signed everything); the witnesses can
    assert main(["audit", "verify", "--database", setup.url, "--witnesses", "1"]) == 4
    assert "WITNESSES: 0 of 1 required" in capsys.readouterr().out

    # the same, asked by hand: a stale `old` is a 409 saying the witness's size, no proof a
    # 422, a note no key of the log's signed a 403, another log's a 404
    with httpx.Client(base_url=setup.witness) as client:
        def ask(request: AddCheckpoint) -> httpx.Response:
            return client.post("/add-checkpoint", content=request.encode())

        stale = ask(AddCheckpoint(0, [], forged.note))
        assert stale.status_code == 409 and stale.text == f"{grown.size}\n"
        assert stale.headers["content-type"].startswith(SIZE_TYPE)
        assert ask(AddCheckpoint(grown.size, [], forged.note)).status_code == 422
        text = parse_note(forged.note).text
        unsigned = f"{text}\n\u2014 nobody {b64(bytes(68))}\n"
        assert ask(AddCheckpoint(grown.size, [], unsigned)).status_code == 403
        elsewhere = text.replace(text.split("\n")[0], "example.com/log", 1)
        assert ask(AddCheckpoint(0, [], f"{elsewhere}\n\u2014 x {b64(bytes(68))}\n")
                   ).status_code == 404
        assert ask(AddCheckpoint(forged.size + 1, [], forged.note)).status_code == 400
        assert client.post("/add-checkpoint", content=b"not a request").status_code == 400
    assert read_state(setup.state) == state
