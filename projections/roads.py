"""The scoreboards of a table (roads): bead road, big road, big eye boy, small road, cockroach pig.

The view (`view_roads`, one JSON document a table) keeps the results of the current taille's
coups, one per tableau (punto banco, chemin de fer and the family game have one, à deux
tableaux two: each tableau's own roads against the banker): the outcome, both points and
whether either hand's first two cards were a pair. A new shoe clears them, as the scoreboard
is wiped at every shuffle. The roads are drawn from those results on reading, by the
standard rules:

* bead road: every coup in order, ties included, six to a column;
* big road: banker and punter wins only; a win like the last one goes down the same column,
  the other one starts a new column; a tie is marked on the cell of the last win (ties
  before the first win on the first cell);
* the derived roads compare columns of the big road, each skipping `k` columns (big eye
  boy 1, small road 2, cockroach pig 3). For a big road entry in column `c`, row `r`: at
  the top of a new column (`r` = 0), red when columns `c-1` and `c-1-k` are as long, else
  blue; further down, blue when column `c-k` is exactly `r` long (it stopped just above
  this row), else red. A road starts at the entry in column `k`, row 1 (or, when column `k`
  holds one entry, at the top of column `k+1`). Its entries are laid out as the big road's:
  a new column when the colour changes.

Each road is given as logical columns (what the rules read) and as placed cells on a grid
six rows high: a column that meets the bottom, or a cell already taken, turns right (the
dragon's tail).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.utils import get_topic

from domain.game.coup import Outcome, Side, tableaux_of
from domain.game.settings import Variant
from domain.table.aggregate import Table
from infra.store.database import Database
from projections.view import Event, View

ROWS = 6
DERIVED = {"big_eye_boy": 1, "small_road": 2, "cockroach_pig": 3}


class Result(msgspec.Struct, frozen=True):
    """One coup on one tableau: who won, both points, and the pairs on the first two cards."""

    coup: int
    outcome: Outcome
    punter: int
    banker: int
    punter_pair: bool = False
    banker_pair: bool = False


class BigCell(msgspec.Struct, frozen=True):
    outcome: Outcome
    ties: int = 0


class Placed(msgspec.Struct, frozen=True):
    """A road's entry on the grid: its column and row, and what it shows."""

    column: int
    row: int
    mark: str
    ties: int = 0


class Road(msgspec.Struct, frozen=True):
    columns: list[list[str]]
    cells: list[Placed]


class Scoreboard(msgspec.Struct, frozen=True, kw_only=True):
    tableau: str
    bead: list[Result]
    big_road: list[list[BigCell]]
    big_cells: list[Placed]
    big_eye_boy: Road
    small_road: Road
    cockroach_pig: Road


class Roads(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    table: str
    variant: str
    taille: int
    boards: list[Scoreboard]


class RoadsDoc(msgspec.Struct, kw_only=True):
    """What the view stores for a table: its taille's results, and the current coup's cards."""

    table: str
    variant: str
    taille: int = 0
    results: dict[str, list[Result]] = msgspec.field(default_factory=dict)
    cards: dict[str, list[str]] = msgspec.field(default_factory=dict)


# --- the rules ---------------------------------------------------------------------------


def big_road(results: Sequence[Result]) -> list[list[BigCell]]:
    """The big road's columns: wins only, each tie marked on the cell of the win before it."""
    columns: list[list[BigCell]] = []
    leading_ties = 0
    for result in results:
        if result.outcome is Outcome.TIE:
            if columns:
                last = columns[-1][-1]
                columns[-1][-1] = BigCell(last.outcome, last.ties + 1)
            else:
                leading_ties += 1
            continue
        cell = BigCell(result.outcome, leading_ties if not columns else 0)
        if columns and columns[-1][0].outcome is result.outcome:
            columns[-1].append(cell)
        else:
            columns.append([cell])
    return columns


def derived_marks(lengths: Sequence[int], skip: int) -> list[str]:
    """A derived road's entries (`red`, `blue`), in order, from the big road's column lengths."""
    marks: list[str] = []
    for c, length in enumerate(lengths):
        for r in range(length):
            if r == 0 and c >= skip + 1:
                marks.append("red" if lengths[c - 1] == lengths[c - 1 - skip] else "blue")
            elif r >= 1 and c >= skip:
                marks.append("blue" if lengths[c - skip] == r else "red")
    return marks


def columns_of(marks: Sequence[str]) -> list[list[str]]:
    """Marks in columns: the same mark goes down, a different one starts a new column."""
    columns: list[list[str]] = []
    for mark in marks:
        if columns and columns[-1][0] == mark:
            columns[-1].append(mark)
        else:
            columns.append([mark])
    return columns


def place(columns: Sequence[Sequence[str]], rows: int = ROWS) -> list[tuple[int, int]]:
    """Grid positions of the entries of `columns`, in order. A column goes down until the
    bottom row or a taken cell, then turns right; the next column starts one to the right of
    where the last one started (further, while that top cell is taken)."""
    taken: set[tuple[int, int]] = set()
    positions: list[tuple[int, int]] = []
    start = -1
    for column in columns:
        start += 1
        while (start, 0) in taken:
            start += 1
        x, y, turned = start, 0, False
        for i in range(len(column)):
            if i > 0:
                if not turned and y + 1 < rows and (x, y + 1) not in taken:
                    y += 1
                else:
                    turned = True
                    x += 1
            taken.add((x, y))
            positions.append((x, y))
    return positions


def road(marks: Sequence[str]) -> Road:
    columns = columns_of(marks)
    flat = [mark for column in columns for mark in column]
    cells = [Placed(x, y, mark) for (x, y), mark in zip(place(columns), flat, strict=True)]
    return Road(columns, cells)


def scoreboard(tableau: str, results: Sequence[Result]) -> Scoreboard:
    big = big_road(results)
    flat = [cell for column in big for cell in column]
    big_cells = [Placed(x, y, cell.outcome.value, cell.ties)
                 for (x, y), cell in zip(place([[c.outcome.value for c in col] for col in big]),
                                         flat, strict=True)]
    lengths = [len(column) for column in big]
    derived = {name: road(derived_marks(lengths, skip)) for name, skip in DERIVED.items()}
    return Scoreboard(tableau=tableau, bead=list(results), big_road=big, big_cells=big_cells,
                      **derived)


# --- the view ----------------------------------------------------------------------------


class RoadsView(View):
    name = "roads"
    topics = tuple(get_topic(cls) for cls in (Table.Opened, Table.ShoeShuffled,
                                              Table.CardDealt, Table.CoupSettled))
    tables = ("view_roads",)
    schema = (
        "CREATE TABLE IF NOT EXISTS {view_roads} ("
        " table_id TEXT PRIMARY KEY, table_name TEXT NOT NULL, doc TEXT NOT NULL)",
    )

    def apply(self, cursor: Any, events: Sequence[Event]) -> None:
        docs: dict[UUID, RoadsDoc] = {}
        for event in events:
            table_id = event.originator_id
            if isinstance(event, Table.Opened):
                docs[table_id] = RoadsDoc(table=event.name, variant=event.settings.variant.value)
                continue
            doc = docs.get(table_id) or self._load(cursor, table_id)
            docs[table_id] = doc
            observe(doc, event)
        for table_id, doc in docs.items():
            self.database.execute(
                cursor,
                "INSERT INTO {view_roads} (table_id, table_name, doc) VALUES (?, ?, ?)"
                " ON CONFLICT (table_id) DO UPDATE SET table_name = excluded.table_name,"
                " doc = excluded.doc",
                (str(table_id), doc.table, msgspec.json.encode(doc).decode()),
            )

    def _load(self, cursor: Any, table_id: UUID) -> RoadsDoc:
        row = self.database.execute(
            cursor, "SELECT doc FROM {view_roads} WHERE table_id = ?", (str(table_id),)
        ).fetchone()
        if row is None:
            raise LookupError("no table opened before this event")
        return msgspec.json.decode(row["doc"], type=RoadsDoc)


def observe(doc: RoadsDoc, event: Event) -> None:
    """What a shuffle, a card or a settlement changes on a table's scoreboards."""
    if isinstance(event, Table.ShoeShuffled):
        doc.taille, doc.results, doc.cards = event.taille, {}, {}
    elif isinstance(event, Table.CardDealt):
        doc.cards.setdefault(event.side.value, []).append(event.card)
    elif isinstance(event, Table.CoupSettled):
        banker_pair = is_pair(doc.cards.get(Side.BANKER.value, []))
        for side, outcome in event.outcomes.items():
            doc.results.setdefault(side.value, []).append(Result(
                coup=event.coup, outcome=outcome, punter=event.points[side],
                banker=event.points[Side.BANKER],
                punter_pair=is_pair(doc.cards.get(side.value, [])), banker_pair=banker_pair))
        doc.cards = {}


def is_pair(cards: Sequence[str]) -> bool:
    """The first two cards of a hand share a rank."""
    return len(cards) >= 2 and cards[0][0] == cards[1][0]


def roads(database: Database, table_id: UUID) -> Roads | None:
    """A table's scoreboards for its current taille (None: no such table)."""
    row = database.read_one("SELECT doc FROM {view_roads} WHERE table_id = ?",
                            (str(table_id),))
    if row is None:
        return None
    doc = msgspec.json.decode(row["doc"], type=RoadsDoc)
    tableaux = [side.value for side in tableaux_of(Variant(doc.variant))]
    return Roads(table_id=str(table_id), table=doc.table, variant=doc.variant,
                 taille=doc.taille,
                 boards=[scoreboard(t, doc.results.get(t, [])) for t in tableaux])
