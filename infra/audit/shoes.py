"""Re-dealing revealed shoes: every card a table recorded must be the one its shoe held.

An extra check for `infra.audit.verify.verify` (`sabot audit verify` runs it). For every table
stream and every taille whose `ShoeShuffled` was followed by a `ShoeSeedRevealed`:

1. the revealed seed's SHA-256 must be the commitment published at the shuffle;
2. the shoe's order is recomputed with `domain.game.shoe.order` from the seed, the recorded
   `EntropyContributed` events (in order), the decks and the `ShoeCut` position;
3. every `CardBurned`, `CardDealt` and `ThirdCardDrawn` must hold the card of that order at
   its recorded `position`, and the positions must run 0, 1, 2... without a gap.

The first mismatch of a taille is reported as a `Finding` (table, taille, position, the
expected card and the recorded one), which makes the audit fail. Physical shoes have no
seed and are skipped; a taille whose seed is not revealed yet (being played, or just over)
cannot be checked and is listed as pending, which is not a failure.

`audit_events(events)` does the work on domain events of any number of streams (in each
stream's version order), so it can be tested on a hand-made history; `ShoeAudit` is the
callable `verify` takes, reading the table events it needs from a `Store`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import StoredEvent
from eventsourcing.utils import get_topic

from domain.errors import DomainError
from domain.game.cards import Card
from domain.game.shoe import order
from domain.table.aggregate import Table
from infra.audit.report import Finding
from infra.store.opening import Store

CHECK_NAME = "shoes"
SHOE_MISMATCH = "shoe mismatch"
PAGE = 5000

_CARD_EVENTS = (Table.CardBurned, Table.CardDealt, Table.ThirdCardDrawn)
_READ = (Table.Opened, Table.ShoeShuffled, Table.EntropyContributed, Table.ShoeCut,
         *_CARD_EVENTS, Table.ShoeSeedRevealed)  # what `audit_events` looks at
_TOPICS = tuple(get_topic(kind) for kind in _READ)
TABLE_EVENTS_SQL = (
    "SELECT {nid} AS n, originator_id, originator_version, topic, state FROM {stored_events}"
    f" WHERE {{nid}} > ? AND topic IN ({', '.join('?' * len(_TOPICS))}) ORDER BY {{nid}}"
    " LIMIT ?"
)


class Taille(msgspec.Struct, frozen=True, kw_only=True):
    """A taille of a table, named for the report."""

    table_id: UUID
    table: str
    taille: int
    physical: bool = False

    def label(self) -> str:
        return f"table {self.table or self.table_id}, taille {self.taille}"


class Mismatch(msgspec.Struct, frozen=True, kw_only=True):
    """The first card of a taille that is not the one its shoe held."""

    taille: Taille
    version: int
    position: int | None
    expected: str
    recorded: str
    detail: str

    def finding(self) -> Finding:
        return Finding(
            problem=SHOE_MISMATCH,
            detail=f"{self.taille.label()}: {self.detail}",
            originator_id=self.taille.table_id,
            originator_version=self.version,
            check=CHECK_NAME,
        )


class ShoeAuditResult(msgspec.Struct, kw_only=True):
    checked: list[Taille] = msgspec.field(default_factory=list)
    pending: list[Taille] = msgspec.field(default_factory=list)
    physical: list[Taille] = msgspec.field(default_factory=list)
    mismatches: list[Mismatch] = msgspec.field(default_factory=list)
    cards: int = 0

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def findings(self) -> list[Finding]:
        return [m.finding() for m in self.mismatches]


class _Shoe:
    """What the events of one taille recorded, collected until its seed is revealed."""

    def __init__(self, taille: Taille, shuffled: Any) -> None:
        self.taille = taille
        self.decks: int = shuffled.decks
        self.algorithm: str = shuffled.algorithm
        self.commitment: str = shuffled.commitment
        self.contributions: list[str] = []
        self.cut: int | None = None
        self.cards: list[tuple[int, int, Card]] = []  # (version, position, card)

    def check(self, seed_hex: str, version: int, result: ShoeAuditResult) -> None:
        mismatch = self._first_mismatch(seed_hex, version)
        result.cards += len(self.cards)
        if mismatch is None:
            result.checked.append(self.taille)
        else:
            result.mismatches.append(mismatch)

    def _first_mismatch(self, seed_hex: str, version: int) -> Mismatch | None:
        def wrong(detail: str, *, at: int = version, position: int | None = None,
                  expected: str = "", recorded: str = "") -> Mismatch:
            return Mismatch(taille=self.taille, version=at, position=position,
                            expected=expected, recorded=recorded, detail=detail)

        try:
            seed = bytes.fromhex(seed_hex)
        except ValueError:
            return wrong(f"the revealed seed {seed_hex[:20]!r} is not hexadecimal")
        digest = hashlib.sha256(seed).hexdigest()
        if digest != self.commitment:
            return wrong("the revealed seed does not match the commitment: SHA-256(seed) is "
                         f"{digest}, the shoe committed to {self.commitment}",
                         expected=self.commitment, recorded=digest)
        if self.cut is None:
            return wrong("the seed was revealed but the shoe was never cut")
        try:
            contributions = [bytes.fromhex(text) for text in self.contributions]
            cards = order(seed, contributions, decks=self.decks, cut=self.cut,
                          algorithm=self.algorithm)
        except (DomainError, ValueError) as error:
            return wrong(f"the shoe's order cannot be recomputed: {error}")
        for expected_position, (at, position, recorded) in enumerate(self.cards):
            if position != expected_position:
                return wrong(f"a card recorded at position {position} is card number "
                             f"{expected_position} out of the shoe", at=at, position=position,
                             expected=str(expected_position), recorded=str(position))
            if position >= len(cards):
                return wrong(f"position {position} is beyond the shoe's {len(cards)} cards",
                             at=at, position=position, recorded=recorded)
            if cards[position] != recorded:
                return wrong(f"position {position}: the shoe held {cards[position]}, the "
                             f"record says {recorded}", at=at, position=position,
                             expected=cards[position], recorded=recorded)
        return None


def audit_events(events: Iterable[Any]) -> ShoeAuditResult:
    """Check the shoes of the Table events given (each stream's events in version order)."""
    result = ShoeAuditResult()
    names: dict[UUID, str] = {}
    open_shoes: dict[UUID, _Shoe] = {}
    for event in events:
        table_id: UUID = event.originator_id
        version: int = event.originator_version
        if isinstance(event, Table.Opened):
            names[table_id] = event.name
        elif isinstance(event, Table.ShoeShuffled):
            taille = Taille(table_id=table_id, table=names.get(table_id, ""),
                            taille=event.taille, physical=event.physical)
            previous = open_shoes.pop(table_id, None)
            if previous is not None and not previous.taille.physical:
                result.pending.append(previous.taille)  # reshuffled without a reveal
            if event.physical:
                result.physical.append(taille)
            open_shoes[table_id] = _Shoe(taille, event)
        else:
            shoe = open_shoes.get(table_id)
            if shoe is None or shoe.taille.physical:
                continue
            if isinstance(event, Table.EntropyContributed):
                shoe.contributions.append(event.entropy)
            elif isinstance(event, Table.ShoeCut):
                shoe.cut = event.position
            elif isinstance(event, _CARD_EVENTS):
                shoe.cards.append((version, event.position, event.card))
            elif isinstance(event, Table.ShoeSeedRevealed):
                del open_shoes[table_id]
                if event.taille != shoe.taille.taille:
                    result.mismatches.append(Mismatch(
                        taille=shoe.taille, version=version, position=None,
                        expected=str(shoe.taille.taille), recorded=str(event.taille),
                        detail=f"the seed revealed is said to be taille {event.taille}'s"))
                    continue
                shoe.check(event.seed, version, result)
    result.pending.extend(s.taille for s in open_shoes.values() if not s.taille.physical)
    return result


def table_events(store: Store, page: int = PAGE) -> Iterator[Any]:
    """The Table events the shoe audit reads (of the kinds `_READ`), decoded, in
    notification order; read through `store.database`, so within `verify` from the snapshot
    it verified."""
    database = store.database
    after = 0
    while True:
        with database.transaction(write=False) as cursor:
            rows = database.execute(cursor, TABLE_EVENTS_SQL,
                                    (after, *_TOPICS, page)).fetchall()
        for row in rows:
            yield store.mapper.to_domain_event(StoredEvent(
                originator_id=database.from_db_id(row["originator_id"]),
                originator_version=row["originator_version"], topic=row["topic"],
                state=bytes(row["state"])))
        if len(rows) < page:
            return
        after = rows[-1]["n"]


class ShoeAudit:
    """The check `verify` runs: a fresh result each call, kept for the report's pending list."""

    name = CHECK_NAME

    def __init__(self) -> None:
        self.result = ShoeAuditResult()

    def __call__(self, store: Store) -> list[Finding]:
        self.result = audit_events(table_events(store))
        return self.result.findings()

    def summary(self) -> list[str]:
        """Lines for the report: what was checked, what waits for its seed."""
        r = self.result
        lines = [f"shoes:   {len(r.checked)} revealed taille(s) re-dealt, {r.cards} cards; "
                 f"{len(r.physical)} physical skipped; {len(r.pending)} pending"]
        lines.extend(f"PENDING: {t.label()}: seed not revealed yet" for t in r.pending)
        return lines
