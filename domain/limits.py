"""The bounds every value entering a table keeps: names, chips and amounts.

They are declared once, as msgspec constraints (`Name`, `Chips`, `Count`, `Reason`,
`CommandId`), so a body decoded at the edge is refused naming its field, and the OpenAPI
document states them; the domain checks them again (`check_name`, `check_chips`) for callers
that build commands in code.

`MAX_CHIPS` (10^12) keeps every sum a table or a tournament makes (a thousand players' chips,
a tie paid 100 to 1) far inside 2^53, where JSON numbers, SQL `BIGINT` and msgpack stay exact.
A name is 1 to `MAX_NAME` printable characters: no control character, no NUL, no line break,
no `/` (it would break the path of a slip's or a table's route); a name people give (a
tournament's, a player's) is trimmed and NFC-normalised first (`trimmed_name`: `émile` typed
precomposed or decomposed is one name). Two names are the same one when their NFKC case folds
match (`name_key`: `Ann`, `ANN` and the fullwidth `ａnn`), which `taken_by` checks.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import Annotated

import msgspec

from domain.errors import RuleViolation

MAX_CHIPS = 10**12
MAX_NAME = 100
MAX_COMMAND_ID = 200
PRINTABLE = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]+$"
"""No C0 or C1 control character (NUL, tab, line breaks, escape...) and no Unicode line break."""

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME, pattern=PRINTABLE,
                                   description=f"1 to {MAX_NAME} printable characters")]
Chips = Annotated[int, msgspec.Meta(ge=-MAX_CHIPS, le=MAX_CHIPS,
                                    description="chips, at most 10^12 either way")]
"""The sign is the domain's rule (a negative seat or stake is refused there, naming it)."""
Count = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1, description="a count or a position")]
Reason = Annotated[str, msgspec.Meta(max_length=500, description="a free text, at most 500 "
                                     "characters")]
MAX_ANNOUNCEMENT = 280
AnnouncementText = Annotated[str, msgspec.Meta(
    min_length=1, max_length=MAX_ANNOUNCEMENT, pattern=PRINTABLE,
    description=f"1 to {MAX_ANNOUNCEMENT} printable characters")]
CommandId = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_COMMAND_ID * 2,
                                        pattern=PRINTABLE,
                                        description="the caller's id of this command: printable "
                                        "characters")]
"""Twice `MAX_COMMAND_ID`: the API prefixes the caller's key with who sent it. Printable, as
the store keeps it as text (PostgreSQL's text holds no NUL)."""


def is_name(text: str) -> bool:
    return 0 < len(text) <= MAX_NAME and text.isprintable()


FORBIDDEN = "/"
"""Printable, yet breaks a route's path (`/tournaments/{t}/players/{name}/sign-in`)."""


def check_name(text: str, what: str = "name") -> str:
    bad = sorted({c for c in text if c in FORBIDDEN or not c.isprintable()})
    if bad:
        named = ", ".join(repr(c) if c.isprintable() else f"U+{ord(c):04X}" for c in bad)
        raise RuleViolation(f"a {what} may not contain {named}", rule="name-invalid")
    if not is_name(text):
        raise RuleViolation(f"a {what} is 1 to {MAX_NAME} printable characters",
                            rule="name-invalid")
    return text


def trimmed_name(text: str, what: str = "name") -> str:
    """A name as people type it: without the spaces around it, NFC-normalised, then 1 to
    `MAX_NAME` printable characters without `/`."""
    return check_name(unicodedata.normalize("NFC", text.strip()), what)


@lru_cache(maxsize=1 << 16)  # a registration compares the name with every entrant's
def name_key(name: str) -> str:
    """What two names must differ in to be two: their NFKC case fold (case and width
    ignored, compatibility characters folded)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def taken_by(name: str, names: Iterable[str]) -> str | None:
    """The one of `names`, other than `name` itself, that is the same name as `name`."""
    key = name_key(name)
    return next((n for n in names if n != name and name_key(n) == key), None)


def check_announcement(text: str) -> str:
    """An announcement to the room: trimmed, then 1 to `MAX_ANNOUNCEMENT` printable
    characters."""
    text = text.strip()
    if not 0 < len(text) <= MAX_ANNOUNCEMENT or not text.isprintable():
        raise RuleViolation(f"an announcement is 1 to {MAX_ANNOUNCEMENT} printable characters",
                            rule="announcement-invalid")
    return text


def check_chips(amount: int, what: str = "chips") -> int:
    if not -MAX_CHIPS <= amount <= MAX_CHIPS:
        raise RuleViolation(f"{what} are at most {MAX_CHIPS:,} (10^12)", rule="chips-too-many")
    return amount
