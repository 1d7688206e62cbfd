"""The regulator export: a folder that hands over a tournament's, a table's or the whole store's
record, checkable offline by `infra.audit.offline_check` (format `sabot-export-v1`, README,
"Regulator exports").

    export(writer, out_dir, recall=PROJECTIONS, tournament=..., table=..., start=...,
           end=...) -> Manifest

`recall` writes the game recall (`infra.audit.ports.CoupRecall`: the caller passes
`projections.audit_port.PROJECTIONS`; the audit does not import the projections).

Files (JSON lines are one JSON document a line, UTF-8):

| file                | one line per                                                       |
|---------------------|--------------------------------------------------------------------|
| `events.jsonl`      | exported event, in notification order, with its inclusion proof    |
|                     | (`infra.audit.proofs`: n, leaf, stream, version, topic, event, state,     |
|                     | fields, proof)                                                     |
| `recall.jsonl`      | closed coup: every card, stake, decision, payout, the commission,   |
|                     | the bank and each player's chips before and after, its steps        |
|                     | (`projections.recall.CoupRecall`)                                  |
| `significant.jsonl` | significant event: at, kind, actor, reason, subject, before, after, |
|                     | and the exported event it comes from (stream, version); and each   |
|                     | signing key the store recorded (a key change)                      |
| `checkpoints.jsonl` | line of the checkpoint file (checkpoints, witness co-signatures and   |
|                     | key hand-overs)                                                    |
| `manifest.json`     | the format, the scope, each file's SHA-256 and line count, the      |
|                     | checkpoint the proofs lead to, every public key the store recorded, |
|                     | signed by the store's key over "sabot-export-v1\\n" || canonical   |
|                     | JSON of the manifest without its signature                         |

Scope: a tournament (its own events, its tables' and the disputes on them), a table (its
events and its disputes), or everything; `start`/`end` keep the events of that time, widened
to whole coups and to the shuffle, contributions, cut and reveal of every taille they deal
from, so every exported card can be re-dealt.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from domain.dispute.aggregate import Dispute
from domain.errors import NotFound
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.audit.offline_check import EXPORT_FORMAT, MANIFEST_PREFIX, canonical_json, readable
from infra.audit.ports import CoupRecall
from infra.audit.proofs import prove
from infra.store.checkpoints import checkpoint_path, read_lines
from infra.store.database import Database
from infra.store.ledger import StoredRow, select_events
from infra.store.signing import Signer

SHOE_CONTEXT = ("ShoeShuffled", "EntropyContributed", "ShoeCut", "ShoeSeedRevealed")
SIGNIFICANT = {
    "InterventionMade": "intervention", "TournamentPaused": "pause",
    "TournamentResumed": "resume", "DirectorAppointed": "director (re)start",
    "ChipsAdjusted": "chips adjusted", "PlayerEliminated": "elimination",
    "TournamentFinished": "finish", "Opened": "dispute opened", "Replayed": "dispute verdict",
    "CorrectionProposed": "correction proposed", "CorrectionApproved": "correction approved",
    "CorrectionApplied": "correction applied",
}


class Manifest(msgspec.Struct, kw_only=True):
    format: str
    scope: dict[str, str | None]
    created: str
    files: dict[str, dict[str, Any]]
    checkpoint: dict[str, Any]
    public_keys: list[dict[str, str]]
    signed_by: str
    signature: str = ""


def export(writer: Any, out: Path, *, recall: CoupRecall, tournament: str | None = None,
           table: str | None = None,
           start: datetime | None = None, end: datetime | None = None,
           progress: Callable[[str], object] = lambda _: None) -> Manifest:
    database: Database = writer.recorder.database
    with database.transaction(write=False) as cursor:
        rows = select_events(database, cursor, 0, None)
    progress(f"{len(rows)} events read")
    fields = _Readable(rows)
    streams = _streams(rows, fields, tournament, table)
    chosen = [r for r in rows if r.originator_id in streams]
    if start is not None or end is not None:
        chosen = _within(chosen, fields, start, end)
    proven = prove(writer, chosen)
    progress(f"{len(chosen)} events proven against checkpoint {proven.checkpoint['size']}")
    out.mkdir(parents=True, exist_ok=True)
    keys = _keys(database, proven.public_keys)
    files = {
        "events.jsonl": _jsonl(proven.events),
        "recall.jsonl": _jsonl(_recall(writer, chosen, recall)),
        "significant.jsonl": _jsonl([*_significant(writer, chosen, fields),
                                     *map(_key_line, keys)]),
        "checkpoints.jsonl": _checkpoint_lines(database),
    }
    for name, data in files.items():
        _write(out / name, data)
    signer: Signer = writer.recorder.signer()
    manifest = Manifest(
        format=EXPORT_FORMAT, scope={"tournament": tournament, "table": table,
                                     "from": _iso(start), "to": _iso(end)},
        created=_iso(datetime.now(UTC)) or "",
        files={name: {"sha256": hashlib.sha256(data).hexdigest(),
                      "lines": data.count(b"\n")} for name, data in files.items()},
        checkpoint=proven.checkpoint, public_keys=keys,
        signed_by=signer.key_id,
    )
    body = msgspec.to_builtins(manifest)
    del body["signature"]
    manifest.signature = signer.sign(MANIFEST_PREFIX + canonical_json(body)).hex()
    _write(out / "manifest.json", json.dumps(msgspec.to_builtins(manifest), indent=1).encode())
    return manifest


class _Readable(dict[int, Any]):
    """Each stored event's fields by notification id, decoded when first asked for."""

    def __init__(self, rows: Iterable[StoredRow]) -> None:
        super().__init__()
        self._states = {row.notification_id: row.state for row in rows}

    def __missing__(self, notification_id: int) -> Any:
        value = self[notification_id] = readable(self._states[notification_id])
        return value


def _streams(rows: list[StoredRow], fields: dict[int, Any], tournament: str | None,
             table: str | None) -> set[UUID]:
    """The streams of the scope: a tournament and its tables, a table, or all; with the
    disputes on those tables."""
    if tournament is None and table is None:
        return {row.originator_id for row in rows}
    opened = get_topic(Table.Opened)  # the topics the record knows (domain.topics)
    if tournament is not None:
        tournament_id = Tournament.create_id(tournament)
        tables = {row.originator_id for row in rows if row.topic == opened
                  and fields[row.notification_id].get("tournament") == tournament}
        if not any(row.originator_id == tournament_id for row in rows):
            raise NotFound(f"no tournament {tournament}", rule="unknown-tournament")
        streams = {tournament_id, *tables}
    else:
        assert table is not None
        streams = {_table_id(table)}
        if not any(row.originator_id in streams for row in rows):
            raise NotFound(f"no table {table}", rule="unknown-table")
    dispute = get_topic(Dispute.Opened)
    return streams | {row.originator_id for row in rows if row.topic == dispute
                      and UUID(fields[row.notification_id]["table_id"]) in streams}


def _table_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        return Table.create_id(text)


def _within(rows: list[StoredRow], fields: dict[int, Any], start: datetime | None,
            end: datetime | None) -> list[StoredRow]:
    """The events of the period, widened to whole coups and the shoes they deal from."""
    low = start or datetime.min.replace(tzinfo=UTC)
    high = end or datetime.max.replace(tzinfo=UTC)
    kept = {r.notification_id for r in rows if "timestamp" in fields[r.notification_id]
            and low <= _moment(fields[r.notification_id]["timestamp"]) < high}
    coups = {(r.originator_id, fields[r.notification_id]["coup"]) for r in rows
             if r.notification_id in kept and "coup" in fields[r.notification_id]}
    tailles: set[tuple[UUID, int]] = set()
    taille: dict[UUID, int] = {}
    for r in rows:
        f = fields[r.notification_id]
        if _kind(r) == "ShoeShuffled":
            taille[r.originator_id] = f["taille"]
        if (r.originator_id, f.get("coup")) in coups:
            kept.add(r.notification_id)
            tailles.add((r.originator_id, taille.get(r.originator_id, 0)))
    current: dict[UUID, int] = {}
    for r in rows:
        f = fields[r.notification_id]
        if _kind(r) == "ShoeShuffled":
            current[r.originator_id] = f["taille"]
        if _kind(r) in SHOE_CONTEXT and (r.originator_id, f.get(
                "taille", current.get(r.originator_id))) in tailles:
            kept.add(r.notification_id)
    return [r for r in rows if r.notification_id in kept]


def _kind(row: StoredRow) -> str:
    return row.topic.rsplit(".", 1)[-1]


def _domain_events(writer: Any, rows: Iterable[StoredRow]) -> list[Any]:
    return [writer.mapper.to_domain_event(StoredEvent(r.originator_id, r.originator_version,
                                                      r.topic, r.state)) for r in rows]


def _recall(writer: Any, rows: list[StoredRow], recall: CoupRecall) -> list[Any]:
    """Every closed coup of the exported tables whose every step is exported."""
    exported = {(r.originator_id, r.originator_version) for r in rows}
    tables = dict.fromkeys(r.originator_id for r in rows if r.topic.startswith(
        f"{get_topic(Table)}."))
    coups: list[Any] = []
    database: Database = writer.recorder.database
    for table_id in tables:
        with database.transaction(write=False) as cursor:
            stream = database.execute(
                cursor, "SELECT {nid} AS n, originator_id, originator_version, topic, state"
                " FROM {stored_events} WHERE originator_id = ? ORDER BY originator_version",
                (database.to_db_id(table_id),)).fetchall()
        events = _domain_events(writer, (StoredRow(s["n"], table_id, s["originator_version"],
                                                   s["topic"], bytes(s["state"]))
                                         for s in stream))
        coups += [msgspec.to_builtins(coup) for coup in recall.recall(table_id, events)
                  if all((table_id, step.version) in exported for step in coup.steps)]
    return coups


def _significant(writer: Any, rows: list[StoredRow], fields: dict[int, Any]) -> list[Any]:
    """The events a regulator asks for apart: who did what, why, before and after."""
    lines = []
    for row in rows:
        kind = _kind(row)
        if kind not in SIGNIFICANT or (kind == "Opened" and "Dispute" not in row.topic):
            continue
        f = fields[row.notification_id]
        before, after = _before_after(kind, f)
        lines.append({
            "at": f.get("timestamp"), "kind": SIGNIFICANT[kind], "event": kind,
            "actor": f.get("actor"), "reason": f.get("reason") or f.get("verdict"),
            "subject": f.get("player") or f.get("table_id") or f.get("table"),
            "before": before, "after": after,
            "stream": str(row.originator_id), "version": row.originator_version,
            "details": {k: v for k, v in f.items() if k not in ("timestamp", "actor")},
        })
    return lines


def _before_after(kind: str, f: dict[str, Any]) -> tuple[Any, Any]:
    if kind == "InterventionMade":
        return f["chips_before"], f["chips_after"]
    if kind in ("CorrectionProposed", "CorrectionApplied"):
        return None, f.get("corrections")
    if kind == "ChipsAdjusted":
        return None, {"delta": f["delta"]}
    return None, None


def _key_line(key: dict[str, str]) -> dict[str, Any]:
    """A signing key the store recorded, as a significant event (a key change)."""
    return {"at": key.get("recorded_at"), "kind": "signing key", "event": None,
            "actor": "operator", "reason": "a writer signed with this key from then on",
            "subject": key["key"], "before": None, "after": key["public_key"],
            "stream": None, "version": None, "details": {}}


def _keys(database: Database, proven: list[dict[str, str]]) -> list[dict[str, str]]:
    """Every key the store recorded (key changes included), with when it was first used."""
    with database.transaction(write=False) as cursor:
        rows = database.execute(
            cursor, "SELECT key_id, public_key, recorded_at FROM {signing_keys}"
            " ORDER BY recorded_at").fetchall()
    keys = [{"key": r["key_id"], "public_key": bytes(r["public_key"]).hex(),
             "recorded_at": str(r["recorded_at"])} for r in rows]
    known = {k["key"] for k in keys}
    return keys + [k for k in proven if k["key"] not in known]


def _checkpoint_lines(database: Database) -> bytes:
    path = checkpoint_path(database)
    return _jsonl(msgspec.to_builtins(line) for line in (read_lines(path) if path else []))


def _jsonl(items: Iterable[Any]) -> bytes:
    return b"".join(json.dumps(item, ensure_ascii=False, default=str).encode() + b"\n"
                    for item in items)


def _write(path: Path, data: bytes) -> None:
    draft = path.with_name(f".{path.name}.{os.getpid()}.draft")
    draft.write_bytes(data)
    draft.replace(path)


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
