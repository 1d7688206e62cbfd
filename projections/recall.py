"""Game recall: each table's last coups, every step in order, for players, croupiers and disputes.

A coup's record starts at its first event (a bet, a stake or a banco for it, else the close of
betting) and is written when the coup closes: the stakes and bancos, the coverage (engaged
and returned stakes), every card with its shoe position and side (third cards marked), the
naturals shown, each hand's decision and who took it, the outcomes and points, the payouts
in pay order, the commission, the bank before and after, and each player's chips before and
after (the bank not included: it is shown apart). `steps` keeps every event of the coup as
recorded (type, version, time, actor, command id and fields). A correction recorded later
(a `ChipsAdjusted` whose reason names this table and the coup:
`domain.dispute.aggregate.correction_reason`) is added to the coup's `corrections`, with its
reason and who made it. A correction recorded at another table (a tournament's player moved
on) is the other table's event: it is shown by that coup only if it was recorded here.

The last `KEEP` coups of each table are kept (`view_recall`, one JSON document a coup).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast
from uuid import UUID

import msgspec

from domain.dispute.aggregate import corrected_coup
from domain.table.aggregate import Table
from infra.store.database import Database
from projections.table_fold import Before, Folded, TableFoldView
from projections.view import Event

KEEP = 20
_ENVELOPE = frozenset({"originator_id", "originator_version", "timestamp", "originator_topic"})


class Step(msgspec.Struct, frozen=True):
    version: int
    at: datetime
    event: str
    fields: dict[str, Any]


class CardLine(msgspec.Struct, frozen=True):
    side: str
    card: str
    position: int
    third: bool


class Decision(msgspec.Struct, frozen=True):
    side: str
    draw: bool
    actor: str


class StakeLine(msgspec.Struct, frozen=True):
    """A bet on a spot (house-banked games) or a stake on a tableau (against a player's bank)."""

    player: str
    on: str
    amount: int


class PayoutLine(msgspec.Struct, frozen=True):
    player: str
    staked: int
    net: int
    commission: int
    reason: str


class ChipsLine(msgspec.Struct, frozen=True):
    before: int
    after: int


class CorrectionLine(msgspec.Struct, frozen=True, kw_only=True):
    """Chips moved after the coup to correct it (an approved dispute)."""

    coup: int
    player: str
    delta: int
    reason: str
    actor: str
    version: int


class CoupRecall(msgspec.Struct, kw_only=True):
    table_id: str
    table: str
    variant: str
    coup: int
    taille: int
    closed_version: int
    banker: str | None
    bank_before: int
    bank_after: int
    shoe_after: str | None
    stakes: list[StakeLine]
    bancos: list[str]
    covered: list[StakeLine]
    returned: list[StakeLine]
    cards: list[CardLine]
    naturals: list[str]
    decisions: list[Decision]
    outcomes: dict[str, str]
    points: dict[str, int]
    payouts: list[PayoutLine]
    commission: int
    chips: dict[str, ChipsLine]
    steps: list[Step]
    corrections: list[CorrectionLine] = msgspec.field(default_factory=list)


class Draft(msgspec.Struct):
    """A coup being played: what was known when it started, and its steps so far."""

    coup: int
    taille: int
    banker: str | None
    bank_before: int
    chips_before: dict[str, int]
    steps: list[Step] = msgspec.field(default_factory=list)


class RecallMemo(msgspec.Struct):
    draft: Draft | None = None
    closed: list[CoupRecall] = msgspec.field(default_factory=list)
    corrections: list[CorrectionLine] = msgspec.field(default_factory=list)


class RecallView(TableFoldView[RecallMemo]):
    name = "recall"
    memo_type = RecallMemo
    tables = ("view_recall",)
    schema = (
        "CREATE TABLE IF NOT EXISTS {view_recall} ("
        " table_id TEXT NOT NULL, coup BIGINT NOT NULL, table_name TEXT NOT NULL,"
        " closed_version BIGINT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (table_id, coup))",
    )

    def observe(self, folded: Folded[RecallMemo], event: Event, before: Before | None) -> None:
        note(folded, event, before)

    def flush(self, cursor: Any, folded: Folded[RecallMemo]) -> None:
        memo = folded.memo
        if memo.closed:
            cursor.executemany(  # one round trip (psycopg pipelines it), not one a coup
                self.database.sql("INSERT INTO {view_recall} (table_id, coup, table_name,"
                                  " closed_version, doc) VALUES (?, ?, ?, ?, ?)"),
                [(record.table_id, record.coup, record.table, record.closed_version,
                  msgspec.json.encode(record).decode())
                 for record in memo.closed[-KEEP:]],  # the older ones go at once, below
            )
            self.database.execute(
                cursor, "DELETE FROM {view_recall} WHERE table_id = ? AND coup <= ?",
                (str(folded.table_id), memo.closed[-1].coup - KEEP),
            )
        memo.closed = []
        for line in memo.corrections:  # to the coup's record, if it is still kept
            key = (str(folded.table_id), line.coup)
            row = self.database.execute(
                cursor, "SELECT doc FROM {view_recall} WHERE table_id = ? AND coup = ?", key,
            ).fetchone()
            if row is not None:
                record = msgspec.json.decode(row["doc"], type=CoupRecall)
                record.corrections.append(line)
                self.database.execute(
                    cursor, "UPDATE {view_recall} SET doc = ? WHERE table_id = ? AND coup = ?",
                    (msgspec.json.encode(record).decode(), *key),
                )
        memo.corrections = []


def note(folded: Folded[RecallMemo], event: Event, before: Before | None) -> None:
    """What `event` (applied to `folded.table`) adds to the recall of its table."""
    if isinstance(event, Table.ChipsAdjusted):
        corrected = corrected_coup(event.reason)
        if corrected is not None and folded.table is not None and \
                corrected[0] == folded.table.name:
            folded.memo.corrections.append(CorrectionLine(
                coup=corrected[1], player=event.player, delta=event.delta, reason=event.reason,
                actor=event.actor, version=event.originator_version))
        return
    coup = getattr(event, "coup", None)
    if coup is None or before is None:
        return
    table = folded.table
    assert table is not None
    memo = folded.memo
    if memo.draft is None or memo.draft.coup != coup:
        memo.draft = Draft(coup, table.state.taille, before.banker, before.bank,
                           dict(before.chips))
    memo.draft.steps.append(step_of(event))
    if isinstance(event, Table.CoupClosed):
        memo.closed.append(close(folded.table_id, table, memo.draft))
        memo.draft = None


def recall_of(table_id: UUID, events: Iterable[Event]) -> list[CoupRecall]:
    """Every closed coup of a table, from its events in order (no view, no store)."""
    folded: Folded[RecallMemo] = Folded(table_id, None, RecallMemo())
    for event in events:
        before = Before.of(folded.table) if folded.table is not None else None
        folded.table = cast(Table, event.mutate(folded.table))
        note(folded, event, before)
    for coup in folded.memo.closed:
        coup.corrections = [c for c in folded.memo.corrections if c.coup == coup.coup]
    return folded.memo.closed


def step_of(event: Event) -> Step:
    fields = {k: v for k, v in event.__dict__.items() if k not in _ENVELOPE}
    return Step(event.originator_version, event.timestamp, type(event).__name__,
                msgspec.to_builtins(fields))


def close(table_id: UUID, table: Table, draft: Draft) -> CoupRecall:
    """The record of a coup from its steps, the table as it is after the coup closed."""
    record = CoupRecall(
        table_id=str(table_id), table=table.name, variant=table.state.variant.value,
        coup=draft.coup, taille=draft.taille, closed_version=draft.steps[-1].version,
        banker=draft.banker, bank_before=draft.bank_before, bank_after=0,
        shoe_after=table.state.banker, stakes=[], bancos=[], covered=[], returned=[], cards=[],
        naturals=[], decisions=[], outcomes={}, points={}, payouts=[], commission=0, chips={},
        steps=draft.steps,
    )
    for step in draft.steps:
        f = step.fields
        match step.event:
            case "BetPlaced":
                record.stakes.append(StakeLine(f["player"], f["spot"], f["amount"]))
            case "StakePlaced":
                record.stakes.append(StakeLine(f["player"], f["tableau"], f["amount"]))
            case "BancoCalled":
                record.bancos.append(f["player"])
            case "StakeCovered":
                record.covered.append(StakeLine(f["player"], f["tableau"], f["amount"]))
            case "StakeReturned":
                record.returned.append(StakeLine(f["player"], f["tableau"], f["amount"]))
            case "CardDealt" | "ThirdCardDrawn":
                record.cards.append(CardLine(f["side"], f["card"], f["position"],
                                             step.event == "ThirdCardDrawn"))
            case "NaturalShown":
                record.naturals.extend(f["sides"])
            case "ThirdCardAsked" | "HandStood":
                record.decisions.append(Decision(f["side"], step.event == "ThirdCardAsked",
                                                 f["actor"]))
            case "CoupSettled":
                record.outcomes, record.points = f["outcomes"], f["points"]
            case "PayoutMade":
                p = f["payout"]
                record.payouts.append(PayoutLine(p["player"], p["staked"], p["net"],
                                                 p["commission"], p["reason"]))
            case "CommissionTaken":
                record.commission = f["amount"]
            case "CoupClosed":
                record.bank_after = f["bank"]
    after = {seat.player: seat.chips for seat in table.state.seats}
    for player in sorted(draft.chips_before.keys() | after.keys()):
        record.chips[player] = ChipsLine(draft.chips_before.get(player, 0), after.get(player, 0))
    return record


def recall(database: Database, table_id: UUID, last: int) -> list[CoupRecall]:
    """The last `last` coups of a table, oldest first."""
    rows = database.read_all(
        "SELECT doc FROM {view_recall} WHERE table_id = ? ORDER BY coup DESC LIMIT ?",
        (str(table_id), last))
    return [msgspec.json.decode(row["doc"], type=CoupRecall) for row in reversed(rows)]
