"""Chemin-de-fer rotation: who holds the shoe, to whom it passes, who may banco first.

For each table (`view_rotation`, one JSON document a table): the banker and the bank; when
nobody holds it, the player the shoe is offered to; `order`, the seated players in the
direction of play after the banker (after the player offered the shoe, that player first,
when there is no banker): the order in which the shoe will pass when the punters win; the
banco suivi (the punter who lost a banco and may call it again first); a passed hand: who
passed it, and the player the shoe returns to if whoever took it loses (RULES.md, 000); à
deux tableaux, who holds the hand on each tableau (`hands`). Every figure is the table's own
state after its last event, as the rules made it.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import msgspec

from domain.table.aggregate import Table
from infra.store.database import Database
from projections.table_fold import Before, Folded, TableFoldView
from projections.view import Event


class PassedHand(msgspec.Struct, frozen=True):
    by: str | None
    returns_to: str


class Rotation(msgspec.Struct, kw_only=True):
    table_id: str
    table: str
    variant: str
    phase: str
    coups: int
    banker: str | None
    bank: int
    offered_to: str | None
    order: list[str]
    banco_suivi: str | None
    passed_hand: PassedHand | None
    hands: dict[str, str]
    seated: list[str]


class RotationMemo(msgspec.Struct):
    passed_by: str | None = None


class RotationView(TableFoldView[RotationMemo]):
    name = "rotation"
    memo_type = RotationMemo
    tables = ("view_rotation",)
    schema = (
        "CREATE TABLE IF NOT EXISTS {view_rotation} ("
        " table_id TEXT PRIMARY KEY, table_name TEXT NOT NULL, doc TEXT NOT NULL)",
    )

    def observe(self, folded: Folded[RotationMemo], event: Event,
                before: Before | None) -> None:
        assert folded.table is not None
        if isinstance(event, Table.BankPassed):
            folded.memo.passed_by = event.player
        if folded.table.state.passed_hand_returns_to is None:
            folded.memo.passed_by = None

    def flush(self, cursor: Any, folded: Folded[RotationMemo]) -> None:
        assert folded.table is not None
        doc = rotation_of(folded.table_id, folded.table, folded.memo)
        self.database.execute(
            cursor,
            "INSERT INTO {view_rotation} (table_id, table_name, doc) VALUES (?, ?, ?)"
            " ON CONFLICT (table_id) DO UPDATE SET table_name = excluded.table_name,"
            " doc = excluded.doc",
            (doc.table_id, doc.table, msgspec.json.encode(doc).decode()),
        )


def rotation_of(table_id: UUID, table: Table, memo: RotationMemo) -> Rotation:
    s = table.state
    if s.banker is not None:
        order = s.rotation_after(s.banker)
    elif s.bank_offered_to is not None:
        order = [s.bank_offered_to, *s.rotation_after(s.bank_offered_to)]
    else:
        order = s.seated()
    returns_to = s.passed_hand_returns_to
    return Rotation(
        table_id=str(table_id), table=table.name, variant=s.variant.value, phase=s.phase.value,
        coups=s.coup_number, banker=s.banker, bank=s.bank, offered_to=s.bank_offered_to,
        order=[p for p in order if p != s.banker], banco_suivi=s.banco_suivi,
        passed_hand=PassedHand(memo.passed_by, returns_to) if returns_to else None,
        hands={side.value: player for side, player in s.hand_holders.items()},
        seated=s.seated(),
    )


def rotation(database: Database, table_id: UUID) -> Rotation | None:
    row = database.read_one("SELECT doc FROM {view_rotation} WHERE table_id = ?",
                            (str(table_id),))
    return None if row is None else msgspec.json.decode(row["doc"], type=Rotation)


def rotations(database: Database) -> list[Rotation]:
    """Every table's rotation document, by table name (the lobby's list of tables)."""
    rows = database.read_all("SELECT doc FROM {view_rotation} ORDER BY table_name")
    return [msgspec.json.decode(row["doc"], type=Rotation) for row in rows]
