"""The pages people use, served from `api/static` (no build step, nothing from elsewhere):

    /                           the lobby: tables and tournaments, links, signing in with a token
    /screen?table=NAME          a table's big screen (public: the rail's view)
    /croupier?table=NAME        the croupier's console (a croupier's or organiser's token)
    /player?table=NAME          a player's view (the player's token)
    /organiser                  the organiser's console for tournaments (the organiser's token)
    /?tournament=NAME           a tournament's big screen (public)
    /?table=NAME                a table's big screen too (the first page's address)
    /results?tournament=NAME    the printable results sheet (made on the server: api.routes_sheet)
    /slips?tournament=NAME      the players' sign-in slips, made and printed (the organiser's)

Each page is plain HTML with one script that reads the API as its user may: the token typed
in the lobby is kept in the tab's `sessionStorage` and sent as `Authorization: Bearer`, never
in an address; a browser signed in by a slip (`api.routes_sign_in`) carries its token in an
HttpOnly cookie instead, for every tab. The pages follow a table through its event stream,
read with `fetch` (so that the token goes with it), and say when the connection is lost and
when it is back. The Content-Security-Policy allows only this origin's scripts, styles and
requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from litestar import Request, Router, get
from litestar.datastructures import State
from litestar.params import QueryParameter
from litestar.response import File
from litestar.static_files import create_static_files_router

Named = Annotated[str | None, QueryParameter(required=False)]

STATIC = Path(__file__).parent / "static"

POLICY = {"Content-Security-Policy": "default-src 'self'; object-src 'none'; "
                                     "base-uri 'none'; frame-ancestors 'none'"}

PAGES = {"/screen": "screen.html", "/croupier": "croupier.html", "/player": "player.html",
         "/organiser": "organiser.html", "/slips": "slips.html"}


def _html(name: str) -> File:
    return File(STATIC / name, content_disposition_type="inline", media_type="text/html",
                headers=POLICY)


@get("/", include_in_schema=False)
async def page(table: Named = None, tournament: Named = None) -> File:
    if tournament is not None:
        return _html("tournament.html")
    return _html("screen.html" if table is not None else "index.html")


@get(list(PAGES), include_in_schema=False)
async def role_page(request: Request[Any, Any, State]) -> File:
    return _html(PAGES[request.url.path])


def static_router() -> Router:
    return create_static_files_router(path="/static", directories=[STATIC],
                                      include_in_schema=False)
