"""A coup's dossier: one self-contained JSON file that proves what happened at one coup.

    dossier(writer, table_id, coup) -> the document (`sabot audit dossier`, and
                                       GET /tables/{t}/coups/{n}/dossier)

Format `sabot-dossier-v1` (README, "Coup dossiers"):

    {"format": "sabot-dossier-v1", "table": {"name", "id"}, "coup": N, "created": time,
     "shoe": {"taille", "algorithm", "decks", "commitment", "contributions", "cut", "seed"},
     "checkpoint": {"size", "root", "head", "chain", "time", "key", "public_key",
                    "signature"},
     "public_keys": [{"key", "public_key"}],
     "events": [event records, `infra.audit.proofs`],
     "checkpoint_note": the checkpoint as a C2SP signed note,
     "tlog_proofs": [each event's C2SP tlog-proof, in the events' order],
     "witnesses": [{"name", "key", "public_key"} of each co-signature in those proofs]}

A dossier of before has neither `checkpoint_note`, `tlog_proofs` nor `witnesses`, and still
checks; a checker of before ignores them.

The events are the table's, in version order: the shuffle of the coup's taille through its
cut (the commitment, every entropy contribution, the cut), the event just before the coup,
every event from the coup's first to its close, and the seed's reveal once the taille is
over. `infra.audit.offline_check` checks it without Sabot; `shoe` only restates what the events say
(and is checked against them); `created` is informative.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from domain.errors import NotFound
from infra.audit.offline_check import DOSSIER_FORMAT, readable
from infra.audit.proofs import prove, rows_of


def dossier(writer: Any, table_id: UUID, coup: int) -> dict[str, Any]:
    rows = rows_of(writer.recorder.database, table_id)
    if not rows:
        raise NotFound(f"no table {table_id}", rule="unknown-table")
    kinds = [row.topic.rsplit(".", 1)[-1] for row in rows]
    fields = [readable(row.state) for row in rows]
    name = fields[0].get("name", str(table_id))
    played = [i for i, f in enumerate(fields) if f.get("coup") == coup]
    close = next((i for i in played if kinds[i] == "CoupClosed"), None)
    if not played or close is None:
        raise NotFound(f"coup {coup} of table {name} is not closed", rule="unknown-coup")
    first = played[0]
    shuffle = max(i for i in range(first) if kinds[i] == "ShoeShuffled")
    cut = next((i for i in range(shuffle, first) if kinds[i] == "ShoeCut"), shuffle)
    taille = fields[shuffle]
    reveal = next((i for i in range(close, len(rows)) if kinds[i] == "ShoeSeedRevealed"
                   and fields[i]["taille"] == taille["taille"]), None)
    chosen = sorted({*range(shuffle, cut + 1), *range(first - 1, close + 1),
                     *([reveal] if reveal is not None else [])})
    proven = prove(writer, [rows[i] for i in chosen])
    shoe = {
        "taille": taille["taille"], "algorithm": taille["algorithm"], "decks": taille["decks"],
        "commitment": taille["commitment"],
        "contributions": [fields[i]["entropy"] for i in range(shuffle, cut)
                          if kinds[i] == "EntropyContributed"],
        "cut": fields[cut].get("position"),
        "seed": fields[reveal]["seed"] if reveal is not None else None,
    }
    return {
        "format": DOSSIER_FORMAT, "table": {"name": name, "id": str(table_id)}, "coup": coup,
        "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "shoe": shoe, "checkpoint": proven.checkpoint, "public_keys": proven.public_keys,
        "events": proven.events, "checkpoint_note": proven.note,
        "tlog_proofs": proven.tlog_proofs,
        "witnesses": proven.witnesses,
    }
