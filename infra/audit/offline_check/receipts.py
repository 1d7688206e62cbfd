"""A player's receipt checked offline (`infra.audit.receipts` writes them; the player's page,
`api/static/receipts.js`, checks the same things in the browser):

1. the checkpoint's Ed25519 signature by the key the receipt carries (with `trusted`, a key
   the player was given) and its C2SP checkpoint note; each witness's co-signature of that
   note (with `witnesses`, every witness key the player was given co-signed it);
2. each event's Merkle leaf and RFC 9162 inclusion proof against the signed root, and its
   readable `fields` against its signed bytes;
3. every event is the table's, of the coup (the shoe's excepted); the player's own are theirs;
4. the receipt's `mine` (bets, payout) and `shoe` are what the events say;
5. each card against the shoe re-dealt from the revealed seed, each settled point against the
   cards.

`words` says a checked receipt in a sentence, as the page says it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from .checks import TABLE_NAMESPACE, TABLE_TOPIC, Report, _Record, _Shoes, check_shoe_and_points
from .note import NoteError, read_note
from .record import hex_bytes, key_id

RECEIPT_FORMAT = "sabot-receipt-v1"
RECEIPTS_FORMAT = "sabot-receipts-v1"
OWN = ("BetPlaced", "StakePlaced", "BancoCalled", "StakeCovered", "StakeReturned", "PayoutMade")
SHOE = ("ShoeShuffled", "EntropyContributed", "ShoeCut", "ShoeSeedRevealed")


def player_of(kind: str, fields: dict[str, Any]) -> Any:
    """Whose event an event of `OWN` is."""
    return fields["payout"]["player"] if kind == "PayoutMade" else fields.get("player")


def mine(events: Sequence[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The player's bets and payout in a coup, from their events (kind, fields)."""
    payout = next((f["payout"] for kind, f in events if kind == "PayoutMade"), None)
    return {"bets": [{"spot": f.get("spot") or f["tableau"], "amount": f["amount"]}
                     for kind, f in events if kind in ("BetPlaced", "StakePlaced")],
            "payout": None if payout is None else {
                k: payout[k] for k in ("staked", "net", "commission")}}


def _differences(said: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """What the receipt's summary says that its events do not, in words."""
    found = []
    bets, kept = said.get("bets") or [], recorded["bets"]
    for n, bet in enumerate(kept):
        other = bets[n] if n < len(bets) and isinstance(bets[n], dict) else {}
        if other != bet:
            found.append(f"it says a bet of {other.get('amount')} on {other.get('spot')}, the "
                         f"record a bet of {bet['amount']} on {bet['spot']}")
    if len(bets) > len(kept):
        found.append(f"it says {len(bets)} bets, the record {len(kept)}")
    if said.get("payout") != recorded["payout"]:
        found.append(f"it says a payout of {said.get('payout')}, the record "
                     f"{recorded['payout']}")
    return found


def _witnesses(report: Report, note: str, size: int, listed: Any,
               trusted: Sequence[bytes]) -> int:
    """How many witnesses listed co-signed the checkpoint note; each failure named."""
    signed = read_note(note)
    cosigners: set[bytes] = set()
    for w in listed if isinstance(listed, list) else []:
        try:
            public = hex_bytes(w.get("public_key"), "a witness's key", 32)
        except (ValueError, AttributeError) as error:
            report.fail(f"a witness: {error}")
            continue
        if key_id(public) != w.get("key") or signed.cosigned_by(w.get("name"), public) is None:
            report.fail(f"witness {w.get('name')}: no valid co-signature of checkpoint {size}")
            continue
        cosigners.add(public)
    missing = [w.hex()[:16] for w in trusted if w not in cosigners]
    if missing:
        report.fail(f"checkpoint {size} is not co-signed by the witness key(s) "
                    f"{', '.join(missing)}")
    return len(cosigners)


def check_receipt(doc: Any, trusted: Sequence[bytes] = (),
                  witnesses: Sequence[bytes] = ()) -> Report:
    """Check one receipt; `trusted`: the operator's keys, `witnesses`: the witnesses' keys the
    player was given (each must have co-signed)."""
    report = Report()
    if not isinstance(doc, dict) or doc.get("format") != RECEIPT_FORMAT:
        report.fail(f"not a {RECEIPT_FORMAT} receipt")
        return report
    table, coup, player = doc.get("table"), doc.get("coup"), doc.get("player")
    events = doc.get("events")
    if not isinstance(table, dict) or not isinstance(events, list) or not events:
        report.fail("the receipt names no table or holds no events")
        return report
    record = _Record(report, doc.get("checkpoint"), doc.get("public_keys"), trusted,
                     doc.get("checkpoint_note"))
    if record.size < 0:
        return report
    if record.note is None:
        report.fail("the receipt has no C2SP checkpoint note")
        return report
    table_id = str(uuid.uuid5(TABLE_NAMESPACE, f"table/{table.get('name')}"))
    if table.get("id") != table_id:
        report.fail(f"table {table.get('name')!r} has id {table_id}, not {table.get('id')}")
    shoes = _Shoes(report)
    seen: list[tuple[str, str, dict[str, Any]]] = []
    own: list[tuple[str, dict[str, Any]]] = []
    for n, e in enumerate(events):
        f = record.event(e, f"event {n + 1}")
        if f is None:
            continue
        kind = e["event"]
        if e["stream"] != table_id or not e["topic"].startswith(TABLE_TOPIC):
            report.fail(f"event {n + 1} is not an event of table {table.get('name')!r}")
            continue
        if kind not in SHOE and f.get("coup") != coup:
            report.fail(f"event {n + 1} ({kind}) is of coup {f.get('coup')}, not {coup}")
            continue
        if kind in OWN:
            if player_of(kind, f) != player:
                report.fail(f"event {n + 1} ({kind}) is {player_of(kind, f)}'s, not {player}'s")
                continue
            own.append((kind, f))
        seen.append((table_id, kind, f))
        shoes.see(kind, f, f"event {n + 1} ({kind})")
    if report.failures:
        return report
    report.checked.append(f"{len(events)} events: each in the signed tree, each readable form "
                          "equal to its signed bytes")
    try:
        cosigned = _witnesses(report, record.note, record.size, doc.get("witnesses"), witnesses)
    except NoteError as error:
        report.fail(f"the checkpoint note: {error}")
        return report
    if cosigned:
        report.checked.append(f"checkpoint {record.size} co-signed by {cosigned} witness(es)")
    if not own:
        report.fail(f"the receipt holds none of {player}'s events")
    said = doc.get("mine")
    for difference in _differences(said if isinstance(said, dict) else {}, mine(own)):
        report.fail(f"{player}'s part in coup {coup}: {difference}")
    check_shoe_and_points(report, doc, shoes, seen, coup, "receipt")
    return report


def words(doc: dict[str, Any], report: Report) -> str:
    """A checked receipt in a sentence: the player's bets (or payout), the coup, where it is
    in the record, the witnesses, and whether the cards were re-dealt from the seed."""
    bets = doc["mine"]["bets"]
    part = " and ".join(f"your bet of {b['amount']} on the {b['spot']}" for b in bets) \
        or f"your payout of {doc['mine']['payout']['net']}"
    leaf = next(e["leaf"] for e in doc["events"] if e["event"] in OWN)
    witnesses = len(doc.get("witnesses") or [])
    dealt = any(line.endswith("re-dealt from the revealed seed (sabot-shoe-v1)")
                for line in report.checked)
    return (f"{part}, coup {doc['coup']} of table {doc['table']['name']}, is in the record at "
            f"#{leaf}, co-signed by {witnesses} witness{'es' if witnesses != 1 else ''}; "
            + ("the cards follow from the seed" if dealt
               else "the cards are checked once the seed is revealed"))
