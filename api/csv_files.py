"""Rows as CSV files: a tournament's results and standings, for a spreadsheet or the club's
records, as `Accept: text/csv` over HTTP and `--csv` on the command line.

One column a field of the row's struct, in the order given, headed by
the field's name; RFC 4180 (comma, CRLF, quotes where needed); a list is its items joined by
a space, a missing value an empty cell. The same rows as the JSON, so a CSV reader gets back
the JSON's values as text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import msgspec
from litestar import Request, Response
from litestar.datastructures import ResponseHeader

from projections.standings import Standing

CSV = "text/csv"
RESULT_COLUMNS = ("position", "tied", "player", "prize")
"""A result's columns (`infra.services.tournaments.Position`), the position first."""
STANDING_COLUMNS = Standing.__struct_fields__
"""A standing's columns: every field of `projections.standings.Standing`, in its order."""


def as_csv(rows: Sequence[msgspec.Struct], columns: Sequence[str]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(getattr(row, column)) for column in columns])
    return out.getvalue()


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(str(item) for item in value)
    return str(value)


def wants_csv(request: Request[Any, Any, Any]) -> bool:
    """Whether the caller's `Accept` prefers CSV to JSON (no `Accept`: JSON)."""
    return request.accept.best_match(["application/json", CSV],
                                     default="application/json") == CSV


def csv_response(rows: Sequence[msgspec.Struct], columns: Sequence[str]) -> Response[str]:
    return Response(as_csv(rows, columns), media_type=CSV)


VARY = [ResponseHeader(name="Vary", value="Accept",
                       description="the answer is JSON or CSV, as `Accept` asks")]
"""The header of a route that answers JSON or CSV, so that no cache hands one for the other."""
