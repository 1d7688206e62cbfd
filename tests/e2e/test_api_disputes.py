"""Disputes over HTTP, for each role: who may open, see and approve; a correction applied only
after the second approval (the organiser's and a floor manager's), shown in the recall, the
standings and the export with its reason; coup dossiers for those allowed.

The table's shoe reader is faulty: at some positions it deals a card the shoe does not hold
(the committed seed says otherwise). The table's own record is consistent with the cards it
was dealt, so only the replay against the revealed seed finds it, and it moves chips.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from api.tokens import Role
from domain.game.cards import Card
from domain.game.settings import Variant
from domain.game.shoe import Shoe
from domain.table.aggregate import Table
from infra.audit import offline_check
from infra.services.replay import replay_coup
from infra.services.tables import TableService, VaultCards, seeds_from
from infra.store.homes import SETTING
from projections.table_fold import holdings_of
from tests.e2e.test_api import KEY, Api, serving
from tests.integration.test_table_service import SMALL_SHOE, open_table, play

pytestmark = pytest.mark.postgres

TABLE = "disputed"


class FaultyReader(VaultCards):
    """Reads a nine of diamonds at every seventh position."""

    def card_at(self, shoe: Shoe, position: int) -> Card:
        return Card("9d") if position % 7 == 3 else super().card_at(shoe, position)


class Setting:
    def __init__(self, api: Api, table_id: uuid.UUID, url: str) -> None:
        self.api, self.table_id, self.url = api, table_id, url
        self.organiser = api.token(Role.ORGANISER)
        self.floor = api.token(Role.FLOOR_MANAGER)
        self.auditor = api.token(Role.AUDITOR)
        self.croupier = api.token(Role.CROUPIER, tables=(TABLE,))
        self.other_croupier = api.token(Role.CROUPIER, tables=("elsewhere",))
        self.stranger = api.token(Role.PLAYER, player="zed")
        events = api.service.events_of(table_id)
        revealed = max(e.originator_version for e in events
                       if isinstance(e, Table.ShoeSeedRevealed))
        vault = api.service.vault
        closed = [e.coup for e in events if isinstance(e, Table.CoupClosed)
                  and e.originator_version < revealed]
        self.coup, self.corrections = next(
            (coup, replay.corrections) for coup in closed
            if (replay := replay_coup(events, coup, vault.unseal)).corrections)
        self.player = sorted(self.corrections)[0]
        self.token = api.token(Role.PLAYER, player=self.player)
        self.later = max(e.coup for e in events if isinstance(e, Table.CoupClosed))

    def open(self, token: str | None, coup: int | None = None) -> Any:
        return self.api.call("POST", "/disputes", token, json={
            "table": TABLE, "coup": coup or self.coup, "reason": "the shoe misread a card"})


@pytest.fixture(params=["one database", "spread over databases"])
def setting(request: pytest.FixtureRequest, postgres_url: str, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Setting]:
    """The disputed table, in the one database, or in a home of its own when partitions are
    spread over databases (`infra.store.homes`): the same flow, every read routed to it."""
    spread = request.param == "spread over databases"
    if spread:
        monkeypatch.chdir(tmp_path)  # the homes' checkpoint files
        new_database = request.getfixturevalue("new_database")
        monkeypatch.setenv(SETTING, f"east={new_database()},west={new_database()}")
    service = TableService(url=postgres_url, secret_key=KEY)
    service.seed_source = seeds_from(b"dispute tests")
    service.cards = FaultyReader(service)
    table_id = open_table(service, TABLE, Variant.CHEMIN_DE_FER, **SMALL_SHOE)
    play(service, table_id, 14)
    assert service.state(table_id).taille >= 2
    homes = service.home_databases()
    assert set(homes) == ({"main", "east", "west"} if spread else {"main"})
    assert homes["west" if spread else "main"].read_one(
        "SELECT COUNT(*) AS n FROM {stored_events}")["n"] == service.table(table_id).version
    with serving(service) as api:
        yield Setting(api, table_id, postgres_url)


def chips(setting: Setting) -> dict[str, int]:
    """Each player's chips, the bank counted with the banker's (as the standings count)."""
    return holdings_of(setting.api.service.table(setting.table_id))


def test_who_may_open_and_see_a_dispute(setting: Setting) -> None:
    s = setting
    assert s.open(None).status_code == 401
    refused = s.open(s.auditor)
    assert refused.status_code == 403 and refused.json()["rule"] == "read-only"
    for token in (s.stranger, s.other_croupier):
        refused = s.open(token)
        assert refused.status_code == 403, refused.text
        assert refused.json()["rule"] == "not-your-coup"
    bad = s.api.call("POST", "/disputes", s.organiser, json={"table": TABLE, "coup": 0,
                                                             "reason": "x"})
    assert bad.status_code == 422 and bad.json()["field"] == "coup"
    assert s.api.call("POST", "/disputes", s.organiser, json={
        "table": "nowhere", "coup": 1, "reason": "x"}).status_code == 404

    by_player = s.open(s.token)
    assert by_player.status_code == 201, by_player.text
    dispute = by_player.json()
    assert dispute["by"] == s.player and dispute["verdict"] == "discrepancies"
    assert dispute["status"] == "awaiting approvals"
    assert any(d["what"] == "card" and d["expected"] != "9d" and d["recorded"] == "9d"
               for d in dispute["discrepancies"])
    assert dispute["correction"]["chips"] == s.corrections
    assert dispute["correction"]["approvals"] == []
    for token in (s.croupier, s.organiser, s.floor):
        assert s.open(token).status_code == 201

    ids = {token: {d["id"] for d in s.api.call("GET", "/disputes", token).json()}
           for token in (s.organiser, s.auditor, s.floor, s.croupier, s.token, s.stranger,
                         s.other_croupier)}
    assert len(ids[s.organiser]) == 4
    assert ids[s.auditor] == ids[s.floor] == ids[s.croupier] == ids[s.organiser]
    assert dispute["id"] in ids[s.token]
    assert ids[s.stranger] == ids[s.other_croupier] == set()
    assert s.api.call("GET", "/disputes").status_code == 401
    path = f"/disputes/{dispute['id']}"
    assert s.api.call("GET", path, s.stranger).json()["rule"] == "not-your-dispute"
    assert s.api.call("GET", path, s.auditor).json()["discrepancies"] == dispute["discrepancies"]
    assert s.api.call("GET", f"/disputes/{uuid.uuid4()}", s.auditor).status_code == 404


def test_a_correction_needs_two_roles_then_shows_everywhere(setting: Setting,
                                                           tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    s = setting
    dispute = s.open(s.token).json()
    approvals = f"/disputes/{dispute['id']}/approvals"
    for token, status in ((None, 401), (s.token, 403), (s.croupier, 403)):
        assert s.api.call("POST", approvals, token).status_code == status
    before = chips(s)
    first = s.api.call("POST", approvals, s.organiser)
    assert first.status_code == 201, first.text
    assert first.json()["correction"]["approvals"] == [{"role": "organiser",
                                                        "by": "@organiser"}]
    assert not first.json()["correction"]["applied"] and chips(s) == before
    again = s.api.call("POST", approvals, s.organiser)
    assert again.status_code == 201 and len(again.json()["correction"]["approvals"]) == 1

    second = s.api.call("POST", approvals, s.floor)
    assert second.status_code == 201, second.text
    correction = second.json()["correction"]
    assert correction["approved"] and correction["applied"]
    assert [a["role"] for a in correction["approvals"]] == ["organiser", "floor-manager"]
    assert second.json()["status"] == "corrected"
    after = chips(s)
    assert {p: after[p] - before[p] for p in before if after[p] != before[p]} == s.corrections
    late = s.api.call("POST", approvals, s.auditor)
    assert late.status_code == 409 and late.json()["rule"] == "correction-applied"

    reason = (f"correction of coup {s.coup} at {TABLE} (dispute {dispute['id']}): the shoe "
              "misread a card")
    adjusted = [e for e in s.api.service.events_of(s.table_id)
                if isinstance(e, Table.ChipsAdjusted)]
    assert {(e.player, e.delta, e.reason) for e in adjusted} == {
        (p, d, reason) for p, d in s.corrections.items()}

    # views are served as they are, and a read's `at` names a position in the main database's
    # log only: bring recall up to the correction in every home before reading it
    assert main(["projections", "run", "recall", "--database", s.url]) == 0
    capsys.readouterr()
    recall = s.api.call("GET", f"/tables/{TABLE}/recall?last=20", s.organiser).json()
    coup = next(c for c in recall if c["coup"] == s.coup)
    assert {(c["player"], c["delta"], c["reason"]) for c in coup["corrections"]} == {
        (p, d, reason) for p, d in s.corrections.items()}

    capsys.readouterr()
    assert main(["standings", "--table", TABLE, "--json", "--database", s.url]) == 0
    standings = {row["player"]: row["chips"] for row in json.loads(capsys.readouterr().out)}
    assert {p: standings[p] for p in s.corrections} == {p: after[p] for p in s.corrections}

    out = tmp_path / "bundle"
    assert main(["audit", "export", "--table", TABLE, "--out", str(out),
                 "--database", s.url]) == 0
    significant = [json.loads(line) for line in (out / "significant.jsonl").read_text()
                   .splitlines()]
    kinds = [line["kind"] for line in significant]
    assert kinds.count("correction approved") == 2
    assert {line["details"]["role"] for line in significant
            if line["kind"] == "correction approved"} == {"organiser", "floor-manager"}
    applied = next(line for line in significant if line["kind"] == "correction applied")
    assert applied["reason"] == reason and applied["after"] == s.corrections
    assert {(line["subject"], line["reason"]) for line in significant
            if line["kind"] == "chips adjusted"} == {(p, reason) for p in s.corrections}
    report = offline_check.check_path(out)  # the faulty reader's cards are named too
    assert not report.ok
    assert any("holds" in f and "9d" in f for f in report.failures)


def test_dossiers_for_those_allowed(setting: Setting) -> None:
    s = setting
    path = f"/tables/{TABLE}/coups/{s.coup}/dossier"
    assert s.api.call("GET", path).status_code == 401
    assert s.api.call("GET", path, s.stranger).json()["rule"] == "not-your-coup"
    assert s.api.call("GET", path, s.other_croupier).status_code == 403
    for token in (s.token, s.croupier, s.auditor, s.floor, s.organiser):
        got = s.api.call("GET", path, token)
        assert got.status_code == 200, got.text
    dossier = got.json()
    report = offline_check.check_dossier(dossier)
    assert not report.ok and any("9d" in f for f in report.failures)  # the misread card
    unrevealed = f"/tables/{TABLE}/coups/{s.later}/dossier"
    assert s.api.call("GET", unrevealed, s.croupier).json()["rule"] == "seed-not-revealed"
    early = s.api.call("GET", unrevealed, s.organiser).json()
    assert early["shoe"]["seed"] is None
    assert s.api.call("GET", f"/tables/{TABLE}/coups/999/dossier",
                      s.organiser).status_code == 404


def test_a_dispute_names_a_coup_dealt_at_that_table(setting: Setting) -> None:
    """Coup 99 never happened: 404 `unknown-coup`, and no dispute recorded; the last coup
    dealt may still be contested."""
    s = setting
    before = s.api.events()
    for token in (s.organiser, s.croupier):
        unknown = s.open(token, coup=s.later + 99)
        assert unknown.status_code == 404, unknown.text
        assert unknown.json()["rule"] == "unknown-coup"
    assert s.api.events() == before
    assert s.api.call("GET", "/disputes", s.organiser).json() == []
    assert s.open(s.organiser, coup=s.later).status_code == 201
