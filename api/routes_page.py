"""The live page: `/?table=NAME` a table's display (`api/static/index.html`), `/?tournament=NAME`
a tournament's standings (`api/static/standings.html`); `/static/*` their scripts and styles.

The page is the public view (no token: a browser's EventSource cannot send one), so it shows
what anyone at the rail sees. The page's Content-Security-Policy allows only this origin's
scripts, styles and requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from litestar import Router, get
from litestar.params import QueryParameter
from litestar.response import File
from litestar.static_files import create_static_files_router

Tournament = Annotated[str | None, QueryParameter(required=False)]

STATIC = Path(__file__).parent / "static"

POLICY = {"Content-Security-Policy": "default-src 'self'; object-src 'none'; "
                                     "base-uri 'none'; frame-ancestors 'none'"}


@get("/", include_in_schema=False)
async def page(tournament: Tournament = None) -> File:
    html = "index.html" if tournament is None else "standings.html"
    return File(STATIC / html, content_disposition_type="inline", media_type="text/html",
                headers=POLICY)


def static_router() -> Router:
    return create_static_files_router(path="/static", directories=[STATIC],
                                      include_in_schema=False)
