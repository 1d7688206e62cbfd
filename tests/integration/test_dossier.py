"""Coup dossiers: written by `sabot audit dossier`, checked offline by `check-dossier` and by
the standalone checker run alone; any changed byte of a card, a stake, a proof or a
signature makes the check fail."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.cli import main
from domain.game.settings import Variant
from infra.audit import offline_check
from infra.store.notes import CosignatureVerifier, Ed25519Verifier
from tests.integration.test_table_service import SMALL_SHOE, a_service, open_table, play

COUP = 3


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A chemin de fer game whose first taille is over, and the dossier of its coup 3."""
    folder = tmp_path_factory.mktemp("dossier")
    url = f"sqlite:///{folder}/sabot.db"
    with a_service(url) as service:
        table_id = open_table(service, "dossier", Variant.CHEMIN_DE_FER, **SMALL_SHOE)
        play(service, table_id, 12)
        assert service.state(table_id).taille >= 2
    out = folder / "coup-3.json"
    assert main(["audit", "dossier", "dossier", str(COUP), "--out", str(out),
                 "--database", url]) == 0
    yield url, out


def test_a_dossier_checks_offline(written: tuple[str, Path],
                                  capsys: pytest.CaptureFixture[str]) -> None:
    _, out = written
    document = json.loads(out.read_text())
    assert document["format"] == "sabot-dossier-v1"
    assert document["coup"] == COUP and document["table"]["name"] == "dossier"
    kinds = [e["event"] for e in document["events"]]
    assert kinds[0] == "ShoeShuffled" and "ShoeCut" in kinds and "CoupClosed" in kinds
    assert kinds[-1] == "ShoeSeedRevealed"
    assert document["shoe"]["seed"] is not None
    capsys.readouterr()
    assert main(["audit", "check-dossier", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "cards re-dealt from the revealed seed" in printed
    assert "the file checks" in printed
    key = document["public_keys"][0]["public_key"]
    assert main(["audit", "check-dossier", str(out), "--public-key", key]) == 0
    assert main(["audit", "check-dossier", str(out), "--public-key", "00" * 32]) == 1


def test_the_standalone_checker_runs_alone(written: tuple[str, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Written as one file by `sabot audit checker` and run isolated (no project on the path):
    it checks the dossier, and refuses a changed one."""
    _, out = written
    checker = tmp_path / "elsewhere" / "sabot-check.pyz"
    assert main(["audit", "checker", "--out", str(checker)]) == 0
    assert capsys.readouterr().out == f"checker -> {checker}\n"
    run = subprocess.run([sys.executable, "-I", str(checker), str(out)], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "the file checks" in run.stdout
    forged = tmp_path / "forged.json"
    text = out.read_text()
    forged.write_text(text.replace('"amount": ', '"amount": 9', 1))
    run = subprocess.run([sys.executable, "-I", str(checker), str(forged)], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert "differ from its signed bytes" in run.stdout


def test_a_coup_not_played_has_no_dossier(written: tuple[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = written
    assert main(["audit", "dossier", "dossier", "999", "--out", str(tmp_path / "x.json"),
                 "--database", url]) == 1
    assert "coup 999 of table dossier is not closed" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def _positions(text: str) -> dict[str, list[tuple[int, str]]]:
    """Where each kind of protected value lies in the file, and the characters it may take."""
    found: dict[str, list[tuple[int, str]]] = {}

    def add(kind: str, pattern: str, alphabet: str | None = None) -> None:
        for match in re.finditer(pattern, text):
            for i in range(match.start(1), match.end(1)):
                chars = alphabet or ("0123456789abcdef" if kind != "stake" else "0123456789")
                if kind == "card":
                    chars = offline_check.RANKS if i == match.start(1) else offline_check.SUITS
                found.setdefault(kind, []).append((i, chars))

    add("card", r'"card": "(\w\w)"')
    add("stake", r'"amount": (\d+)')
    add("proof", r'"proof": \[([^\]]+)\]')
    add("signature", r'"signature": "([0-9a-f]+)"')
    add("state", r'"state": "([0-9a-f]+)"')
    for kind in found:
        found[kind] = [(i, chars) for i, chars in found[kind] if text[i] in chars]
    return found


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_changed_byte_of_a_card_stake_proof_or_signature_fails(
        written: tuple[str, Path], data: st.DataObject) -> None:
    _, out = written
    text = out.read_text()
    places = _positions(text)
    assert set(places) == {"card", "stake", "proof", "signature", "state"}
    kind = data.draw(st.sampled_from(sorted(places)))
    position, alphabet = data.draw(st.sampled_from(places[kind]))
    other = data.draw(st.sampled_from([c for c in alphabet if c != text[position]]))
    changed = text[:position] + other + text[position + 1:]
    try:
        report = offline_check.check_dossier(json.loads(changed))
    except ValueError:
        return  # no longer JSON at all: refused too
    assert not report.ok, f"{kind} at {position}: {text[position]} -> {other}"


def test_each_event_has_a_c2sp_tlog_proof_that_checks(written: tuple[str, Path]) -> None:
    _, out = written
    document = json.loads(out.read_text())
    note = document["checkpoint_note"]
    proofs = document["tlog_proofs"]
    assert len(proofs) == len(document["events"]) and note.startswith("sabot.")
    for proof, event in zip(proofs, document["events"], strict=True):
        assert proof.startswith(f"c2sp.org/tlog-proof@v1\nindex {event['leaf']}\n")
        assert proof.endswith("\n\n" + note)  # the checkpoint note, verbatim (no witness yet)
    report = offline_check.check_dossier(document)
    assert report.ok and any("C2SP tlog-proofs" in line for line in report.checked)

    def changed(n: int, old: str, new: str) -> dict[str, object]:
        altered = list(proofs)
        assert old in altered[n]
        altered[n] = altered[n].replace(old, new, 1)
        return {**document, "tlog_proofs": altered}

    hash_line = proofs[2].split("\n")[2]
    other_line = proofs[2].split("\n")[3]
    size = f"\n{document['checkpoint']['size']}\n"
    for forged, why in (
            (changed(2, hash_line, other_line), "does not lead from event 3"),
            (changed(1, f"index {document['events'][1]['leaf']}\n",
                     f"index {document['events'][1]['leaf'] + 1}\n"), "does not lead"),
            (changed(0, size, f"\n{document['checkpoint']['size'] + 1}\n"), "not the dossier's"),
            ({**document, "tlog_proofs": proofs[1:]}, "not one tlog-proof an event"),
            ({**document, "checkpoint_note": note.replace(size, "\n1\n")}, "its note")):
        report = offline_check.check_dossier(forged)
        assert not report.ok and any(why in line for line in report.failures), report.failures
    assert not offline_check.check_dossier(document, witnesses=[bytes(32)]).ok
    # a checker handed out before reads the checkpoint's fields strictly: they are the same
    assert set(document["checkpoint"]) == {"size", "root", "head", "chain", "time", "key",
                                           "public_key", "signature", "partitions"}
    before = {k: v for k, v in document.items()
              if k not in ("checkpoint_note", "tlog_proofs", "witnesses")}
    assert offline_check.check_dossier(before).ok  # and a dossier of before still checks


def test_a_witness_co_signature_travels_in_the_dossier(
        written: tuple[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = written
    key, other = tmp_path / "witness.key", tmp_path / "other.key"
    assert main(["keys", "create", "--out", str(other)]) == 0
    assert main(["keys", "create", "--out", str(key)]) == 0
    other_public, public = re.findall(r"public key: ([0-9a-f]{64})", capsys.readouterr().out)
    assert main(["audit", "witness", "--key", str(key), "--database", url]) == 0
    out = tmp_path / "cosigned.json"
    assert main(["audit", "dossier", "dossier", str(COUP), "--out", str(out),
                 "--database", url]) == 0
    document = json.loads(out.read_text())
    (witness,) = document["witnesses"]
    assert witness["public_key"] == public
    assert f"\n— {witness['name']} " in document["tlog_proofs"][0]
    capsys.readouterr()
    assert main(["audit", "check-dossier", str(out), "--witness", public]) == 0
    assert "co-signed by 1 witness(es) (trusted)" in capsys.readouterr().out
    report = offline_check.check_dossier(document, witnesses=[bytes.fromhex(other_public)])
    assert not report.ok and "not co-signed by the witness" in report.failures[0]
    forged = {**document, "witnesses": [{**witness, "name": "sabot-witness.impostor"}]}
    assert not offline_check.check_dossier(forged).ok
    # the keys as the transparency logs configure them: verifier keys (vkeys)
    witness_vkey = CosignatureVerifier(witness["name"], bytes.fromhex(public)).vkey()
    origin = document["checkpoint_note"].split("\n", 1)[0]
    operator = document["checkpoint"]["public_key"]
    log_vkey = Ed25519Verifier(origin, bytes.fromhex(operator)).vkey()
    assert main(["audit", "check-dossier", str(out), "--public-key", log_vkey,
                 "--witness", witness_vkey]) == 0
    other_vkey = CosignatureVerifier(witness["name"], bytes.fromhex(other_public)).vkey()
    assert main(["audit", "check-dossier", str(out), "--witness", other_vkey]) == 1
    assert main(["audit", "check-dossier", str(out), "--witness", log_vkey]) == 2  # type 0x01
    assert main(["audit", "check-dossier", str(out), "--public-key",
                 log_vkey.replace("+", "+0", 1)[:-1]]) == 2
