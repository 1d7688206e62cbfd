"""The checks: a `Report` of what was checked and each failure named; the walkers of one
file's events against its signed checkpoint (`_Record`) and of a table's shoes (`_Shoes`);
`check_dossier`, `check_bundle` (an export folder) and `check_path` (either)."""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .msgpack import readable
from .note import NoteError, read_checkpoint, read_note, read_proof
from .record import (
    CHECKPOINT_PREFIX,
    HAND_OVER_PREFIX,
    MANIFEST_PREFIX,
    WITNESS_PREFIX,
    canonical,
    canonical_json,
    checkpoint_text,
    hand_over_text,
    hex_bytes,
    key_id,
    leaf_hash,
    signed,
    verify_inclusion,
)
from .shoe import SHOE_V1, point, shoe_v1

DOSSIER_FORMAT = "sabot-dossier-v1"
EXPORT_FORMAT = "sabot-export-v1"
TABLE_NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-7ab1e0000000")
TABLE_TOPIC = "domain.table_aggregate:Table."
CARD_EVENTS = ("CardBurned", "CardDealt", "ThirdCardDrawn")
EVENT_KEYS = {"n", "leaf", "stream", "version", "topic", "event", "state", "fields", "proof"}
CHECKPOINT_KEYS = {"size", "root", "head", "chain", "time", "key", "public_key", "signature"}
OPTIONAL_CHECKPOINT_KEYS = {"frontier", "partitions"}
EXTENSION = "sabot-checkpoint-v1"


class Unreadable(Exception):
    """The file is not a dossier or an export at all."""


def _partition_heads(heads: Any) -> bool:
    """Whether a checkpoint's partition heads are well formed (a list of key, size, head,
    chain)."""
    return isinstance(heads, list) and all(
        isinstance(p, dict) and set(p) == {"key", "size", "head", "chain"}
        and isinstance(p["key"], str) and isinstance(p["chain"], str)
        and all(isinstance(p[n], int) and not isinstance(p[n], bool) for n in ("size", "head"))
        for p in heads)


def note_problem(cp: dict[str, Any], public: bytes, text: Any) -> str | None:
    """What is wrong with a checkpoint's C2SP note (None: it is the checkpoint's own, signed
    by its key under its origin, its extension line binding the checkpoint's signed text)."""
    try:
        note = read_note(text)
        body = read_checkpoint(note.text)
    except (NoteError, TypeError, AttributeError) as error:
        return f"its note is malformed ({error})"
    if not note.signed_by(body.origin, public):
        return f"its note is not signed by its key as {body.origin}"
    digest = hashlib.sha256(CHECKPOINT_PREFIX + checkpoint_text(cp)).digest()
    if (body.size, body.root.hex()) != (cp["size"], cp["root"]) or body.extensions != [
            f"{EXTENSION} {base64.b64encode(digest).decode()}"]:
        return "its note is not the checkpoint's tree head and signed text"
    return None


def cosigned(note: str, line: str, public: bytes) -> bool:
    """Whether the signature `line` is a witness's valid tlog-cosignature/v1 of `note`."""
    try:
        ((name, _, _),) = read_note(f"x\n\n{line}\n").signatures
        return read_note(note + line + "\n").cosigned_by(name, public) is not None
    except (NoteError, ValueError):
        return False


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
                 trusted: Sequence[bytes], note: Any = None) -> None:
        self.report = report
        self.size = -1
        self.root = b""
        self.note: str | None = None
        self.public = b""
        self.fields: dict[tuple[str, int], dict[str, Any]] = {}
        self._checkpoint(checkpoint, keys, trusted, note)

    def _checkpoint(self, cp: Any, keys: Any, trusted: Sequence[bytes], note: Any) -> None:
        report = self.report
        if not isinstance(cp, dict) or set(cp) - OPTIONAL_CHECKPOINT_KEYS != CHECKPOINT_KEYS \
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
        problem = note_problem(cp, public, note) if note is not None else None
        if problem is not None:
            report.fail(f"checkpoint {size}: {problem}")
            return
        self.size, self.root, self.public, self.note = size, root, public, note
        report.checked.append(f"checkpoint of {size} events, root {cp['root'][:16]}…, signed "
                              f"by key {cp['key']}" + (" (trusted)" if trusted else "")
                              + (", and as a C2SP checkpoint note" if self.note else ""))

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


def _check_tlog_proofs(report: Report, record: _Record, doc: dict[str, Any],
                       witnesses: Sequence[bytes]) -> None:
    """Each event's C2SP tlog-proof: its checkpoint note is the checkpoint's (signed by its
    key), its index and inclusion proof lead from the event's leaf to the note's root; the
    witnesses listed co-signed that note, and so did every witness key given."""
    proofs, events = doc.get("tlog_proofs"), doc["events"]
    if proofs is None and not witnesses:
        return  # a dossier of before
    if record.note is None or not isinstance(proofs, list) or len(proofs) != len(events):
        report.fail("the dossier has no C2SP checkpoint note or not one tlog-proof an event")
        return
    expected = read_note(record.note).text
    cosigners: set[bytes] = set()
    for n, (text, e) in enumerate(zip(proofs, events, strict=True)):
        try:
            proof = read_proof(text)
            note = read_note(proof.checkpoint)
            body = read_checkpoint(note.text)
            state = hex_bytes(e["state"], "its state")
            leaf = leaf_hash(e["n"], canonical(e["stream"], e["version"], e["topic"], state))
        except (NoteError, ValueError, TypeError) as error:
            report.fail(f"tlog-proof {n + 1}: {error}")
            continue
        if note.text != expected or not note.signed_by(body.origin, record.public):
            report.fail(f"tlog-proof {n + 1}: its checkpoint is not the dossier's, signed")
        elif proof.leaf != e["leaf"] or not verify_inclusion(leaf, proof.leaf, body.size,
                                                             body.root, proof.hashes):
            report.fail(f"tlog-proof {n + 1}: its proof does not lead from event {n + 1} to "
                        "the checkpoint's root")
        elif n == 0:
            for w in doc.get("witnesses") or []:
                public = hex_bytes(w.get("public_key"), "a witness's key", 32)
                if key_id(public) != w.get("key") or note.cosigned_by(w["name"], public) is None:
                    report.fail(f"witness {w.get('name')}: no valid co-signature of the "
                                "checkpoint")
                cosigners.add(public)
    missing = [w.hex()[:16] for w in witnesses if w not in cosigners]
    if missing:
        report.fail(f"the checkpoint is not co-signed by the witness key(s) {', '.join(missing)}")
    if report.failures:
        return
    report.checked.append(
        f"{len(proofs)} C2SP tlog-proofs: each event's leaf is in the checkpoint note's tree"
        + (f"; co-signed by {len(cosigners)} witness(es)" if cosigners else "")
        + (" (trusted)" if witnesses else ""))


def check_dossier(doc: Any, trusted: Sequence[bytes] = (),
                  witnesses: Sequence[bytes] = ()) -> Report:
    report = Report()
    if not isinstance(doc, dict) or doc.get("format") != DOSSIER_FORMAT:
        report.fail(f"not a {DOSSIER_FORMAT} dossier")
        return report
    record = _Record(report, doc.get("checkpoint"), doc.get("public_keys"), trusted,
                     doc.get("checkpoint_note"))
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
    _check_tlog_proofs(report, record, doc, witnesses)
    _complete(report, events, coup)
    check_shoe_and_points(report, doc, shoes, seen, coup, "dossier")
    return report


def check_shoe_and_points(report: Report, doc: dict[str, Any], shoes: _Shoes,
                          seen: Sequence[tuple[str, str, dict[str, Any]]], coup: Any,
                          what: str) -> None:
    """The document's shoe summary is what its events record, the revealed seed re-deals its
    cards, and the coup's points follow from them (a dossier's, a receipt's)."""
    summary = {k: v for k, v in (shoes.tailles[-1] if shoes.tailles else {}).items()
               if k != "physical"}
    if doc.get("shoe") != summary:
        report.fail(f"the {what}'s shoe summary is not what its events record")
    cards = shoes.redeal()
    if cards:
        report.checked.append(f"{cards} cards re-dealt from the revealed seed (sabot-shoe-v1)")
    if check_points(report, seen):
        report.checked.append(f"coup {coup}'s points follow from its cards")


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
    """Every checkpoint of the operator's file, every key hand-over (signed by the old key),
    and every witness's co-signature of one (a witness reached over HTTP, C2SP tlog-witness,
    co-signs the note only: no `signature`)."""
    lines = [json.loads(line) for line in data.splitlines() if line.strip()]
    texts = {(c["size"], c["root"], c["time"]): checkpoint_text(c)
             for c in lines if c.get("kind") == "checkpoint"}
    notes = {(c["size"], c["root"], c["time"]): c.get("note") or ""
             for c in lines if c.get("kind") == "checkpoint"}
    for n, c in enumerate(lines):
        try:
            public = hex_bytes(c["public_key"], "a key", 32)
            note_only = c.get("kind") == "witness" and c["signature"] == "" and bool(
                c.get("note_signature"))
            signature = b"" if note_only else hex_bytes(c["signature"], "a signature", 64)
        except ValueError as error:
            report.fail(f"checkpoints.jsonl line {n + 1}: {error}")
            continue
        if c.get("kind") == "checkpoint":
            good = c["key"] == key_id(public) and signed(
                public, CHECKPOINT_PREFIX + checkpoint_text(c), signature) and (
                not c.get("note") or note_problem(c, public, c["note"]) is None)
        elif c.get("kind") == "hand-over":
            good = c["key"] == key_id(public) and signed(
                public, HAND_OVER_PREFIX + hand_over_text(c), signature)
        else:
            at = (c["size"], c["root"], c["time"])
            text = texts.get(at)
            good = text is not None and c["witness"] == key_id(public) and (
                note_only or signed(public, WITNESS_PREFIX + text, signature)) and (
                not c.get("note_signature") or cosigned(notes[at], c["note_signature"], public))
        if not good:
            report.fail(f"checkpoints.jsonl line {n + 1}: its signature does not verify")
    witnessed = sum(c.get("kind") == "witness" for c in lines)
    report.checked.append(f"{len(lines)} lines of the checkpoint file: every signature holds "
                          f"({witnessed} by witnesses)")


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


def check_path(path: Path, trusted: Sequence[bytes] = (),
               witnesses: Sequence[bytes] = ()) -> Report:
    """Check a dossier file or an export directory."""
    try:
        if path.is_dir():
            return check_bundle(path, trusted)
        doc = json.loads(path.read_bytes())
        return check_dossier(doc, trusted, witnesses)
    except (OSError, ValueError) as error:
        raise Unreadable(f"{path}: {error}") from None
    except (KeyError, TypeError, IndexError, AttributeError) as error:
        report = Report()
        report.fail(f"{path} is malformed ({type(error).__name__}: {error})")
        return report

