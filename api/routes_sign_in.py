"""Signing players and croupiers in by a slip (`api.sign_in`): the organiser makes slips, a
browser redeems one.

    POST /tournaments/{t}/players/{p}/sign-in   one player's slip: link, QR (SVG), PIN (organiser)
    POST /tournaments/{t}/sign-in               every registered player's slip at once (organiser)
    POST /tournaments/{t}/tables/{n}/sign-in    the slip of table n's croupier (its name or its
                                                number from 1), for that table only (organiser)
    POST /tournaments/{t}/tables/sign-in        every open table's croupier slip (organiser)
    GET  /sign-in?code=CODE                     the link: sets the cookie, goes to the player's
                                                page (a croupier's console); a page saying why
                                                when refused (404, 410)
    POST /sign-in/pin                           the lobby's name and PIN (a few tries a minute)
    POST /sign-out                              revokes the cookie's token and forgets it

Redeeming sets the cookie `sabot_session` (HttpOnly, SameSite=Strict, Path=/, Secure over
HTTPS) to a new player token that lives `SESSION_LIFETIME`; `api.auth` takes it as it takes a
bearer token, so every tab of that browser is signed in. The player lands on their table's page
(`/player?table=T`) when seated, else on the lobby; a croupier on their table's console
(`/croupier?table=T`), with a croupier token for that table only. The slips' printable sheet
is the page `/slips?tournament=T` (`&croupiers=1` for the croupiers': `api/static/slips.*`),
which makes them through the calls above.
"""

from __future__ import annotations

import contextlib
import html
from typing import Annotated, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie, State
from litestar.exceptions import ValidationException
from litestar.handlers import BaseRouteHandler
from litestar.params import JSONBody, PathParameter, QueryParameter
from litestar.response import Redirect

from api import auth
from api.attempts import Attempts
from api.openapi import problems
from api.problems import ApiProblem
from api.routes_page import POLICY
from api.routes_tables import blocking, grant_of
from api.routes_tournaments import _invalid_body, _service, organiser
from api.sign_in import (
    SESSION_LIFETIME,
    CroupierSlip,
    SignInCodes,
    SignInRefused,
    Slip,
    landing,
    make_croupier_slips,
    make_slips,
)
from api.tokens import TokenStore

TournamentRef = Annotated[str, PathParameter(description="the tournament's UUID or its name")]
PlayerRef = Annotated[str, PathParameter(description="the player's id")]
TableRef = Annotated[str, PathParameter(
    description="the table's name, or its number in the tournament (from 1)")]
Code = Annotated[str, QueryParameter(description="the code of a sign-in link")]

GONE = 410


class PinSignIn(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A player's name and the PIN on their slip."""

    player: str
    pin: str


class Landing(msgspec.Struct, frozen=True):
    """Who is signed in now, and the page to open."""

    player: str
    page: str


@post("/tournaments/{tournament:str}/players/{player:str}/sign-in", status_code=201,
      summary="A player's sign-in slip: link, QR code and PIN (organiser)", tags=["sign-in"],
      responses=problems(401, 403, 404))
async def player_slip(request: Request[Any, Any, State], tournament: TournamentRef,
                      player: PlayerRef) -> Slip:
    organiser(await grant_of(request))
    slips = await blocking(make_slips, _service(request), _codes(request), tournament, player,
                           _base(request))
    return slips[0]


@post("/tournaments/{tournament:str}/sign-in", status_code=201, tags=["sign-in"],
      summary="Every registered player's sign-in slip at once (organiser)",
      responses=problems(401, 403, 404))
async def every_slip(request: Request[Any, Any, State], tournament: TournamentRef) -> list[Slip]:
    organiser(await grant_of(request))
    return await blocking(make_slips, _service(request), _codes(request), tournament, None,
                          _base(request))


@post("/tournaments/{tournament:str}/tables/{table:str}/sign-in", status_code=201,
      summary="A table's croupier sign-in slip: link, QR code and PIN (organiser)",
      tags=["sign-in"], responses=problems(401, 403, 404))
async def croupier_slip(request: Request[Any, Any, State], tournament: TournamentRef,
                        table: TableRef) -> CroupierSlip:
    organiser(await grant_of(request))
    slips = await blocking(make_croupier_slips, _service(request), _codes(request), tournament,
                           table, _base(request))
    return slips[0]


@post("/tournaments/{tournament:str}/tables/sign-in", status_code=201, tags=["sign-in"],
      summary="Every open table's croupier sign-in slip at once (organiser)",
      responses=problems(401, 403, 404))
async def every_croupier_slip(request: Request[Any, Any, State],
                              tournament: TournamentRef) -> list[CroupierSlip]:
    organiser(await grant_of(request))
    return await blocking(make_croupier_slips, _service(request), _codes(request), tournament,
                          None, _base(request))


@get("/sign-in", include_in_schema=False)
async def sign_in_link(request: Request[Any, Any, State], code: Code) -> Response[Any]:
    """Open a slip's link: signed in and sent on, or a page saying why not."""
    try:
        signed_in = await blocking(_codes(request).redeem_code, code)
    except SignInRefused as refused:
        status = 404 if refused.refusal.value == "sign-in-unknown" else GONE
        return Response(_refusal_page(str(refused)), status_code=status,
                        media_type="text/html", headers=POLICY)
    page = await blocking(landing, _service(request), signed_in)
    return Redirect(page, status_code=303, cookies=[_cookie(request, signed_in.token)])


def _count_try(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    """A try counted before its body is decoded: a body refused still costs the address one."""
    tries: Attempts = connection.app.state.sign_in_tries
    tries.count(connection.client.host if connection.client else "unknown")


@post("/sign-in/pin", status_code=200, tags=["sign-in"],
      summary="Sign this browser in with a player's name and slip PIN",
      responses=problems(400, 401, 422, 429),
      exception_handlers={ValidationException: _invalid_body}, guards=[_count_try])
async def sign_in_pin(request: Request[Any, Any, State],
                      data: JSONBody[PinSignIn]) -> Response[Landing]:
    try:
        signed_in = await blocking(_codes(request).redeem_pin, data.player, data.pin)
    except SignInRefused as refused:
        raise ApiProblem(401, str(refused), rule=refused.refusal.value) from None
    page = await blocking(landing, _service(request), signed_in)
    return Response(Landing(signed_in.player, page),
                    cookies=[_cookie(request, signed_in.token)])


@post("/sign-out", status_code=200, tags=["sign-in"],
      summary="Sign this browser out: its cookie's token is revoked")
async def sign_out(request: Request[Any, Any, State]) -> Response[dict[str, str]]:
    token = request.cookies.get(auth.SESSION_COOKIE)
    if token:
        auth.credentials(request.headers, request.cookies, request.method)  # not cross-site
        tokens: TokenStore = request.app.state.tokens
        with contextlib.suppress(KeyError):  # a token never issued: nothing to revoke
            await blocking(tokens.revoke, token)
    return Response({}, cookies=[Cookie(key=auth.SESSION_COOKIE, value="", max_age=0,
                                        path="/", httponly=True, samesite="strict")])


def _cookie(request: Request[Any, Any, State], token: str) -> Cookie:
    return Cookie(key=auth.SESSION_COOKIE, value=token, path="/", httponly=True,
                  samesite="strict", secure=request.url.scheme == "https",
                  max_age=int(SESSION_LIFETIME.total_seconds()))


def _refusal_page(words: str) -> str:
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
            "content='width=device-width, initial-scale=1'><title>Sign-in refused</title>"
            "<link rel='stylesheet' href='/static/sabot.css'>"
            "<link rel='stylesheet' href='/static/console.css'></head>"
            "<body class='console'><main><section class='panel'><h1>Not signed in</h1>"
            f"<p id='refusal'>{html.escape(words)}</p>"
            "<p><a href='/'>the lobby: sign in with your name and PIN</a></p>"
            "</section></main></body></html>")


def _codes(request: Request[Any, Any, State]) -> SignInCodes:
    codes: SignInCodes = request.app.state.sign_in_codes
    return codes


def _base(request: Request[Any, Any, State]) -> str:
    return str(request.base_url).rstrip("/")
