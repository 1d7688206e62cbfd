"""No secret travels through the broker: the messages every producer sends (a deadline from the
API's clock or a worker's service, a dispute replay, the scheduled audit) carry ids only, never
the database URL (which may hold a password), the vault key or a seed. Read from the embedded
broker's files, as a worker would receive them; no worker runs, so they stay queued."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path

import pytest

from api.deadlines import DeadlineClock
from domain.game.coup import Side
from infra.store.outbox import Deadline
from workers.app import VERIFY_STORE, make_app
from workers.disputes import request_replay

PASSWORD = "s3cret-pa55word"
DATABASE_URL = f"postgresql://sabot:{PASSWORD}@db.example:5432/sabot"
KEY_HEX = "ab" * 32


def test_messages_carry_ids_and_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABOT_DATABASE_URL", DATABASE_URL)
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY_HEX)
    producer = make_app("", home=tmp_path / ".sabot")
    table_id, dispute_id = uuid.uuid4(), uuid.uuid4()

    DeadlineClock(producer)(Deadline(table_id, 7, Side.BANKER, 30.0))
    request_replay(dispute_id, via=producer)
    [audit] = producer.conf.beat_schedule.values()
    assert audit["task"] == VERIFY_STORE
    producer.send_task(audit["task"], args=audit.get("args", ()))
    producer.close()

    files = sorted((tmp_path / ".sabot" / "broker" / "queue").glob("*.msg"))
    assert len(files) == 3
    sent = [json.loads(path.read_text()) for path in files]
    bodies = [json.loads(base64.b64decode(message["body"])) for message in sent]
    assert sorted(args for args, _, _ in bodies) == sorted(
        [[str(table_id), 7, "banker"], [str(dispute_id)], []])
    everything = " ".join(path.read_text() for path in files) + json.dumps(bodies)
    for secret in (PASSWORD, DATABASE_URL, "postgresql://", "sqlite:", KEY_HEX):
        assert secret not in everything
