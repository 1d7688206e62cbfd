"""schemathesis with all its checks over the whole OpenAPI document, as its own command line
runs it, against a real server on PostgreSQL: no server error, every status, content type,
header and bound documented, public routes declared public, nothing schema-valid refused
but by a rule of the game (422, `schemathesis.toml`), nothing schema-invalid accepted.
Bounded in examples and in time."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from api.tokens import Role
from tests.e2e.test_api import Api

pytestmark = pytest.mark.postgres

CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = 25
SECONDS = 90


def test_every_check_of_the_whole_document_passes(api: Api, tmp_path: Path) -> None:
    token = api.token(Role.ORGANISER)
    api.call("POST", "/tables", token, json={"name": "0", "variant": "chemin-de-fer"})
    done = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "run",
         f"{api.base_url}/schema/openapi.json", "--checks", "all",
         "--max-examples", str(EXAMPLES), "--max-time", str(SECONDS), "--seed", "19",
         "--header", f"Authorization: Bearer {token}", "--workers", "1",
         "--request-timeout", "10"],
        capture_output=True, text=True, timeout=SECONDS * 3, cwd=tmp_path)
    summary = done.stdout[-9000:]
    assert done.returncode == 0, summary
    assert "No issues found" in done.stdout or "passed" in done.stdout.lower(), summary
