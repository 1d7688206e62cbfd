"""A player's receipts: for each coup they played, a small dossier of their own part in it.

    receipts(writer, player, since) -> the player's file: their coups closed since then
                                       (GET /me/receipts, its download: one an evening)

Format `sabot-receipts-v1` (docs/audit.md, "Your receipts, checked on your phone"):

    {"format": "sabot-receipts-v1", "player": name, "created": time,
     "keys": {"operator": [{"key", "public_key"}], "witnesses": [{"name", "key", "public_key"}]},
     "receipts": [receipt, ...]}

and each receipt, format `sabot-receipt-v1`:

    {"format": "sabot-receipt-v1", "player": name, "table": {"name", "id"}, "coup": N,
     "mine": {"bets": [{"spot", "amount"}], "payout": {"staked", "net", "commission"} | null},
     "shoe": {"taille", "algorithm", "decks", "commitment", "contributions", "cut", "seed"},
     "checkpoint": {...}, "public_keys": [...], "checkpoint_note": the C2SP checkpoint note
     with the witnesses' co-signature lines, "witnesses": [{"name", "key", "public_key"}],
     "events": [event records, `infra.audit.proofs`]}

The events are the table's, in version order: the shuffle of the coup's taille through its
cut (the commitment, the entropy contributions, the cut), the player's own events of the coup
(bet, stake, banco, coverage, payout), the coup's cards and its settlement, and the seed's
reveal once the taille is over: each with its RFC 9162 inclusion proof in the checkpoint.
`mine` and `shoe` only restate what the events say, and are checked against them
(`infra.audit.offline_check.receipts`, which the page's `receipts.js` mirrors).

`keys` are the installation's: the store's key, and the witnesses who co-signed the latest
checkpoint; the player's page keeps the first it is given and holds every later receipt and
checkpoint to them.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from eventsourcing.utils import get_topic

from domain.table.aggregate import Table
from infra.audit.offline_check import readable
from infra.audit.offline_check.receipts import OWN, RECEIPT_FORMAT, RECEIPTS_FORMAT, mine, player_of
from infra.audit.proofs import prove, rows_of
from infra.store.ledger import StoredRow
from infra.store.routing import holding

PLAY = ("CardDealt", "ThirdCardDrawn", "CoupSettled")


def tables_of(writer: Any, player: str) -> list[UUID]:
    """The tables `player` was seated at, in the order they first sat."""
    database = writer.recorder.database
    with database.transaction(write=False) as cursor:
        rows = database.execute(
            cursor, "SELECT originator_id, state FROM {stored_events} WHERE topic = ?"
            " ORDER BY {nid}", (get_topic(Table.PlayerSeated),)).fetchall()
    seated = [database.from_db_id(row["originator_id"]) for row in rows
              if readable(bytes(row["state"])).get("player") == player]
    return list(dict.fromkeys(seated))


class _Coup:
    """The rows of one receipt, and what they say of the player's part."""

    def __init__(self, name: str, table_id: UUID, coup: int, rows: list[StoredRow],
                 shoe: dict[str, Any], part: dict[str, Any]) -> None:
        self.name, self.table_id, self.coup = name, table_id, coup
        self.rows, self.shoe, self.mine = rows, shoe, part


def _coups(rows: list[StoredRow], player: str, since: datetime | None) -> Iterator[_Coup]:
    """Each coup of one table's `rows` that `player` had a part in, closed `since` then (the
    table's events indexed once: an evening's table is read in linear time)."""
    kinds = [row.topic.rsplit(".", 1)[-1] for row in rows]
    fields = [readable(row.state) for row in rows]
    name = fields[0].get("name", str(rows[0].originator_id))
    by_coup: dict[Any, list[int]] = {}
    at: dict[str, list[int]] = {kind: [] for kind in ("ShoeShuffled", "ShoeCut",
                                                     "EntropyContributed", "CoupClosed")}
    reveals: dict[Any, int] = {}
    for i, (kind, f) in enumerate(zip(kinds, fields, strict=True)):
        if "coup" in f:
            by_coup.setdefault(f["coup"], []).append(i)
        if kind in at:
            at[kind].append(i)
        elif kind == "ShoeSeedRevealed":
            reveals.setdefault(f["taille"], i)
    for close in at["CoupClosed"]:
        if since is not None and _moment(fields[close]["timestamp"]) < since:
            continue
        coup = fields[close]["coup"]
        played = [i for i in by_coup[coup] if i <= close]
        own = [i for i in played if kinds[i] in OWN and player_of(kinds[i], fields[i]) == player]
        if not own:
            continue
        before = bisect_left(at["ShoeShuffled"], played[0])
        if not before:
            continue  # no shoe: no coup was dealt from it
        shuffle = at["ShoeShuffled"][before - 1]
        cuts = at["ShoeCut"][bisect_right(at["ShoeCut"], shuffle):]
        cut = cuts[0] if cuts and cuts[0] < played[0] else shuffle
        taille = fields[shuffle]
        reveal = reveals.get(taille["taille"])
        contributions = at["EntropyContributed"][bisect_right(at["EntropyContributed"], shuffle):
                                                 bisect_left(at["EntropyContributed"], cut)]
        cards = [i for i in played if kinds[i] in PLAY]
        chosen = sorted({shuffle, *contributions, cut, *own, *cards,
                         *([reveal] if reveal is not None else [])})
        shoe = {"taille": taille["taille"], "algorithm": taille["algorithm"],
                "decks": taille["decks"], "commitment": taille["commitment"],
                "contributions": [fields[i]["entropy"] for i in contributions],
                "cut": fields[cut].get("position"),
                "seed": fields[reveal]["seed"] if reveal is not None else None}
        yield _Coup(name, rows[0].originator_id, coup, [rows[i] for i in chosen], shoe,
                    mine([(kinds[i], fields[i]) for i in own]))


def receipts(writer: Any, player: str, since: datetime | None = None) -> dict[str, Any]:
    """The player's receipts, one a coup they had a part in (closed `since` then), every
    table they sat at; the events of all of them proved at once, against one checkpoint a
    store (home)."""
    by_home: dict[int, tuple[Any, list[_Coup]]] = {}
    for table_id in tables_of(writer, player):
        home = holding(writer, table_id)
        coups = list(_coups(rows_of(home.recorder.database, table_id), player, since))
        by_home.setdefault(id(home.recorder), (home, []))[1].extend(coups)
    made: list[dict[str, Any]] = []
    keys: dict[str, Any] = {"operator": [], "witnesses": []}
    for home, coups in by_home.values():
        if not coups:
            continue
        proven = prove(home, [row for coup in coups for row in coup.rows])
        keys["operator"] = _union(keys["operator"], proven.public_keys)
        keys["witnesses"] = _union(keys["witnesses"], proven.witnesses)
        note = proven.tlog_proofs[0].partition("\n\n")[2] if proven.tlog_proofs else proven.note
        start = 0
        for coup in coups:
            made.append({
                "format": RECEIPT_FORMAT, "player": player,
                "table": {"name": coup.name, "id": str(coup.table_id)}, "coup": coup.coup,
                "mine": coup.mine, "shoe": coup.shoe, "checkpoint": proven.checkpoint,
                "public_keys": proven.public_keys, "checkpoint_note": note,
                "witnesses": proven.witnesses,
                "events": proven.events[start:start + len(coup.rows)],
            })
            start += len(coup.rows)
    return {"format": RECEIPTS_FORMAT, "player": player,
            "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
            "keys": keys, "receipts": made}


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _union(kept: list[dict[str, str]], more: list[dict[str, str]]) -> list[dict[str, str]]:
    return kept + [k for k in more if k not in kept]
