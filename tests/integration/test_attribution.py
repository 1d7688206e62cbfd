"""`sabot audit verify` checks attribution (issue 26): an event whose actor is a person came
from a command that person's own token sent, as the command log records and seals it.

A free punto banco table: p0 holds a player token (a person), p1..p3 are bots played by the
house. Each attack is made as an attacker with the database but not the signing key would:
raw SQL, the chain's digests recomputed (`rechain`), no Sabot code.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from api.cli import main
from api.tokens import Grant, Role, TokenStore
from domain.bots import next_command
from domain.game.settings import Variant
from infra.audit.checks import complete_checks
from infra.audit.report import Problem
from infra.audit.shoes import ShoeAudit
from infra.audit.verify import AuditReport, verify
from infra.store.senders import HOUSE, player_sender, sending_as
from projections.audit_port import PROJECTIONS
from tests.integration.test_audit import db_id, rechain, sql
from tests.integration.test_table_service import SECRET, a_service, open_table

PERSON, BOT = "p0", "p1"


@dataclass(frozen=True)
class Evening:
    url: str
    table_id: uuid.UUID


@pytest.fixture
def evening(database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Evening:
    """Six coups: p0's moves sent by p0's token, the bots' by the house."""
    monkeypatch.setenv("SABOT_SECRET_KEY", SECRET.hex())
    if database_url.startswith("postgresql"):
        monkeypatch.setenv("SABOT_CHECKPOINTS", str(tmp_path / "pg.checkpoints"))
    with a_service(database_url) as service:
        TokenStore(service.database).issue(Grant(role=Role.PLAYER, player=PERSON))
        table_id = open_table(service, "attribution", Variant.PUNTO_BANCO, decks=1)
        rng = random.Random(3)
        state = service.state(table_id)
        sent = 0
        while state.coup_number < 6 or state.coup is not None:
            command = next_command(state, rng, lambda label, n=sent: f"move:{n}:{label}")
            sender = player_sender(PERSON) if command.actor == PERSON else HOUSE
            with sending_as(sender):
                service.execute(table_id, command)
            sent += 1
            state = service.state(table_id)
    return Evening(database_url, table_id)


def audit(url: str) -> AuditReport:
    return verify(url, extra_checks=[ShoeAudit(), *complete_checks(PROJECTIONS)])


def events(evening: Evening, topic_end: str) -> list[tuple[int, dict[str, Any]]]:
    """The table's events of a type, decoded: (version, fields), in order."""
    rows = sql(evening.url, "SELECT originator_version, topic, state FROM stored_events"
               " WHERE originator_id = ? ORDER BY originator_version",
               (db_id(evening.url, evening.table_id),))
    return [(int(version), msgspec.msgpack.decode(bytes(state))) for version, topic, state
            in rows if str(topic).endswith(topic_end)]


def forge_actor(evening: Evening, version: int, fields: dict[str, Any], actor: str) -> None:
    """The stored event at `version` now says `actor` acted; the chain recomputed."""
    fields = {**fields, "actor": actor}
    sql(evening.url, "UPDATE stored_events SET state = ? WHERE originator_id = ?"
        " AND originator_version = ?",
        (msgspec.msgpack.encode(fields), db_id(evening.url, evening.table_id), version))
    rechain(evening.url)


def a_bots_bet(evening: Evening) -> tuple[int, dict[str, Any]]:
    return next((v, f) for v, f in events(evening, "BetPlaced") if f["actor"] == BOT)


def named(report: AuditReport, problem: str) -> list[Any]:
    return [f for f in report.findings if f.problem == problem and f.check == "attribution"]


def test_the_untouched_store_is_attributed(evening: Evening,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    own = [f for _, f in events(evening, "BetPlaced") if f["actor"] == PERSON]
    assert own, "p0 bet by their own token"
    senders = dict(sql(evening.url, "SELECT command_id, sender FROM command_log"))
    assert {senders[f["command_id"]] for f in own} == {player_sender(PERSON)}
    assert senders[a_bots_bet(evening)[1]["command_id"]] == HOUSE
    report = audit(evening.url)
    assert report.ok, report.findings
    assert "attribution" in report.checks and report.notices == ()
    assert main(["audit", "verify", "--database", evening.url]) == 0
    assert "intact" in capsys.readouterr().out


def test_a_bots_bet_given_to_a_person_is_named(evening: Evening,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    version, fields = a_bots_bet(evening)
    forge_actor(evening, version, fields, PERSON)
    report = audit(evening.url)
    assert not report.ok and report.first_break is None  # the chain was recomputed
    (found,) = named(report, Problem.MISATTRIBUTED)
    assert (found.originator_id, found.originator_version) == (evening.table_id, version)
    assert f"says {PERSON} acted" in found.detail and f"sent by {HOUSE}" in found.detail
    assert main(["audit", "verify", "--database", evening.url]) == 1
    out = capsys.readouterr().out
    assert "[attribution] not sent by the actor" in out and "the store is NOT intact" in out


def test_a_forged_sender_breaks_its_seal(evening: Evening) -> None:
    version, fields = a_bots_bet(evening)
    forge_actor(evening, version, fields, PERSON)
    sql(evening.url, "UPDATE command_log SET sender = ? WHERE command_id = ?",
        (player_sender(PERSON), fields["command_id"]))
    report = audit(evening.url)
    (found,) = named(report, Problem.SEAL_INVALID)
    assert fields["command_id"] in found.detail
    assert not named(report, Problem.MISATTRIBUTED)  # the forged row says p0: only its seal


def test_an_erased_sender_is_named(evening: Evening) -> None:
    version, fields = a_bots_bet(evening)
    forge_actor(evening, version, fields, PERSON)
    sql(evening.url, "UPDATE command_log SET sender = NULL, seal = NULL, seal_key = NULL"
        " WHERE command_id = ?", (fields["command_id"],))
    report = audit(evening.url)
    (found,) = named(report, Problem.SENDER_ERASED)
    assert found.originator_version == version


def test_a_persons_command_id_on_another_event_is_named(evening: Evening) -> None:
    own = [f for _, f in events(evening, "BetPlaced") if f["actor"] == PERSON]
    version, fields = a_bots_bet(evening)
    forge_actor(evening, version, {**fields, "command_id": own[0]["command_id"]}, PERSON)
    (found,) = named(audit(evening.url), Problem.COMMAND_REUSED)
    assert found.originator_version == version


def test_a_store_from_before_senders_verifies_unattributed(
        evening: Evening, capsys: pytest.CaptureFixture[str]) -> None:
    """Rows written before schema 5 have no sender: a notice, not a discrepancy."""
    sql(evening.url, "UPDATE command_log SET sender = NULL, seal = NULL, seal_key = NULL")
    report = audit(evening.url)
    assert report.ok, report.findings
    (notice,) = report.notices
    assert notice.problem == Problem.UNATTRIBUTED and notice.check == "attribution"
    assert main(["audit", "verify", "--database", evening.url]) == 0
    assert "NOTE:    [attribution] unattributed" in capsys.readouterr().out
