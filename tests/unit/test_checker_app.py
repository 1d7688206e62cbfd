"""The offline checker as one file (`infra.audit.checker_app`): the zipapp holds the package's
modules and its entry, and runs isolated from wherever it is copied; the package also runs
with `python -m`."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from infra.audit import offline_check
from infra.audit.checker_app import build_checker

PACKAGE = Path(offline_check.__file__).parent


def test_the_zipapp_holds_the_package_and_its_entry(tmp_path: Path) -> None:
    written = build_checker(tmp_path)
    assert written == tmp_path / "sabot-check.pyz"
    assert written.read_bytes().startswith(b"#!/usr/bin/env python3\n")
    names = set(zipfile.ZipFile(written).namelist()) - {"offline_check/"}
    assert names == {"__main__.py", *(f"offline_check/{m.name}" for m in PACKAGE.glob("*.py"))}
    assert [p.name for p in tmp_path.iterdir()] == ["sabot-check.pyz"]  # no draft left


def test_the_zipapp_runs_isolated_and_says_what_it_cannot_read(tmp_path: Path) -> None:
    written = build_checker(tmp_path / "handed" / "check.pyz")
    run = subprocess.run([sys.executable, "-I", str(written), str(tmp_path / "missing.json")],
                         cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("check: ") and "missing.json" in run.stderr
    usage = subprocess.run([sys.executable, "-I", str(written), "--help"], cwd=tmp_path,
                           capture_output=True, text=True, check=False)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: sabot-check.pyz")


def test_the_package_runs_with_python_m(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "infra.audit.offline_check",
                          str(tmp_path / "missing.json")], capture_output=True, text=True,
                         check=False, cwd=PACKAGE.parents[2])
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("check: ") and "missing.json" in run.stderr
