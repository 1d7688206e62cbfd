"""Loud when unanchored, for real: a `sabot serve` subprocess on a SQLite store whose
`signing_keys` gets a key of someone else's by raw SQL cannot checkpoint its writes (the fold
trusts no key the store records on its own say). It keeps trying; `/ready` says `degraded`
with the store and the reason (HTTP 200: it still serves); `/metrics` counts the failures
rising and the checkpoint's age; the log has one error for the minute, naming no secret. Once
the row is gone, the next attempt checkpoints every event, `/ready` is `ready` again, and
after SIGTERM `sabot audit verify` finds the store anchored."""

from __future__ import annotations

import hashlib
import json
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from api.tokens import Grant, Role, TokenStore
from domain.game.settings import Variant
from infra.services.tables import TableService
from infra.store.checkpoints import last_checkpoint
from tests.client import CLIENT
from tests.e2e.test_logs import KEY, Served
from tests.integration.test_audit import sql
from tests.integration.test_table_service import SMALL_SHOE, open_table
from tests.integration.test_trust_roots import attacker_key

RETRY = 0.3  # SABOT_CHECKPOINT_SECONDS: how soon a write is checkpointed, and a failure retried


def metric(served: Served, name: str) -> float | None:
    text = CLIENT.get(f"{served.url}/metrics", timeout=10).text
    found = re.search(rf'^{name}{{database="store.db"}} (\S+)$', text, re.MULTILINE)
    return None if found is None else float(found.group(1))


def until(what: Callable[[], Any], seconds: float = 20) -> Any:
    deadline = time.monotonic() + seconds
    while not (answer := what()):
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.1)
    return answer


def test_a_serve_that_cannot_checkpoint_says_so_and_recovers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path}/store.db"
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY)
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", str(RETRY))
    with TableService(url=url, secret_key=bytes.fromhex(KEY)) as service:
        token = TokenStore(service.database).issue(Grant(role=Role.ORGANISER))
    served = Served(tmp_path, url)
    headers = {"Authorization": f"Bearer {token}"}

    def ready() -> dict[str, Any]:
        answer = CLIENT.get(f"{served.url}/ready", timeout=10)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def open_table(name: str) -> None:
        opened = CLIENT.post(f"{served.url}/tables", headers=headers, timeout=10,
                             json={"name": name, "variant": "punto-banco"})
        assert opened.status_code == 201, opened.text

    try:
        open_table("before")
        until(lambda: metric(served, "sabot_checkpoint_age_seconds") is not None)
        assert ready()["status"] == "ready"
        assert metric(served, "sabot_checkpoint_failures_total") == 0

        _, public = attacker_key()
        stranger = hashlib.sha256(public).digest()[:8].hex()
        sql(url, "INSERT INTO signing_keys (key_id, public_key) VALUES (?, ?)",
            (stranger, public))
        open_table("during")  # a write the writer cannot checkpoint now

        body = until(lambda: (b := ready())["status"] == "degraded" and b)
        (unanchored,) = body["unanchored"]
        assert unanchored["database"] == "store.db" and unanchored["failures"] >= 1
        assert stranger in unanchored["reason"] and "not trusted" in unanchored["reason"]
        first = metric(served, "sabot_checkpoint_failures_total")
        assert first is not None and first >= 1
        until(lambda: (metric(served, "sabot_checkpoint_failures_total") or 0) >= first + 3)
        errors = [line for line in served.lines() if line["level"] == "error"]
        assert len(errors) == 1, errors  # at most one a minute, though it failed 4 times
        assert "no checkpoint written" in errors[0]["event"]
        assert stranger in errors[0]["event"] and "trying again" in errors[0]["event"]
        assert KEY not in served.log.read_text() and token not in served.log.read_text()

        sql(url, "DELETE FROM signing_keys WHERE key_id = ?", (stranger,))
        until(lambda: ready()["status"] == "ready")
        failures = metric(served, "sabot_checkpoint_failures_total")
        ((events,),) = sql(url, "SELECT COUNT(*) FROM stored_events")
        last = last_checkpoint(Path(f"{tmp_path}/store.db.checkpoints"))
        assert last is not None and last.size == events  # "during" is anchored now
        age = metric(served, "sabot_checkpoint_age_seconds")
        assert age is not None and age < 10
        time.sleep(3 * RETRY)
        assert metric(served, "sabot_checkpoint_failures_total") == failures  # no more tries
        assert any("checkpoints written again" in line["event"] for line in served.lines())
    finally:
        served.stop()
    # uvicorn ends on the signal it caught, once shut down
    assert served.process.returncode in (0, -signal.SIGTERM), served.log.read_text()[-2000:]
    assert main(["audit", "verify", "--database", url]) == 0, capsys.readouterr().out
    assert json.loads(served.log.read_text().splitlines()[-1])["level"] != "error"


def test_a_checkpoint_failing_in_another_process_shows_in_every_answer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`/ready`, `/metrics` and `sabot audit status` read what every writing process reports
    (`infra.store.anchorings`), not only the asking process's own writers: a writer in another
    process (this test's, as the embedded worker's director is to `sabot serve`) whose
    checkpoints fail shows in the API's answers within an interval, though the API writes
    nothing; once it checkpoints again, all three say so."""
    url = f"sqlite:///{tmp_path}/store.db"
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY)
    monkeypatch.setenv("SABOT_CHECKPOINT_SECONDS", str(RETRY))
    writer = TableService(url=url, secret_key=bytes.fromhex(KEY))
    served = Served(tmp_path, url)

    def ready() -> dict[str, Any]:
        answer = CLIENT.get(f"{served.url}/ready", timeout=10)
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    try:
        assert ready()["status"] == "ready"
        _, public = attacker_key()
        stranger = hashlib.sha256(public).digest()[:8].hex()
        sql(url, "INSERT INTO signing_keys (key_id, public_key) VALUES (?, ?)",
            (stranger, public))
        open_table(writer, "elsewhere", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)

        body = until(lambda: (b := ready())["status"] == "degraded" and b)
        (unanchored,) = body["unanchored"]
        assert unanchored["database"] == "store.db" and unanchored["failures"] >= 1
        assert stranger in unanchored["reason"]
        until(lambda: (metric(served, "sabot_checkpoint_failures_total") or 0) >= 1)
        assert main(["audit", "status", "--database", url]) == 1
        out = capsys.readouterr().out
        assert "store.db: FAILING" in out and stranger in out, out

        sql(url, "DELETE FROM signing_keys WHERE key_id = ?", (stranger,))
        until(lambda: ready()["status"] == "ready")
        assert main(["audit", "status", "--database", url]) == 0
        assert "store.db: anchored" in capsys.readouterr().out
    finally:
        writer.close()
        served.stop()
