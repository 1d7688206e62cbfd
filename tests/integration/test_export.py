"""The regulator export: a whole demo tournament exported with `sabot audit export` verifies
offline (the standalone checker run alone); any change to the bundle is caught."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from api.cli import main
from infra.audit import offline_check
from infra.audit.checker_app import build_checker

TOURNAMENT = "demo-chemin-de-fer-0e"


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("export")
    url = f"sqlite:///{folder}/demo.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.delenv("SABOT_BROKER_URL", raising=False)
        assert main(["demo", "--tables", "2", "--players", "8", "--coups-per-round", "4",
                     "--seed", "0e", "--json", "--database", url]) == 0
    yield url


def standalone(path: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    checker = build_checker(tmp_path)
    assert checker == tmp_path / "sabot-check.pyz"
    return subprocess.run([sys.executable, "-I", str(checker), str(path)], cwd=tmp_path,
                          capture_output=True, text=True, check=False)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_whole_demo_tournament_exports_and_verifies_offline(demo_store: str,
                                                              tmp_path: Path) -> None:
    witness = tmp_path / "witness.key"
    assert main(["keys", "create", "--out", str(witness)]) == 0
    assert main(["audit", "witness", "--key", str(witness), "--database", demo_store]) == 0
    out = tmp_path / "bundle"
    assert main(["audit", "export", "--tournament", TOURNAMENT, "--out", str(out),
                 "--database", demo_store]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == "sabot-export-v1"
    assert set(manifest["files"]) == {"events.jsonl", "recall.jsonl", "significant.jsonl",
                                      "checkpoints.jsonl"}
    events = lines(out / "events.jsonl")
    kinds = {e["event"] for e in events}
    assert {"TournamentCreated", "Opened", "CardDealt", "ShoeSeedRevealed",
            "TournamentFinished"} <= kinds
    recall = lines(out / "recall.jsonl")
    assert recall and all(coup["cards"] and coup["chips"] for coup in recall)
    assert all({"before", "after"} <= set(line) for coup in recall
               for line in coup["chips"].values())
    significant = lines(out / "significant.jsonl")
    assert any(s["kind"] == "director (re)start" for s in significant)
    assert [s["subject"] for s in significant if s["kind"] == "signing key"] == [
        k["key"] for k in manifest["public_keys"]]
    assert all(s["actor"] for s in significant)
    assert manifest["public_keys"] and lines(out / "checkpoints.jsonl")

    run = standalone(out, tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "cards re-dealt from the revealed seeds" in run.stdout
    assert f"{len(recall)} recalled coups" in run.stdout
    assert "every signature holds (1 by witnesses)" in run.stdout


def test_a_changed_bundle_fails(demo_store: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    assert main(["audit", "export", "--tournament", TOURNAMENT, "--out", str(out),
                 "--database", demo_store]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    key = bytes.fromhex(manifest["public_keys"][0]["public_key"])
    assert offline_check.check_path(out, [key]).ok
    assert "not a trusted key" in offline_check.check_path(out, [bytes(32)]).failures[0]
    recall = (out / "recall.jsonl").read_text()
    (out / "recall.jsonl").write_text(recall.replace('"net": ', '"net": 1', 1))
    assert offline_check.check_path(out).failures == [
        "recall.jsonl: its SHA-256 is not the manifest's"]
    (out / "recall.jsonl").write_text(recall)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["scope"]["tournament"] = "another"
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert "the manifest's signature does not verify" in offline_check.check_path(
        out).failures[0]


def test_a_table_and_a_period(demo_store: str, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    table = f"{TOURNAMENT}-table-1"
    out = tmp_path / "table"
    assert main(["audit", "export", "--table", table, "--out", str(out),
                 "--database", demo_store]) == 0
    events = lines(out / "events.jsonl")
    assert events and {e["stream"] for e in events} == {events[0]["stream"]}
    assert offline_check.check_path(out).ok

    everything = tmp_path / "all"
    assert main(["audit", "export", "--out", str(everything), "--database", demo_store]) == 0
    today = datetime.now(UTC).date()
    out = tmp_path / "today"
    assert main(["audit", "export", "--from", str(today), "--to", str(today), "--out", str(out),
                 "--database", demo_store]) == 0
    assert offline_check.check_path(out).ok
    assert lines(out / "events.jsonl") == lines(everything / "events.jsonl")
    out = tmp_path / "yesterday"
    yesterday = today - timedelta(days=1)
    assert main(["audit", "export", "--to", str(yesterday), "--out", str(out),
                 "--database", demo_store]) == 0
    assert lines(out / "events.jsonl") == []

    assert main(["audit", "export", "--tournament", "nobody", "--out", str(tmp_path / "x"),
                 "--database", demo_store]) == 1
    assert "no tournament nobody" in capsys.readouterr().err
