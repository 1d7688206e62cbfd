"""Sign-in slips over real HTTP and the real CLI: only the organiser makes them, one call makes
every player's; a link signs its own player in once (an HttpOnly, SameSite=Strict cookie that
the API takes as a bearer token, a write by cookie only with `X-Requested-With`), a used,
expired, withdrawn or unknown code is a page saying so; the cookie's token is revoked like any
token; a PIN with the name does what the link does, a few tries a minute per address."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from api.cli import main
from api.sign_in import Refusal, SignInCodes, SignInRefused
from api.tokens import Role
from tests.client import CLIENT
from tests.e2e.test_api import KEY, Api

pytestmark = pytest.mark.postgres

PLAYERS = ("ann", "ben", "cat", "dan", "eve", "fay")


def a_tournament(api: Api, name: str = "friday", start: bool = True) -> str:
    """A tournament with six players (a printed page of slips) and a house bot, seated when
    `start`; the organiser's token."""
    organiser = api.token(Role.ORGANISER)
    made = api.call("POST", "/tournaments", organiser, json={
        "name": name, "preset": "punto-banco-heats", "tables": 1, "coups_per_round": 2})
    assert made.status_code == 201, made.text
    for player in PLAYERS:
        assert api.call("POST", f"/tournaments/{name}/players", organiser,
                        json={"player": player}).status_code == 201
    assert api.call("POST", f"/tournaments/{name}/players", organiser,
                    json={"player": "robo", "bot": True}).status_code == 201
    if start:
        started = api.call("POST", f"/tournaments/{name}/start", organiser)
        assert started.status_code == 200, started.text
    return organiser


def slip(api: Api, organiser: str, player: str, tournament: str = "friday") -> dict[str, Any]:
    made = api.call("POST", f"/tournaments/{tournament}/players/{player}/sign-in", organiser)
    assert made.status_code == 201, made.text
    body: dict[str, Any] = made.json()
    return body


def open_link(link: str) -> httpx.Response:
    return CLIENT.get(link, follow_redirects=False, timeout=10)


def as_browser(api: Api, method: str, path: str, cookie: str, **options: Any) -> httpx.Response:
    headers = {**options.pop("headers", {}), "Cookie": f"sabot_session={cookie}"}
    return CLIENT.request(method, api.base_url + path, headers=headers, timeout=10, **options)


def test_only_the_organiser_makes_slips_one_or_every_player_s(api: Api) -> None:
    organiser = a_tournament(api)
    path = "/tournaments/friday/players/ann/sign-in"
    player = api.call("POST", path, api.token(Role.PLAYER, player="ann"))
    assert (player.status_code, player.json()["rule"]) == (403, "organiser-only")
    assert api.call("POST", path).status_code == 401
    assert api.call("POST", "/tournaments/friday/sign-in",
                    api.token(Role.CROUPIER, tables=("t1",))).status_code == 403
    one = slip(api, organiser, "ann")
    assert one["player"] == "ann" and re.fullmatch(r"\d{6}", one["pin"])
    assert one["link"].startswith(api.base_url + "/sign-in?code=")
    assert one["qr_svg"].startswith("<svg") and "<path" in one["qr_svg"]
    assert one["table"] is not None and one["seat"] is not None
    every = api.call("POST", "/tournaments/friday/sign-in", organiser)
    assert every.status_code == 201
    slips = every.json()
    assert sorted(s["player"] for s in slips) == sorted(PLAYERS)  # the house bot needs none
    assert len({s["link"] for s in slips}) == len(PLAYERS)
    unknown = api.call("POST", "/tournaments/friday/players/zed/sign-in", organiser)
    assert (unknown.status_code, unknown.json()["rule"]) == (404, "unknown-player")
    assert open_link(one["link"]).status_code == 410  # withdrawn by the slips made since


def test_a_link_signs_its_player_in_once_by_a_cookie_the_api_takes(api: Api) -> None:
    organiser = a_tournament(api)
    made = slip(api, organiser, "ann")
    opened = open_link(made["link"])
    assert opened.status_code == 303
    assert opened.headers["location"] == f"/player?table={made['table']}"
    set_cookie = opened.headers["set-cookie"]
    assert "HttpOnly" in set_cookie and "Path=/" in set_cookie
    assert "samesite=strict" in set_cookie.lower()
    cookie = opened.cookies["sabot_session"]
    me = as_browser(api, "GET", "/me", cookie)
    assert me.json() == {"role": "player", "player": "ann", "tables": []}
    # a write by cookie carries X-Requested-With (the pages' scripts send it)
    body = {"player": "ann"}
    bare = as_browser(api, "POST", "/tournaments/friday/players", cookie, json=body)
    assert (bare.status_code, bare.json()["rule"]) == (403, "cross-site-request")
    sent = as_browser(api, "POST", "/tournaments/friday/players", cookie, json=body,
                      headers={"X-Requested-With": "sabot"})
    assert (sent.status_code, sent.json()["rule"]) == (422, "already-registered")  # the rules
    again = open_link(made["link"])
    assert again.status_code == 410 and again.headers["content-type"].startswith("text/html")
    assert "already been used" in again.text and made["pin"] not in again.text
    # the cookie's token is a token like any other: listed, and revoked
    issued = [t for t in api.store.issued() if t.grant.player == "ann"]
    assert len(issued) == 1
    assert issued[0].expires_at - datetime.now(UTC) <= timedelta(hours=24)  # one evening
    api.store.revoke(issued[0].id)
    refused = as_browser(api, "GET", "/me", cookie)
    assert (refused.status_code, refused.json()["rule"]) == (401, "token-revoked")


def test_an_expired_withdrawn_or_unknown_code_is_a_page_saying_so(api: Api) -> None:
    organiser = a_tournament(api)
    codes = SignInCodes(api.service.database, api.store, api.service.secret_key)
    tournament_id = api.call("GET", "/tournaments/friday").json()["id"]
    code, _, _ = codes.issue(tournament_id, "ben", timedelta(seconds=1))
    time.sleep(1.1)
    expired = open_link(f"{api.base_url}/sign-in?code={code}")
    assert expired.status_code == 410 and "expired" in expired.text
    assert "set-cookie" not in expired.headers
    first = slip(api, organiser, "cat")
    slip(api, organiser, "cat")  # a new slip withdraws the first
    withdrawn = open_link(first["link"])
    assert withdrawn.status_code == 410 and "withdrawn" in withdrawn.text
    unknown = open_link(f"{api.base_url}/sign-in?code=nothing-like-it")
    assert unknown.status_code == 404 and "not known" in unknown.text
    assert unknown.headers["content-type"].startswith("text/html")


def test_a_pin_with_the_name_signs_in_a_few_tries_a_minute(api: Api) -> None:
    organiser = a_tournament(api)
    made = slip(api, organiser, "dan")
    wrong = api.call("POST", "/sign-in/pin", json={"player": "dan", "pin": "no-pin"})
    assert (wrong.status_code, wrong.json()["rule"]) == (401, "sign-in-unknown")
    other = api.call("POST", "/sign-in/pin", json={"player": "ann", "pin": made["pin"]})
    assert other.status_code == 401  # the PIN is dan's: bound to one player
    right = api.call("POST", "/sign-in/pin", json={"player": "dan", "pin": made["pin"]})
    assert right.status_code == 200, right.text
    assert right.json() == {"player": "dan", "page": f"/player?table={made['table']}"}
    me = as_browser(api, "GET", "/me", right.cookies["sabot_session"])
    assert me.json()["player"] == "dan"
    used = api.call("POST", "/sign-in/pin", json={"player": "dan", "pin": made["pin"]})
    assert (used.status_code, used.json()["rule"]) == (401, "sign-in-used")
    guess = {"player": "dan", "pin": "000000"}
    assert api.call("POST", "/sign-in/pin", json=guess).status_code == 401  # the fifth try
    limited = api.call("POST", "/sign-in/pin", json=guess)  # the sixth within the minute
    assert (limited.status_code, limited.json()["rule"]) == (429, "too-many-attempts")
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
    assert open_link(made["link"]).status_code == 410  # the link of a slip used by its PIN


def test_sign_out_revokes_the_cookie_s_token(api: Api) -> None:
    organiser = a_tournament(api, start=False)
    made = slip(api, organiser, "ann")
    assert made["table"] is None  # not seated before the draw: the page awaiting the seat
    opened = open_link(made["link"])
    assert opened.headers["location"] == "/player?tournament=friday"
    cookie = opened.cookies["sabot_session"]
    out = as_browser(api, "POST", "/sign-out", cookie, headers={"X-Requested-With": "sabot"})
    assert out.status_code == 200 and 'sabot_session=""' in out.headers["set-cookie"]
    assert as_browser(api, "GET", "/me", cookie).status_code == 401


def test_the_cli_makes_slips(api: Api, postgres_url: str, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SABOT_SECRET_KEY", KEY.hex())  # the installation's key: the server's
    a_tournament(api)
    db = ["--database", postgres_url]
    assert main(["tournament", "sign-in", "friday", "--all", "--url", "http://room:8000",
                 "--qr", str(tmp_path), *db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(PLAYERS) + 1
    assert lines[-1].startswith(f"made {len(PLAYERS)} sign-in slips for friday")
    ann = next(line for line in lines if line.startswith("ann "))
    pin = re.search(r"PIN (\d{6})", ann)
    assert pin is not None and "http://room:8000/sign-in?code=" in ann
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{p}.svg" for p in PLAYERS)
    signed = api.call("POST", "/sign-in/pin", json={"player": "ann", "pin": pin.group(1)})
    assert signed.status_code == 200
    assert main(["tournament", "sign-in", "friday", "ben", *db]) == 0
    assert capsys.readouterr().out.startswith("ben ")
    assert main(["tournament", "sign-in", "friday", "zed", *db]) == 1
    assert "zed is not registered in friday" in capsys.readouterr().err


def test_a_code_redeemed_twice_at_once_signs_in_once(api: Api) -> None:
    """Eight browsers open the same link together: one is signed in, the others are told the
    slip was used (the use is one conditional update, not a read then a write)."""
    a_tournament(api)
    codes = SignInCodes(api.service.database, api.store, api.service.secret_key)
    code, _, _ = codes.issue(api.call("GET", "/tournaments/friday").json()["id"], "ann")

    def redeem(_: int) -> str:
        try:
            return codes.redeem_code(code).player
        except SignInRefused as refused:
            return refused.refusal.value

    with ThreadPoolExecutor(8) as pool:
        outcomes = sorted(pool.map(redeem, range(8)))
    assert outcomes == ["ann"] + ["sign-in-used"] * 7
    assert len([t for t in api.store.issued() if t.grant.player == "ann"]) == 1


def test_a_copy_of_the_database_alone_recovers_no_pin(api: Api) -> None:
    """The stored PIN is keyed: the million PINs, hashed as the database alone allows (bare
    SHA-256, or HMAC under any key but the installation's), match none."""
    organiser = a_tournament(api)
    made = slip(api, organiser, "dan")
    database = api.service.database
    with database.transaction(write=False) as cursor:
        stored = str(database.execute(
            cursor, "SELECT pin_hash FROM {sign_in_codes} WHERE player = ? AND used_at IS NULL"
            " AND revoked_at IS NULL", ("dan",)).fetchone()["pin_hash"])
    guesses = (f"pin\0dan\0{n:06d}".encode() for n in range(10 ** 6))
    assert not any(hashlib.sha256(g).hexdigest() == stored for g in guesses)
    assert hmac.new(KEY, f"pin\0dan\0{made['pin']}".encode(), "sha256").hexdigest() == stored


def test_six_wrong_pins_lock_the_slip_until_a_new_one(api: Api) -> None:
    """Wrong PINs from several addresses (each under its own rate limit) count against the
    slip; after the fifth the right PIN and the link are refused as locked."""
    organiser = a_tournament(api)
    made = slip(api, organiser, "dan")
    codes = SignInCodes(api.service.database, api.store, api.service.secret_key)
    for n in range(6):  # as if from six addresses: the slips' own count, not the address's
        with pytest.raises(SignInRefused) as wrong:
            codes.redeem_pin("dan", f"{n:06d}" if f"{n:06d}" != made["pin"] else "999999")
        assert wrong.value.refusal in (Refusal.UNKNOWN, Refusal.LOCKED)
    locked = api.call("POST", "/sign-in/pin", json={"player": "dan", "pin": made["pin"]})
    assert (locked.status_code, locked.json()["rule"]) == (401, "sign-in-locked"), locked.text
    assert "locked" in open_link(made["link"]).text
    fresh = slip(api, organiser, "dan")  # the organiser's new slip
    right = api.call("POST", "/sign-in/pin", json={"player": "dan", "pin": fresh["pin"]})
    assert right.status_code == 200, right.text
