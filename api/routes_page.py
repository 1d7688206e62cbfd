"""The table display page: `/` serves `api/static/index.html`, `/static/*` its script and style.

The page is the public view (no token: a browser's EventSource cannot send one), so it shows
what anyone at the rail sees. The page's Content-Security-Policy allows only this origin's
scripts, styles and requests.
"""

from __future__ import annotations

from pathlib import Path

from litestar import Router, get
from litestar.response import File
from litestar.static_files import create_static_files_router

STATIC = Path(__file__).parent / "static"

POLICY = {"Content-Security-Policy": "default-src 'self'; object-src 'none'; "
                                     "base-uri 'none'; frame-ancestors 'none'"}


@get("/", include_in_schema=False)
async def page() -> File:
    return File(STATIC / "index.html", content_disposition_type="inline",
                media_type="text/html", headers=POLICY)


def static_router() -> Router:
    return create_static_files_router(path="/static", directories=[STATIC],
                                      include_in_schema=False)
