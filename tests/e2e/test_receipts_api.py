"""`GET /me/receipts`: a player's receipts, one a coup they had a part in, each checked by
`infra.audit.offline_check.receipts` against the keys they carry; the download; and
`GET /audit/consistency`, whose proof leads from an earlier checkpoint to the latest.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from api.cli import main
from api.tokens import Role
from infra.audit.offline_check.receipts import RECEIPTS_FORMAT, check_receipt, words
from infra.store.checkpointer import write_checkpoint
from infra.store.checkpoints import Checkpoint, checkpoint_path, last_checkpoint
from infra.store.merkle import verify_consistency
from infra.store.opening import open_store
from tests.e2e.test_api import Api, api, free_port
from tests.e2e.test_page import open_table
from tests.integration.test_witness import rewrite_a_payout

__all__ = ["api"]  # the fixture this module uses

pytestmark = pytest.mark.postgres

BETS = (("banker", 300), ("punter", 120), ("tie", 20))


def play_coups(api: Api, table: str = "salon", player: str = "alice",
               bets: tuple[tuple[str, int], ...] = BETS, *, reveal: bool = True) -> None:
    """Open `table` (punto-banco), seat `player` and bob, and play one coup a bet of
    `player`'s (bob bets 50 on the punter in the last: the store's first payout is
    `player`'s); then end the taille, which reveals its seed (unless `reveal` is False)."""
    croupier = open_table(api, table, "punto-banco")
    for seated in (player, "bob"):
        croupier.send("seat", player=seated, chips=5000)
    croupier.send("shuffle")
    croupier.send("cut", player=player, position=100)
    croupier.play_while("burning")
    for n, (spot, amount) in enumerate(bets):
        croupier.send("bet", player=player, spot=spot, amount=amount)
        if n == len(bets) - 1:
            croupier.send("bet", player="bob", spot="punter", amount=50)
        croupier.send("close-betting")
        croupier.play_while("dealing")
        croupier.play_while("playing")
        croupier.play_while("settled")
    if reveal:
        croupier.send("end-taille")
        if croupier.view()["phase"] != "shuffling":
            croupier.play_while(croupier.view()["phase"])


def cosign(url: str, tmp_path: Path, witnesses: int = 2) -> list[Path]:
    """`sabot audit witness` with `witnesses` keys of their own: each co-signs the latest
    checkpoint; their keys."""
    keys = []
    for n in range(witnesses):
        key = tmp_path / f"witness-{n}.key"
        if not key.exists():
            assert main(["keys", "create", "--out", str(key)]) == 0
        assert main(["audit", "witness", "--key", str(key), "--database", url,
                     "--state", str(tmp_path / f"witness-{n}.state")]) == 0
        keys.append(key)
    return keys


def rewrite_and_recheckpoint(url: str) -> None:
    """The key holder doubles the store's first payout, deletes the checkpoint file and signs
    a checkpoint of the rewritten record (the witnesses' state kept aside: they co-sign it
    not)."""
    rewrite_a_payout(url)
    with open_store(url, create=False) as store:
        path = checkpoint_path(store.database)
        assert path is not None
        path.unlink()
        assert write_checkpoint(store) is not None


def anchored(service: Any) -> Checkpoint:
    """A checkpoint of the whole store: written now, or already by the writer's own timer
    (`SABOT_CHECKPOINT_SECONDS`, which a loaded machine's slow coups can outlast)."""
    path = checkpoint_path(service.recorder.database)
    assert path is not None
    latest = write_checkpoint(service) or last_checkpoint(path)
    assert latest is not None and write_checkpoint(service) is None  # it holds the store
    return latest


def fetched(api: Api, token: str | None, path: str = "/me/receipts") -> dict[str, Any]:
    response = api.call("GET", path, token)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_player_s_receipts_check_with_the_keys_they_were_given(
        api: Api, postgres_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    play_coups(api)
    anchored(api.service)
    cosign(postgres_url, tmp_path)
    capsys.readouterr()
    alice = api.token(Role.PLAYER, player="alice")
    body = fetched(api, alice)
    assert body["format"] == RECEIPTS_FORMAT and body["player"] == "alice"
    operator = [bytes.fromhex(k["public_key"]) for k in body["keys"]["operator"]]
    witnesses = [bytes.fromhex(k["public_key"]) for k in body["keys"]["witnesses"]]
    assert operator == [api.service.chained_recorder.signer().public_key]
    assert len(witnesses) == 2
    receipts = body["receipts"]
    assert [(r["coup"], r["mine"]["bets"]) for r in receipts] == [
        (n + 1, [{"spot": spot, "amount": amount}]) for n, (spot, amount) in enumerate(BETS)]
    for receipt in receipts:
        report = check_receipt(receipt, operator, witnesses)
        assert report.ok, report.lines()
        assert receipt["shoe"]["seed"] is not None
        assert len(json.dumps(receipt)) < 20_000  # small: 14 kB in a record of 45 events
        assert receipt["mine"]["payout"]["staked"] == receipt["mine"]["bets"][0]["amount"]
        assert not any(e["event"] == "BetPlaced" and e["fields"]["player"] == "bob"
                       for e in receipt["events"])  # bob's bet is not alice's receipt's
    said = words(receipts[0], check_receipt(receipts[0], operator, witnesses))
    assert said.startswith("your bet of 300 on the banker, coup 1 of table salon, is in the "
                           "record at #") and said.endswith(
        "co-signed by 2 witnesses; the cards follow from the seed"), said
    # a witness listed whose co-signature is not there is named
    forged = json.loads(json.dumps(receipts[0]))
    forged["witnesses"][0]["name"] = "sabot-witness.elsewhere"
    report = check_receipt(forged, operator)
    assert not report.ok and report.failures == [
        f"witness sabot-witness.elsewhere: no valid co-signature of checkpoint "
        f"{forged['checkpoint']['size']}"], report.failures
    # a witness key the player was given that did not co-sign is named
    stranger = bytes(range(32))
    report = check_receipt(receipts[0], operator, [*witnesses, stranger])
    assert not report.ok and stranger.hex()[:16] in " ".join(report.failures)

    download = api.call("GET", "/me/receipts/download", alice)
    assert download.status_code == 200
    assert download.headers["content-disposition"].startswith(
        'attachment; filename="sabot-receipts-alice-')
    assert download.json()["receipts"][0]["events"] == receipts[0]["events"]
    later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    assert fetched(api, alice, f"/me/receipts?since={later}")["receipts"] == []
    assert len(fetched(api, alice, "/me/receipts?since=2026-01-01T00:00:00")["receipts"]) == 3
    assert api.call("GET", "/me/receipts?since=yesterday", alice).status_code == 400
    assert fetched(api, api.token(Role.PLAYER, player="carol"))["receipts"] == []
    assert api.call("GET", "/me/receipts").status_code == 401
    refused = api.call("GET", "/me/receipts", api.token(Role.ORGANISER))
    assert refused.status_code == 403 and refused.json()["rule"] == "not-a-player"


def test_the_consistency_proof_leads_from_a_receipt_s_checkpoint_to_the_latest(
        api: Api) -> None:
    play_coups(api, bets=BETS[:1], reveal=False)
    first = anchored(api.service)
    alice = api.token(Role.PLAYER, player="alice")
    [waiting] = fetched(api, alice)["receipts"]  # its taille goes on: no seed yet
    report = check_receipt(waiting)
    assert report.ok and waiting["shoe"]["seed"] is None, report.lines()
    assert words(waiting, report).endswith("the cards are checked once the seed is revealed")
    play_coups(api, table="salle", bets=BETS[1:])
    latest = anchored(api.service)
    assert latest.size > first.size
    body = fetched(api, None, f"/audit/consistency?from={first.size}")
    assert body["checkpoint"]["size"] == latest.size and body["from"] == first.size
    proof = [bytes.fromhex(p) for p in body["proof"]]
    assert verify_consistency(first.size, latest.size, bytes.fromhex(first.root),
                              bytes.fromhex(latest.root), proof)
    assert not verify_consistency(first.size, latest.size, bytes(32),
                                  bytes.fromhex(latest.root), proof)
    assert api.call("GET", "/audit/consistency?from=0").status_code == 400
    beyond = api.call("GET", f"/audit/consistency?from={latest.size + 1}")
    assert beyond.status_code == 404 and beyond.json()["rule"] == "unknown-checkpoint"
    wrong = api.call("GET", f"/audit/consistency?from={first.size}&leaves={latest.size}")
    assert wrong.status_code == 404 and wrong.json()["rule"] == "unknown-leaf"
    assert api.call("GET", "/audit/consistency?from=1&leaves=a").status_code == 400


def edited(receipt: dict[str, Any], what: str) -> dict[str, Any]:
    """A copy of `receipt` edited by hand: its `amount` (the bet restated), a `card` of its
    events (the readable form) or a `proof` hash of the player's bet."""
    copy: dict[str, Any] = json.loads(json.dumps(receipt))
    bet = next(e for e in copy["events"] if e["event"] == "BetPlaced")
    if what == "amount":
        copy["mine"]["bets"][0]["amount"] += 1000
    elif what == "card":
        dealt = next(e for e in copy["events"] if e["event"] == "CardDealt")
        dealt["fields"]["card"] = "Kh" if dealt["fields"]["card"] != "Kh" else "Qh"
    else:
        bet["proof"][0] = ("0" if bet["proof"][0][0] != "0" else "1") + bet["proof"][0][1:]
    return copy


EDITS = {"amount": "alice's part in coup 1: it says a bet of 1300 on banker, the record a "
                   "bet of 300 on banker",
         "card": "its fields differ from its signed bytes (card)",
         "proof": "(BetPlaced, version"}


@pytest.mark.parametrize("what", sorted(EDITS))
def test_a_receipt_edited_by_hand_says_what_does_not_hold(
        api: Api, what: str) -> None:
    play_coups(api, bets=BETS[:1])
    receipt = fetched(api, api.token(Role.PLAYER, player="alice"))["receipts"][0]
    assert check_receipt(receipt).ok
    report = check_receipt(edited(receipt, what))
    assert not report.ok and EDITS[what] in " ".join(report.failures), report.failures
    if what == "proof":
        assert "its inclusion proof does not lead to the signed root" in report.failures[0]


def test_check_receipts_names_the_coup_a_key_holder_rewrote(
        api: Api, postgres_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    play_coups(api)
    anchored(api.service)
    cosign(postgres_url, tmp_path)
    download = api.call("GET", "/me/receipts/download", api.token(Role.PLAYER, player="alice"))
    file = tmp_path / "receipts.json"
    file.write_bytes(download.content)
    capsys.readouterr()
    assert main(["audit", "check-receipts", str(file), "--url", api.base_url]) == 0
    out = capsys.readouterr().out
    assert "ok:     your bet of 300 on the banker, coup 1 of table salon" in out, out
    assert "3 of 3 receipts check and the record still holds them" in out, out

    rewrite_and_recheckpoint(postgres_url)
    assert main(["audit", "check-receipts", str(file), "--url", api.base_url]) == 1
    out = capsys.readouterr().out
    failed = [line for line in out.splitlines() if line.startswith("FAILED: coup")]
    assert len(failed) == 1 and failed[0].startswith(
        "FAILED: coup 1 of table salon: your receipt no longer matches the record: its "
        "PayoutMade at #"), out
    assert "ok:     your bet of 120 on the punter, coup 2" in out, out
    assert "FAILED: the record: checkpoint #" in out and "was rewritten" in out, out
    # offline, the file itself still checks: only the record changed
    assert main(["audit", "check-receipts", str(file)]) == 0
    capsys.readouterr()
    nobody = f"http://127.0.0.1:{free_port()}"
    assert main(["audit", "check-receipts", str(file), "--url", nobody]) == 2
    assert f"sabot: {nobody} does not answer" in capsys.readouterr().err


@pytest.mark.parametrize("what", sorted(EDITS))
def test_check_receipts_says_what_a_hand_edit_breaks(
        api: Api, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    play_coups(api, bets=BETS[:1])
    body = fetched(api, api.token(Role.PLAYER, player="alice"))
    body["receipts"][0] = edited(body["receipts"][0], what)
    file = tmp_path / "receipts.json"
    file.write_text(json.dumps(body))
    assert main(["audit", "check-receipts", str(file)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAILED: coup 1 of table salon: ") and EDITS[what] in out, out
    file.write_text("not json")
    assert main(["audit", "check-receipts", str(file)]) == 2
    assert "sabot: " in capsys.readouterr().err
