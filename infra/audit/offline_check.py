#!/usr/bin/env python3
"""Check a Sabot coup dossier or regulator export offline, without Sabot or its database.

    python3 offline_check.py DOSSIER.json [--public-key HEX]
    python3 offline_check.py EXPORT_DIR   [--public-key HEX]

One file, the Python standard library and `cryptography` (`pip install cryptography`): copy
it anywhere. Exit 0 when everything checks, 1 when anything does not (each failure named),
2 when the file cannot be read. `sabot audit check-dossier` runs the same code.

What it checks (the formats are in Sabot's README, "Coup dossiers" and "Regulator exports"):

1. the checkpoint's Ed25519 signature, by the public key the file carries (and, with
   `--public-key`, that this is the key the operator published);
2. each event's Merkle leaf, SHA-256(0x00 || u64 notification || canonical bytes), and its
   RFC 9162 inclusion proof against the checkpoint's signed root;
3. each event's `fields` against its signed MessagePack bytes (`state`), so the readable form
   cannot differ from what was signed;
4. every card dealt, drawn or burned against the shoe recomputed from the revealed seed
   (sabot-shoe-v1: the seed's SHA-256 is the shoe's commitment; the entropy contributions
   and the cut are the recorded ones), and each settled point against the cards;
5. a dossier: the table's id follows from its name, the coup's events are complete (their
   versions run without a gap from the event before the coup to its close), and its shoe
   summary is what the events say; an export: the manifest's signature and every file's
   SHA-256, and the game recall's cards and payouts against the events.

sabot-shoe-v1 is carried here as a copy of `domain/game/shoe.py` (a test holds them equal).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import struct
import sys
import uuid
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

DOSSIER_FORMAT = "sabot-dossier-v1"
EXPORT_FORMAT = "sabot-export-v1"
CHECKPOINT_PREFIX = b"sabot-checkpoint-v1\n"
WITNESS_PREFIX = b"sabot-witness-v1\n"
MANIFEST_PREFIX = b"sabot-export-v1\n"
TABLE_NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-7ab1e0000000")
TABLE_TOPIC = "domain.table_aggregate:Table."
SHOE_V1 = "sabot-shoe-v1"
RANKS = "A23456789TJQK"
SUITS = "shdc"
CARD_EVENTS = ("CardBurned", "CardDealt", "ThirdCardDrawn")
EVENT_KEYS = {"n", "leaf", "stream", "version", "topic", "event", "state", "fields", "proof"}
CHECKPOINT_KEYS = {"size", "root", "head", "chain", "time", "key", "public_key", "signature"}


class Unreadable(Exception):
    """The file is not a dossier or an export at all."""


# --- MessagePack (the stored events' encoding), decoding only ----------------------------


def unpack(data: bytes) -> Any:
    """Decode one MessagePack value that fills `data`; a timestamp becomes ISO 8601 text."""
    value, end = _unpack(data, 0)
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes after the value")
    return value


def _unpack(data: bytes, i: int) -> tuple[Any, int]:
    b = data[i]
    i += 1
    if b <= 0x7F:
        return b, i
    if b >= 0xE0:
        return b - 0x100, i
    if 0x80 <= b <= 0x8F:
        return _map(data, i, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _array(data, i, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        return _text(data, i, b & 0x1F)
    fixed: dict[int, tuple[str, Any]] = {
        0xC0: ("", None), 0xC2: ("", False), 0xC3: ("", True),
        0xCA: (">f", None), 0xCB: (">d", None), 0xCC: (">B", None), 0xCD: (">H", None),
        0xCE: (">I", None), 0xCF: (">Q", None), 0xD0: (">b", None), 0xD1: (">h", None),
        0xD2: (">i", None), 0xD3: (">q", None),
    }
    if b in fixed:
        fmt, constant = fixed[b]
        if not fmt:
            return constant, i
        size = struct.calcsize(fmt)
        return struct.unpack_from(fmt, data, i)[0], i + size
    sized = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4, 0xDC: 2, 0xDD: 4,
             0xDE: 2, 0xDF: 4, 0xC7: 1, 0xC8: 2, 0xC9: 4}
    if b in sized:
        width = sized[b]
        n = int.from_bytes(data[i : i + width], "big")
        i += width
        if b in (0xC4, 0xC5, 0xC6):
            return data[i : i + n].hex(), i + n
        if b in (0xD9, 0xDA, 0xDB):
            return _text(data, i, n)
        if b in (0xDC, 0xDD):
            return _array(data, i, n)
        if b in (0xDE, 0xDF):
            return _map(data, i, n)
        return _ext(data[i], data[i + 1 : i + 1 + n]), i + 1 + n
    fixext = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
    if b in fixext:
        n = fixext[b]
        return _ext(data[i], data[i + 1 : i + 1 + n]), i + 1 + n
    raise ValueError(f"MessagePack byte 0x{b:02x} is not used")


def _text(data: bytes, i: int, n: int) -> tuple[str, int]:
    if i + n > len(data):
        raise ValueError("a string runs past the end")
    return data[i : i + n].decode(), i + n


def _array(data: bytes, i: int, n: int) -> tuple[list[Any], int]:
    items = []
    for _ in range(n):
        item, i = _unpack(data, i)
        items.append(item)
    return items, i


def _map(data: bytes, i: int, n: int) -> tuple[dict[Any, Any], int]:
    items = {}
    for _ in range(n):
        key, i = _unpack(data, i)
        items[key], i = _unpack(data, i)
    return items, i


def _ext(code: int, body: bytes) -> str:
    if code != 0xFF:
        raise ValueError(f"MessagePack extension {code} is not a timestamp")
    if len(body) == 4:
        seconds, nanos = int.from_bytes(body, "big"), 0
    elif len(body) == 8:
        word = int.from_bytes(body, "big")
        seconds, nanos = word & (2**34 - 1), word >> 34
    elif len(body) == 12:
        nanos, seconds = struct.unpack(">Iq", body)
    else:
        raise ValueError("a timestamp of the wrong size")
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds,
                                                          microseconds=nanos // 1000)
    return moment.isoformat().replace("+00:00", "Z")


def readable(state: bytes) -> Any:
    """An event's signed state as the JSON its `fields` must equal."""
    return json.loads(json.dumps(unpack(state)))


# --- the record: canonical bytes, Merkle leaves, RFC 9162 proofs, signatures --------------


def canonical(stream: str, version: int, topic: str, state: bytes) -> bytes:
    oid, topic_bytes = uuid.UUID(stream).bytes, topic.encode()
    return b"".join((len(oid).to_bytes(4, "big"), oid, version.to_bytes(8, "big"),
                     len(topic_bytes).to_bytes(4, "big"), topic_bytes,
                     len(state).to_bytes(4, "big"), state))


def leaf_hash(notification: int, canonical_bytes: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + notification.to_bytes(8, "big") + canonical_bytes).digest()


def verify_inclusion(leaf: bytes, index: int, size: int, root: bytes,
                     proof: Sequence[bytes]) -> bool:
    """RFC 9162 section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = hashlib.sha256(b"\x01" + p + r).digest()
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            r = hashlib.sha256(b"\x01" + r + p).digest()
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).digest()[:8].hex()


def signed(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _partition_heads(heads: Any) -> bool:
    """Whether a checkpoint's partition heads are well formed (a list of key, size, head,
    chain)."""
    return isinstance(heads, list) and all(
        isinstance(p, dict) and set(p) == {"key", "size", "head", "chain"}
        and isinstance(p["key"], str) and isinstance(p["chain"], str)
        and all(isinstance(p[n], int) and not isinstance(p[n], bool) for n in ("size", "head"))
        for p in heads)


def checkpoint_text(cp: dict[str, Any]) -> bytes:
    return (f"{cp['size']}\n{cp['root']}\n{cp['head']}\n{cp['chain']}\n{cp['time']}\n"
            + "".join(f"partition {p['key']} {p['size']} {p['head']} {p['chain']}\n"
                      for p in cp.get("partitions") or [])).encode()


def canonical_json(value: Any) -> bytes:
    """The bytes a manifest is signed over: sorted keys, no spaces, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def hex_bytes(text: Any, what: str, size: int | None = None) -> bytes:
    """Lowercase hex only, so that no two texts name the same bytes."""
    if not isinstance(text, str):
        raise ValueError(f"{what} is not hex text")
    try:
        data = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{what} is not hex") from None
    if data.hex() != text or (size is not None and len(data) != size):
        raise ValueError(f"{what} is not {size or 'some'} bytes of lowercase hex")
    return data


# --- sabot-shoe-v1 (a copy of domain/game/shoe.py) ---------------------------------------------


def shoe_v1(seed: bytes, contributions: Sequence[bytes], decks: int, cut: int) -> list[str]:
    """The shoe's cards, first out first: an HMAC-SHA256 keyed stream drives an unbiased
    Fisher-Yates over `decks` new packs, then the cut."""
    message = SHOE_V1.encode() + b"".join(len(c).to_bytes(4, "big") + c for c in contributions)
    key = hmac.digest(seed, message, "sha256")
    cards = [rank + suit for _ in range(decks) for suit in SUITS for rank in RANKS]
    words = _words(key)
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = 2**32 - 2**32 % bound
        while (word := next(words)) >= limit:
            pass
        j = word % bound
        cards[i], cards[j] = cards[j], cards[i]
    return cards[cut:] + cards[:cut]


def _words(key: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hmac.digest(key, counter.to_bytes(8, "big"), "sha256")
        for start in range(0, 32, 4):
            yield int.from_bytes(block[start : start + 4], "big")
        counter += 1


def point(cards: Sequence[str]) -> int:
    return sum(min(RANKS.index(c[0]) + 1, 10) % 10 for c in cards) % 10


# --- the checks ---------------------------------------------------------------------------


class Report:
    """What was checked, and each failure named."""

    def __init__(self) -> None:
        self.checked: list[str] = []
        self.failures: list[str] = []

    @property
    def ok(self) -> bool:
        return not self.failures and bool(self.checked)

    def fail(self, text: str) -> None:
        self.failures.append(text)

    def lines(self) -> list[str]:
        return ([f"ok:     {c}" for c in self.checked]
                + [f"FAILED: {f}" for f in self.failures]
                + ["the file checks" if self.ok else "the file does NOT check"])


class _Record:
    """The events of one file, checked against one signed checkpoint."""

    def __init__(self, report: Report, checkpoint: Any, keys: Any,
                 trusted: Sequence[bytes]) -> None:
        self.report = report
        self.size = -1
        self.root = b""
        self.fields: dict[tuple[str, int], dict[str, Any]] = {}
        self._checkpoint(checkpoint, keys, trusted)

    def _checkpoint(self, cp: Any, keys: Any, trusted: Sequence[bytes]) -> None:
        report = self.report
        if not isinstance(cp, dict) or set(cp) - {"frontier", "partitions"} != CHECKPOINT_KEYS \
                or not _partition_heads(cp.get("partitions", [])):
            report.fail("the checkpoint is missing or malformed")
            return
        try:
            public = hex_bytes(cp["public_key"], "the checkpoint's public key", 32)
            signature = hex_bytes(cp["signature"], "the checkpoint's signature", 64)
            root = hex_bytes(cp["root"], "the checkpoint's root", 32)
            size = cp["size"]
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ValueError("the checkpoint's size is not a positive number")
        except ValueError as error:
            report.fail(str(error))
            return
        listed = {k.get("key"): k.get("public_key") for k in keys if isinstance(k, dict)} \
            if isinstance(keys, list) else {}
        if key_id(public) != cp["key"] or listed.get(cp["key"]) != cp["public_key"]:
            report.fail(f"the checkpoint's key {cp['key']} is not among the file's public keys")
            return
        if trusted and public not in trusted:
            report.fail(f"the checkpoint is signed by key {cp['key']}, not a trusted key")
            return
        if not signed(public, CHECKPOINT_PREFIX + checkpoint_text(cp), signature):
            report.fail(f"the signature of checkpoint {size} does not verify")
            return
        self.size, self.root = size, root
        report.checked.append(f"checkpoint of {size} events, root {cp['root'][:16]}…, signed "
                              f"by key {cp['key']}" + (" (trusted)" if trusted else ""))

    def event(self, e: Any, where: str) -> dict[str, Any] | None:
        """The event's signed fields, if its leaf, proof and readable form all check."""
        if not isinstance(e, dict) or set(e) != EVENT_KEYS:
            self.report.fail(f"{where} is not an event record")
            return None
        try:
            state = hex_bytes(e["state"], f"{where}'s state")
            proof = [hex_bytes(p, f"{where}'s proof", 32) for p in e["proof"]]
            for key in ("n", "leaf", "version"):
                if not isinstance(e[key], int) or isinstance(e[key], bool) or e[key] < 0:
                    raise ValueError(f"{where}'s {key} is not a number")
            leaf = leaf_hash(e["n"], canonical(e["stream"], e["version"], e["topic"], state))
            fields = readable(state)
        except (ValueError, TypeError, KeyError, IndexError, UnicodeDecodeError) as error:
            self.report.fail(f"{where}: {error}")
            return None
        label = f"{where} ({e['event']}, version {e['version']})"
        if self.size < 0 or not verify_inclusion(leaf, e["leaf"], self.size, self.root, proof):
            self.report.fail(f"{label}: its inclusion proof does not lead to the signed root")
            return None
        if not e["topic"].endswith("." + e["event"]) or not isinstance(fields, dict):
            self.report.fail(f"{label}: its name is not its signed topic's")
            return None
        if fields != e["fields"]:
            differ = sorted(k for k in fields.keys() | e["fields"].keys()
                            if fields.get(k) != e["fields"].get(k))
            self.report.fail(f"{label}: its fields differ from its signed bytes "
                             f"({', '.join(differ)})")
            return None
        self.fields[(e["stream"], e["version"])] = fields
        return fields


class _Shoes:
    """The tailles of one table as its events tell them, to re-deal every card."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.taille: dict[str, Any] = {}
        self.tailles: list[dict[str, Any]] = []
        self.cards: list[tuple[dict[str, Any], str, int, str]] = []  # taille, card, pos, label

    def see(self, kind: str, f: dict[str, Any], label: str) -> None:
        if kind == "ShoeShuffled":
            self.taille = {"taille": f["taille"], "algorithm": f["algorithm"],
                           "decks": f["decks"], "commitment": f["commitment"],
                           "physical": f["physical"], "contributions": [], "cut": None,
                           "seed": None}
            self.tailles.append(self.taille)
        elif kind == "EntropyContributed" and self.taille:
            self.taille["contributions"].append(f["entropy"])
        elif kind == "ShoeCut" and self.taille:
            self.taille["cut"] = f["position"]
        elif kind == "ShoeSeedRevealed" and self.taille.get("taille") == f["taille"]:
            self.taille["seed"] = f["seed"]
        elif kind in CARD_EVENTS:
            self.cards.append((self.taille, f["card"], f["position"], label))

    def redeal(self) -> int:
        """Check every card seen against its revealed shoe; the number checked."""
        orders: dict[int, list[str] | None] = {}
        checked = 0
        for taille, card, position, label in self.cards:
            if not taille:
                self.report.fail(f"{label}: a card before any shuffle")
                continue
            if id(taille) not in orders:
                orders[id(taille)] = self._order(taille)
            cards = orders[id(taille)]
            if cards is None:
                continue
            expected = cards[position] if 0 <= position < len(cards) else "none"
            if card != expected:
                self.report.fail(f"{label}: card {card} at position {position}, but the shoe of "
                                 f"taille {taille['taille']} holds {expected} there")
            checked += 1
        return checked

    def _order(self, t: dict[str, Any]) -> list[str] | None:
        if t["physical"] or t["seed"] is None:
            self.report.checked.append(
                f"taille {t['taille']}: " + ("a physical shoe, cards as recorded" if t["physical"]
                                             else "its seed is not revealed yet: cards not "
                                                  "re-dealt"))
            return None
        try:
            seed = hex_bytes(t["seed"], "the seed", 32)
            contributions = [hex_bytes(c, "a contribution") for c in t["contributions"]]
        except ValueError as error:
            self.report.fail(f"taille {t['taille']}: {error}")
            return None
        if hashlib.sha256(seed).hexdigest() != t["commitment"]:
            self.report.fail(f"taille {t['taille']}: the revealed seed's SHA-256 is not the "
                             "shoe's commitment")
            return None
        if t["algorithm"] != SHOE_V1 or not isinstance(t["cut"], int):
            self.report.fail(f"taille {t['taille']}: shoe algorithm {t['algorithm']!r} or cut "
                             "unknown")
            return None
        return shoe_v1(seed, contributions, t["decks"], t["cut"])


def check_points(report: Report, events: Sequence[tuple[str, str, dict[str, Any]]]) -> int:
    """Each settled point against the cards of its coup at its table; the number of coups
    checked. `events`: (table id, event name, fields)."""
    hands: dict[tuple[str, int, str], list[str]] = {}
    settled = 0
    for table, kind, f in events:
        if kind in ("CardDealt", "ThirdCardDrawn"):
            hands.setdefault((table, f["coup"], f["side"]), []).append(f["card"])
        elif kind == "CoupSettled":
            settled += 1
            for side, recorded in f["points"].items():
                expected = point(hands.get((table, f["coup"], side), []))
                if recorded != expected:
                    report.fail(f"coup {f['coup']}: {side} is settled on {recorded} points, its "
                                f"cards make {expected}")
    return settled


def check_dossier(doc: Any, trusted: Sequence[bytes] = ()) -> Report:
    report = Report()
    if not isinstance(doc, dict) or doc.get("format") != DOSSIER_FORMAT:
        report.fail(f"not a {DOSSIER_FORMAT} dossier")
        return report
    record = _Record(report, doc.get("checkpoint"), doc.get("public_keys"), trusted)
    table, coup = doc.get("table"), doc.get("coup")
    events = doc.get("events")
    if not isinstance(table, dict) or not isinstance(events, list) or not events:
        report.fail("the dossier names no table or holds no events")
        return report
    table_id = str(uuid.uuid5(TABLE_NAMESPACE, f"table/{table.get('name')}"))
    if table.get("id") != table_id:
        report.fail(f"table {table.get('name')!r} has id {table_id}, not {table.get('id')}")
    shoes = _Shoes(report)
    seen: list[tuple[str, str, dict[str, Any]]] = []
    for n, e in enumerate(events):
        f = record.event(e, f"event {n + 1}")
        if f is None:
            continue
        if e["stream"] != table_id or not e["topic"].startswith(TABLE_TOPIC):
            report.fail(f"event {n + 1} is not an event of table {table.get('name')!r}")
            continue
        seen.append((table_id, e["event"], f))
        shoes.see(e["event"], f, f"event {n + 1} ({e['event']})")
    if report.failures:
        return report
    report.checked.append(f"{len(events)} events: each in the signed tree, each readable form "
                          "equal to its signed bytes")
    _complete(report, events, coup)
    summary = {k: v for k, v in (shoes.tailles[-1] if shoes.tailles else {}).items()
               if k not in ("physical",)}
    if doc.get("shoe") != summary:
        report.fail("the dossier's shoe summary is not what its events record")
    cards = shoes.redeal()
    if cards:
        report.checked.append(f"{cards} cards re-dealt from the revealed seed (sabot-shoe-v1)")
    if check_points(report, seen):
        report.checked.append(f"coup {coup}'s points follow from its cards")
    return report


def _complete(report: Report, events: list[dict[str, Any]], coup: Any) -> None:
    """The coup's events run without a gap, from the event before it to its close."""
    coup_versions = [e["version"] for e in events if e["fields"].get("coup") == coup]
    closes = [e for e in events if e["event"] == "CoupClosed" and e["fields"].get("coup") == coup]
    if not coup_versions or not closes:
        report.fail(f"the dossier holds no closed coup {coup}")
        return
    first, last = min(coup_versions), closes[0]["version"]
    versions = {e["version"] for e in events}
    missing = [v for v in range(first - 1, last + 1) if v not in versions]
    if missing:
        report.fail(f"coup {coup} is incomplete: versions {missing[:5]} are missing")
        return
    before = next(e for e in events if e["version"] == first - 1)
    if before["fields"].get("coup") == coup:
        report.fail(f"coup {coup} starts before the dossier's first event")
        return
    report.checked.append(f"coup {coup} complete: versions {first} to {last}, nothing left out")


def check_bundle(directory: Path, trusted: Sequence[bytes] = ()) -> Report:
    report = Report()
    try:
        manifest = json.loads((directory / "manifest.json").read_bytes())
    except (OSError, ValueError) as error:
        raise Unreadable(f"{directory}/manifest.json: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        report.fail(f"not a {EXPORT_FORMAT} export")
        return report
    record = _Record(report, manifest.get("checkpoint"), manifest.get("public_keys"), trusted)
    if record.size < 0:
        return report
    unsigned = {k: v for k, v in manifest.items() if k != "signature"}
    keys = {k.get("key"): k.get("public_key") for k in manifest.get("public_keys", [])}
    try:
        public = hex_bytes(keys.get(manifest.get("signed_by")), "the manifest's key", 32)
        good = key_id(public) == manifest.get("signed_by") and (
            not trusted or public in trusted) and signed(
            public, MANIFEST_PREFIX + canonical_json(unsigned),
            hex_bytes(manifest.get("signature"), "the manifest's signature", 64))
    except ValueError:
        good = False
    if not good:
        report.fail("the manifest's signature does not verify (by a key it lists"
                    + (", trusted)" if trusted else ")"))
        return report
    files = manifest.get("files")
    if not isinstance(files, dict):
        report.fail("the manifest lists no files")
        return report
    contents: dict[str, bytes] = {}
    for name, entry in sorted(files.items()):
        try:
            data = (directory / Path(name).name).read_bytes()
        except OSError:
            report.fail(f"{name} is missing")
            continue
        if not isinstance(entry, dict) or hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            report.fail(f"{name}: its SHA-256 is not the manifest's")
            continue
        contents[name] = data
    if report.failures:
        return report
    report.checked.append(f"manifest signed, {len(files)} files match their SHA-256")
    lines = [json.loads(line) for line in contents.get("events.jsonl", b"").splitlines()]
    shoes: dict[str, _Shoes] = {}
    seen: list[tuple[str, str, dict[str, Any]]] = []
    by_version: dict[tuple[str, int], dict[str, Any]] = {}
    for n, e in enumerate(lines):
        f = record.event(e, f"events.jsonl line {n + 1}")
        if f is None or not e["topic"].startswith(TABLE_TOPIC):
            continue
        by_version[(e["stream"], e["version"])] = f
        shoes.setdefault(e["stream"], _Shoes(report)).see(
            e["event"], f, f"events.jsonl line {n + 1} ({e['event']})")
        seen.append((e["stream"], e["event"], f))
    if report.failures:
        return report
    report.checked.append(f"{len(lines)} events: each in the signed tree, each readable form "
                          "equal to its signed bytes")
    cards = sum(s.redeal() for s in shoes.values())
    report.checked.append(f"{cards} cards re-dealt from the revealed seeds (sabot-shoe-v1)")
    report.checked.append(f"{check_points(report, seen)} coups' points follow from their cards")
    _check_recall(report, contents.get("recall.jsonl", b""), by_version)
    _check_checkpoints(report, contents.get("checkpoints.jsonl", b""))
    return report


def _check_checkpoints(report: Report, data: bytes) -> None:
    """Every checkpoint of the operator's file, and every witness's co-signature of one."""
    lines = [json.loads(line) for line in data.splitlines() if line.strip()]
    texts = {(c["size"], c["root"], c["time"]): checkpoint_text(c)
             for c in lines if c.get("kind") == "checkpoint"}
    for n, c in enumerate(lines):
        try:
            public = hex_bytes(c["public_key"], "a key", 32)
            signature = hex_bytes(c["signature"], "a signature", 64)
        except ValueError as error:
            report.fail(f"checkpoints.jsonl line {n + 1}: {error}")
            continue
        if c.get("kind") == "checkpoint":
            good = c["key"] == key_id(public) and signed(
                public, CHECKPOINT_PREFIX + checkpoint_text(c), signature)
        else:
            text = texts.get((c["size"], c["root"], c["time"]))
            good = text is not None and c["witness"] == key_id(public) and signed(
                public, WITNESS_PREFIX + text, signature)
        if not good:
            report.fail(f"checkpoints.jsonl line {n + 1}: its signature does not verify")
    report.checked.append(f"{len(lines)} lines of the checkpoint file: every signature holds "
                          f"({len(lines) - len(texts)} by witnesses)")


def _check_recall(report: Report, data: bytes,
                  events: dict[tuple[str, int], dict[str, Any]]) -> None:
    """Each recalled coup's cards and payouts are those of its signed events."""
    coups = 0
    for n, line in enumerate(data.splitlines()):
        coup = json.loads(line)
        steps = [(s, events.get((coup["table_id"], s["version"]))) for s in coup["steps"]]
        if any(f is None for _, f in steps):
            report.fail(f"recall.jsonl line {n + 1}: a step of coup {coup['coup']} is not an "
                        "exported event")
            continue
        cards = [[f["side"], f["card"], f["position"]] for s, f in steps
                 if f and s["event"] in ("CardDealt", "ThirdCardDrawn")]
        payouts = [[f["payout"]["player"], f["payout"]["net"]] for s, f in steps
                   if f and s["event"] == "PayoutMade"]
        if cards != [[c["side"], c["card"], c["position"]] for c in coup["cards"]] or \
                payouts != [[p["player"], p["net"]] for p in coup["payouts"]]:
            report.fail(f"recall.jsonl line {n + 1}: coup {coup['coup']}'s cards or payouts "
                        "are not its events'")
        coups += 1
    report.checked.append(f"{coups} recalled coups: cards and payouts are the signed events'")


def check_path(path: Path, trusted: Sequence[bytes] = ()) -> Report:
    """Check a dossier file or an export directory."""
    try:
        if path.is_dir():
            return check_bundle(path, trusted)
        doc = json.loads(path.read_bytes())
        return check_dossier(doc, trusted)
    except (OSError, ValueError) as error:
        raise Unreadable(f"{path}: {error}") from None
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        report = Report()
        report.fail(f"{path} is malformed ({type(error).__name__}: {error})")
        return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="offline_check.py", description="Check a Sabot coup dossier or export offline.")
    parser.add_argument("path", type=Path, help="a dossier (JSON file) or an export directory")
    parser.add_argument("--public-key", action="append", default=[], metavar="HEX",
                        help="the operator's published public key (repeatable)")
    args = parser.parse_args(argv)
    try:
        trusted = [hex_bytes(k, "--public-key", 32) for k in args.public_key]
        report = check_path(args.path, trusted)
    except (Unreadable, ValueError) as error:
        print(f"check: {error}", file=sys.stderr)
        return 2
    print("\n".join(report.lines()))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
