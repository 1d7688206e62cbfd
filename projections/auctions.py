"""Banks held: every bank from its award to its end, until a BankAuction aggregate exists.

One row of `view_auctions` per bank (a table's banks numbered from 1): who was awarded it,
for how much and how (`BankAwarded.how`: auction, lot, taking the shoe...), the taille and
coup it started at, the coups it was held, the largest it grew to, and how it ended:

* `lost`: the punters won the coup (chemin de fer: the shoe passes), or the bank was broken;
* `retired`: the banker passed the hand, taking the bank (`BankPassed`);
* `taille-end`: the taille ended with the bank still standing (à deux tableaux);
* none yet: it is still held.

`final_bank` is the bank when it ended (what the banker took back, 0 when broken).
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.coup import Outcome
from domain.settings import Variant
from domain.table_aggregate import Table
from infra.database import Database
from projections.table_fold import Before, Folded, TableFoldView
from projections.view import Event


class BankHeld(msgspec.Struct, kw_only=True):
    table_id: str
    table: str
    tournament: str | None
    number: int
    player: str
    amount: int
    how: str
    taille: int
    from_coup: int
    coups: int = 0
    largest: int = 0
    ended: str | None = None
    final_bank: int | None = None


class AuctionsMemo(msgspec.Struct):
    banks: int = 0
    current: BankHeld | None = None
    punters_won: bool = False
    ended: list[BankHeld] = msgspec.field(default_factory=list)


class AuctionsView(TableFoldView[AuctionsMemo]):
    name = "auctions"
    memo_type = AuctionsMemo
    tables = ("view_auctions",)
    schema = (
        "CREATE TABLE IF NOT EXISTS {view_auctions} ("
        " table_id TEXT NOT NULL, number BIGINT NOT NULL, table_name TEXT NOT NULL,"
        " doc TEXT NOT NULL, PRIMARY KEY (table_id, number))",
    )

    def observe(self, folded: Folded[AuctionsMemo], event: Event,
                before: Before | None) -> None:
        memo, table = folded.memo, folded.table
        assert table is not None
        held = memo.current
        match event:
            case Table.BankAwarded(player=player, amount=amount, how=how):
                memo.banks += 1
                memo.current = BankHeld(
                    table_id=str(folded.table_id), table=table.name,
                    tournament=table.tournament, number=memo.banks, player=player,
                    amount=amount, how=how, taille=table.state.taille,
                    from_coup=table.state.coup_number + 1, largest=amount,
                )
            case Table.BankPassed(amount=amount) if held is not None:
                self._end(memo, held, "retired", amount)
            case Table.CoupSettled(outcomes=outcomes):
                memo.punters_won = any(o is not Outcome.BANKER and o is not Outcome.TIE
                                       for o in outcomes.values())
            case Table.CoupClosed(banker=banker, bank=bank) if held is not None:
                if banker == held.player:
                    held.coups += 1
                    held.largest = max(held.largest, bank)
                if table.state.banker != held.player:
                    chemin = table.state.variant is Variant.CHEMIN_DE_FER
                    lost = bank <= 0 or (chemin and memo.punters_won)
                    self._end(memo, held, "lost" if lost else "taille-end", bank)

    @staticmethod
    def _end(memo: AuctionsMemo, held: BankHeld, how: str, bank: int) -> None:
        held.ended, held.final_bank = how, bank
        memo.ended.append(held)
        memo.current = None

    def flush(self, cursor: Any, folded: Folded[AuctionsMemo]) -> None:
        memo = folded.memo
        for held in [*memo.ended, *([memo.current] if memo.current else [])]:
            self.database.execute(
                cursor,
                "INSERT INTO {view_auctions} (table_id, number, table_name, doc)"
                " VALUES (?, ?, ?, ?) ON CONFLICT (table_id, number) DO UPDATE SET"
                " doc = excluded.doc",
                (held.table_id, held.number, held.table, msgspec.json.encode(held).decode()),
            )
        memo.ended = []


def banks_held(database: Database, *, table_id: str | None = None) -> list[BankHeld]:
    """Every bank held, by table name then order; of one table when `table_id` is given."""
    where = "" if table_id is None else " WHERE table_id = ?"
    with database.transaction(write=False) as cursor:
        rows = database.execute(
            cursor,
            "SELECT doc FROM {view_auctions}" + where + " ORDER BY table_name, number",
            () if table_id is None else (table_id,),
        ).fetchall()
    return [msgspec.json.decode(row["doc"], type=BankHeld) for row in rows]
