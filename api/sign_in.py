"""Sign-in codes: a player's (or a croupier's) sign-in link, its QR code and PIN, exchanged
for a token.

The organiser makes a slip for a registered player (or for every player at once): a link
`/sign-in?code=CODE` (22 URL-safe characters, 128 random bits), its QR code as SVG (`segno`)
and a 6-digit PIN that the player types in the lobby with their name. The table
`sign_in_codes` keeps only the HMAC-SHA-256, under the installation's secret key
(`infra.settings`), of the code and of the player's name with the PIN, the player, the
tournament and the times: a copy of the database without the key recovers no PIN (a million
PINs are tried in a second against a bare hash).

A slip is single-use and short-lived: it signs in once (the link or the PIN, whichever comes
first), within `CODE_LIFETIME` of being made; a new slip for the same player revokes the
earlier ones. A wrong PIN typed with a player's name counts against that player's live slips;
at `pin_tries` (`SABOT_PIN_TRIES`, 5) a slip is locked, its PIN and link refused, until the
organiser makes a new one. Redeeming a slip issues a player token (`api.tokens`: kept hashed,
listed and revoked like any token) that lives `SESSION_LIFETIME`, carried by the browser in
the HttpOnly cookie `api.auth.SESSION_COOKIE`.

A croupier's slip is the same for one table of the tournament: it is made for the official
`@croupier/TABLE` (what the slip's row names instead of a player: no player's id starts with
@), and signs in with a croupier token for that table only, landing on its console.

Logs name the player, the tournament and the slip's id (the first 12 hex digits of its code's
hash), never the code, the PIN or the token.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import logging
import secrets
import uuid
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any
from urllib.parse import quote

import msgspec
import segno

from api.tokens import ID_DIGITS, Grant, Role, TokenStore
from domain.errors import NotFound
from domain.table.aggregate import Table
from domain.tournament.entrants import Status
from infra.services.tournaments import Tournaments, tournament_id_of
from infra.settings import DEFAULT_PIN_TRIES
from infra.store.database import Database

CODE_LIFETIME = timedelta(hours=12)  # slips printed in the afternoon serve the evening
SESSION_LIFETIME = timedelta(hours=24)  # a signed-in browser's token: one evening, bounded
PIN_DIGITS = 6
CROUPIER = "@croupier/"  # a croupier's slip signs in `@croupier/TABLE`

log = logging.getLogger("sabot.api.sign_in")


class Refusal(StrEnum):
    """Why a code or a PIN signs nobody in (each is a problem rule and the page's words)."""

    UNKNOWN = "sign-in-unknown"
    USED = "sign-in-used"
    EXPIRED = "sign-in-expired"
    REVOKED = "sign-in-revoked"
    LOCKED = "sign-in-locked"


WORDS = {
    Refusal.UNKNOWN: "This sign-in code is not known. Check the link, or the name and PIN.",
    Refusal.USED: "This sign-in slip has already been used. Each slip signs in once: ask the "
                  "organiser for a new one.",
    Refusal.EXPIRED: "This sign-in slip has expired. Ask the organiser for a new one.",
    Refusal.REVOKED: "This sign-in slip was withdrawn: a newer slip was made for this player. "
                     "Ask the organiser for it.",
    Refusal.LOCKED: "This sign-in slip is locked: too many wrong PINs were typed for this "
                    "player. Ask the organiser for a new slip.",
}


class SignInRefused(Exception):
    def __init__(self, refusal: Refusal) -> None:
        super().__init__(WORDS[refusal])
        self.refusal = refusal


class Slip(msgspec.Struct, frozen=True, kw_only=True):
    """One player's sign-in slip, shown once: the link, its QR code (SVG) and the PIN."""

    player: str
    tournament: str
    table: str | None
    seat: int | None
    link: str
    pin: str
    qr_svg: str
    expires_at: datetime


class CroupierSlip(msgspec.Struct, frozen=True, kw_only=True):
    """The sign-in slip of one table's croupier console, shown once: the name to type with
    the PIN in the lobby (`@croupier/TABLE`), the link, its QR code (SVG) and the PIN."""

    table: str
    tournament: str
    name: str
    link: str
    pin: str
    qr_svg: str
    expires_at: datetime


class SignedIn(msgspec.Struct, frozen=True):
    """A redeemed slip: the new token (for the cookie only) and whom it speaks for: a player,
    or a table's croupier (`@croupier/TABLE`)."""

    player: str
    tournament: str
    token: str


def qr_svg(link: str) -> str:
    """The link's QR code, as an SVG element (no XML declaration: it goes inside a page)."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="svg", scale=4, xmldecl=False, svgns=True,
                                     omitsize=True, title="sign-in link")
    return out.getvalue().decode()


class SignInCodes:
    """The `sign_in_codes` table of one database, and the tokens the slips are exchanged for."""

    def __init__(self, database: Database, tokens: TokenStore, key: bytes,
                 pin_tries: int = DEFAULT_PIN_TRIES) -> None:
        self.database = database
        self.tokens = tokens
        self._key = key
        self.pin_tries = pin_tries

    def _hash(self, text: str) -> str:
        return hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()

    def pin_hash(self, player: str, pin: str) -> str:
        return self._hash(f"pin\0{player}\0{pin.strip()}")

    def issue(self, tournament: str, player: str,
              lifetime: timedelta = CODE_LIFETIME) -> tuple[str, str, datetime]:
        """A new code and PIN for `player` of `tournament` (its id), revoking earlier ones."""
        code = secrets.token_urlsafe(16)
        pin = f"{secrets.randbelow(10 ** PIN_DIGITS):0{PIN_DIGITS}d}"
        now = _now()
        expires = now + lifetime
        with self.database.transaction(write=True) as cursor:
            self.database.execute(
                cursor, "UPDATE {sign_in_codes} SET revoked_at = ? WHERE player = ?"
                " AND tournament = ? AND used_at IS NULL AND revoked_at IS NULL",
                (now.isoformat(), player, tournament))
            self.database.execute(
                cursor, "INSERT INTO {sign_in_codes} (code_hash, pin_hash, player, tournament,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (self._hash(code), self.pin_hash(player, pin), player, tournament, now.isoformat(),
                 expires.isoformat()))
        log.info("sign-in slip made", extra={"player": player, "tournament": tournament,
                                            "slip": self._hash(code)[:ID_DIGITS]})
        return code, pin, expires

    def redeem_code(self, code: str) -> SignedIn:
        return self._redeem("code_hash = ?", self._hash(code.strip()))

    def redeem_pin(self, player: str, pin: str) -> SignedIn:
        player = player.strip()
        try:
            return self._redeem("pin_hash = ?", self.pin_hash(player, pin))
        except SignInRefused as refused:
            if refused.refusal is Refusal.UNKNOWN:  # a wrong PIN: counted against the slips
                with self.database.transaction(write=True) as cursor:
                    self.database.execute(
                        cursor, "UPDATE {sign_in_codes} SET failed_pins = failed_pins + 1"
                        " WHERE player = ? AND used_at IS NULL AND revoked_at IS NULL",
                        (player,))
            raise

    def _redeem(self, where: str, value: str) -> SignedIn:
        """Mark the newest slip matching as used, or refuse it; a player token when used."""
        now = _now()
        with self.database.transaction(write=True) as cursor:
            row: Any = self.database.execute(
                cursor, "SELECT code_hash, player, tournament, expires_at, used_at, revoked_at,"
                " failed_pins"
                f" FROM {{sign_in_codes}} WHERE {where} ORDER BY created_at DESC LIMIT 1",
                (value,)).fetchone()
            refusal = _refusal(row, now, self.pin_tries)
            if refusal is None and not self.database.execute(  # a concurrent use won: used
                    cursor, "UPDATE {sign_in_codes} SET used_at = ? WHERE code_hash = ?"
                    " AND used_at IS NULL RETURNING code_hash",
                    (now.isoformat(), row["code_hash"])).fetchall():
                refusal = Refusal.USED
        slip = str(row["code_hash"])[:ID_DIGITS] if row is not None else None
        if refusal is not None:
            log.warning("sign-in refused", extra={"slip": slip, "rule": refusal.value})
            raise SignInRefused(refusal)
        player, tournament = str(row["player"]), str(row["tournament"])
        table = croupier_table(player)
        grant = (Grant(role=Role.PLAYER, player=player) if table is None
                 else Grant(role=Role.CROUPIER, tables=frozenset({Table.create_id(table)})))
        token = self.tokens.issue(grant, SESSION_LIFETIME)
        log.info("signed in by slip", extra={"player": player, "tournament": tournament,
                                             "slip": slip})
        return SignedIn(player, tournament, token)


def croupier_table(name: str) -> str | None:
    """The table a croupier's slip serves, or None for a player's slip."""
    return name.removeprefix(CROUPIER) if name.startswith(CROUPIER) else None


def make_slips(service: Tournaments, codes: SignInCodes, tournament: str,
               player: str | None, base: str) -> list[Slip]:
    """A new slip for `player`, or for every registered player (house bots aside)."""
    tournament_id = tournament_id_of(tournament)
    state = service.state(tournament_id)
    if player is not None and player not in state.entrants:
        raise NotFound(f"{player} is not registered in {state.name}", rule="unknown-player")
    slips = []
    for entrant in state.entrants.values():
        if (player is None and entrant.bot) or player not in (None, entrant.player):
            continue
        code, pin, expires = codes.issue(str(tournament_id), entrant.player)
        link = f"{base}/sign-in?code={code}"
        seated = entrant.status is Status.SEATED
        slips.append(Slip(player=entrant.player, tournament=state.name,
                          table=entrant.table if seated else None,
                          seat=entrant.seat if seated else None,
                          link=link, pin=pin, qr_svg=qr_svg(link), expires_at=expires))
    return slips


def make_croupier_slips(service: Tournaments, codes: SignInCodes, tournament: str,
                        table: str | None, base: str) -> list[CroupierSlip]:
    """A new slip for the croupier of `table` (its name, or its number in the tournament from
    1), or for every open table of the tournament."""
    tournament_id = tournament_id_of(tournament)
    state = service.state(tournament_id)
    tables = state.tables
    if table is not None:
        numbered = {str(number): name for number, name in enumerate(tables, 1)}
        found = table if table in tables else numbered.get(table)
        if found is None:
            raise NotFound(f"{state.name} has no table {table}", rule="unknown-table")
        tables = [found]
    slips = []
    for name in tables:
        code, pin, expires = codes.issue(str(tournament_id), CROUPIER + name)
        link = f"{base}/sign-in?code={code}"
        slips.append(CroupierSlip(table=name, tournament=state.name, name=CROUPIER + name,
                                  link=link, pin=pin, qr_svg=qr_svg(link), expires_at=expires))
    return slips


def landing(service: Tournaments, signed_in: SignedIn) -> str:
    """A croupier's console for their table; the player's table page when seated in the
    slip's tournament; a player waiting for a seat (the draw, a play-off's table), the page
    that opens their table once they have one; a player out, the tournament's screen; else
    the lobby."""
    table = croupier_table(signed_in.player)
    if table is not None:
        return f"/croupier?table={quote(table)}"
    try:
        state = service.state(uuid.UUID(signed_in.tournament))
    except NotFound:
        return "/"
    entrant = state.entrants.get(signed_in.player)
    if entrant is None:
        return "/"
    if entrant.status is Status.SEATED and entrant.table:
        return f"/player?table={quote(entrant.table)}"
    if entrant.status in (Status.REGISTERED, Status.SEATED):
        return f"/player?tournament={quote(state.name)}"
    return f"/?tournament={quote(state.name)}"


def _refusal(row: Any, now: datetime, pin_tries: int) -> Refusal | None:
    if row is None:
        return Refusal.UNKNOWN
    if row["used_at"] is not None:
        return Refusal.USED
    if row["revoked_at"] is not None:
        return Refusal.REVOKED
    if row["failed_pins"] >= pin_tries:
        return Refusal.LOCKED
    if datetime.fromisoformat(str(row["expires_at"])) <= now:
        return Refusal.EXPIRED
    return None


def _now() -> datetime:
    return datetime.now(UTC)
