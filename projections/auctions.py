"""Banks held and the auctions that gave them: from each award to the bank's end.

One row of `view_auctions` per bank (a table's banks numbered from 1): who was awarded it,
for how much and how (`Table.BankAwarded.how`: auction, lot, taken when the shoe was
offered...), the taille and coup it started at, the coups it was held, the largest it grew
to, and how it ended:

* `lost`: the punters won the coup (chemin de fer: the shoe passes), or the bank was broken;
* `retired`: the banker passed the hand, taking the bank (`BankPassed`);
* `taille-end`: the taille ended with the bank still standing (à deux tableaux);
* none yet: it is still held.

`final_bank` is the bank when it ended (what the banker took back, 0 when broken).

A bank won at auction names its `BankAuction` (the auction of that table, taille and coup);
`view_bank_auctions` keeps each auction's minimum, its bids in order and its winner, and
`banks_held` joins them in.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.auction.aggregate import BankAuction
from domain.game.coup import Outcome
from domain.table.aggregate import Table
from infra.store.database import Database
from projections.table_fold import TABLE_TOPICS, Before, Folded, TableFoldView, event_topics
from projections.view import Event


class Bid(msgspec.Struct, frozen=True):
    player: str
    amount: int


class Auction(msgspec.Struct, kw_only=True):
    auction_id: str
    table_id: str
    taille: int
    after_coup: int
    minimum: int
    bids: list[Bid] = msgspec.field(default_factory=list)
    winner: Bid | None = None


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
    auction_id: str | None = None
    auction: Auction | None = None


class AuctionsMemo(msgspec.Struct):
    banks: int = 0
    current: BankHeld | None = None
    punters_won: bool = False
    ended: list[BankHeld] = msgspec.field(default_factory=list)


class AuctionsView(TableFoldView[AuctionsMemo]):
    name = "auctions"
    topics = TABLE_TOPICS + event_topics(BankAuction)
    memo_type = AuctionsMemo
    tables = ("view_auctions", "view_bank_auctions")
    schema = (
        "CREATE TABLE IF NOT EXISTS {view_auctions} ("
        " table_id TEXT NOT NULL, number BIGINT NOT NULL, table_name TEXT NOT NULL,"
        " doc TEXT NOT NULL, PRIMARY KEY (table_id, number))",
        "CREATE TABLE IF NOT EXISTS {view_bank_auctions} ("
        " auction_id TEXT PRIMARY KEY, table_id TEXT NOT NULL, doc TEXT NOT NULL)",
    )

    def observe(self, folded: Folded[AuctionsMemo], event: Event,
                before: Before | None) -> None:
        memo, table = folded.memo, folded.table
        assert table is not None
        held = memo.current
        match event:
            case Table.BankAwarded(player=player, amount=amount, how=how):
                s = table.state
                memo.banks += 1
                auction_id = BankAuction.create_id(folded.table_id, s.taille, s.coup_number)
                memo.current = BankHeld(
                    table_id=str(folded.table_id), table=table.name,
                    tournament=table.tournament, number=memo.banks, player=player,
                    amount=amount, how=how, taille=s.taille, from_coup=s.coup_number + 1,
                    largest=amount, auction_id=str(auction_id) if how == "auction" else None,
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
                    passes = table.state.rules.passing.shoe_passes
                    lost = bank <= 0 or (passes and memo.punters_won)
                    self._end(memo, held, "lost" if lost else "taille-end", bank)

    @staticmethod
    def _end(memo: AuctionsMemo, held: BankHeld, how: str, bank: int) -> None:
        held.ended, held.final_bank = how, bank
        memo.ended.append(held)
        memo.current = None

    def observe_other(self, cursor: Any, event: Event) -> None:
        """A bank auction's opening, bids and award, kept as one row an auction."""
        auction_id = str(event.originator_id)
        match event:
            case BankAuction.Opened():
                auction = Auction(auction_id=auction_id, table_id=str(event.table_id),
                                  taille=event.taille, after_coup=event.after_coup,
                                  minimum=event.minimum)
            case BankAuction.BidPlaced(player=player, amount=amount):
                auction = self._auction(cursor, auction_id)
                auction.bids.append(Bid(player, amount))
            case BankAuction.BankAwarded(player=player, amount=amount):
                auction = self._auction(cursor, auction_id)
                auction.winner = Bid(player, amount)
            case _:
                super().observe_other(cursor, event)
                return
        self.database.execute(
            cursor,
            "INSERT INTO {view_bank_auctions} (auction_id, table_id, doc) VALUES (?, ?, ?)"
            " ON CONFLICT (auction_id) DO UPDATE SET doc = excluded.doc",
            (auction_id, auction.table_id, msgspec.json.encode(auction).decode()),
        )

    def _auction(self, cursor: Any, auction_id: str) -> Auction:
        row = self.database.execute(
            cursor, "SELECT doc FROM {view_bank_auctions} WHERE auction_id = ?", (auction_id,)
        ).fetchone()
        return msgspec.json.decode(row["doc"], type=Auction)

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
    """Every bank held, by table name then order, with its auction when it was auctioned;
    of one table when `table_id` is given."""
    where = "" if table_id is None else " WHERE table_id = ?"
    params = () if table_id is None else (table_id,)
    with database.transaction(write=False) as cursor:
        rows = database.execute(
            cursor, "SELECT doc FROM {view_auctions}" + where + " ORDER BY table_name, number",
            params,
        ).fetchall()
        auctions = database.execute(
            cursor, "SELECT auction_id, doc FROM {view_bank_auctions}" + where, params
        ).fetchall()
    found = {row["auction_id"]: msgspec.json.decode(row["doc"], type=Auction)
             for row in auctions}
    banks = [msgspec.json.decode(row["doc"], type=BankHeld) for row in rows]
    for bank in banks:
        bank.auction = found.get(bank.auction_id or "")
    return banks
