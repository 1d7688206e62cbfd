"""The roots of trust: the public keys whose signatures a writer's fold, a checkpoint and
`sabot audit verify` accept. Nothing inside the database vouches for the database.

The keys trusted are, and only:

* the writer's own key (its key file, `infra.store.signing`), which never enters the database;
* keys given: the setting `SABOT_TRUSTED_KEYS` (hex Ed25519 public keys, separated by commas
  or spaces: the other writers' keys, when writers sign with keys of their own) and, for
  `sabot audit verify`, `--public-key`;
* for `sabot audit verify` without a key given or a key file, the key of the checkpoint
  file's first checkpoint (the file is kept outside the database);
* the keys a trusted key handed over to, by a signed hand-over in the checkpoint file
  (`infra.store.hand_overs`).

The store's `signing_keys` table is data, checked against them (`recorded_key_problems`): a
key id recorded with another public key than the trusted one, or a key trusted by no one, is
an alteration; the fold then refuses to checkpoint and verify names it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from infra.errors import SettingsError
from infra.store.database import Database
from infra.store.signing import key_id

SETTING = "SABOT_TRUSTED_KEYS"
STORE_ONLY = "the store itself (no key outside it: pass a public key)"
"""The source of a `Trust` read from `signing_keys`, for lack of any other: vouches for
nothing, said as such."""
PUBLIC_KEY_SIZE = 32


class Trust(NamedTuple):
    """The trusted public keys by key id, where they came from (said in reports), and why
    each hand-over of the checkpoint file that was not followed was refused."""

    keys: dict[str, bytes]
    source: str
    refused: tuple[str, ...] = ()


def parse_keys(texts: Iterable[str]) -> dict[str, bytes]:
    """Hex Ed25519 public keys by key id (`ValueError` naming a malformed one)."""
    keys = {}
    for text in texts:
        try:
            public = bytes.fromhex(text.strip())
        except ValueError:
            public = b""
        if len(public) != PUBLIC_KEY_SIZE:
            raise ValueError(f"a public key is {PUBLIC_KEY_SIZE} bytes in hex, not {text!r}")
        keys[key_id(public)] = public
    return keys


def configured_keys(environ: Mapping[str, str] | None = None) -> dict[str, bytes]:
    """The keys of `SABOT_TRUSTED_KEYS` (none when unset)."""
    text = (os.environ if environ is None else environ).get(SETTING, "")
    try:
        return parse_keys(part for part in text.replace(",", " ").split() if part)
    except ValueError as error:
        raise SettingsError(f"{SETTING}: {error}") from None


def recorded_key_problems(database: Database, cursor: Any,
                          trusted: Mapping[str, bytes]) -> list[tuple[str, str]]:
    """Each key of the store's `signing_keys` that the trusted keys do not vouch for: its id
    and what is wrong with it."""
    problems = []
    for row in database.execute(
            cursor, "SELECT key_id, public_key FROM {signing_keys} ORDER BY key_id").fetchall():
        recorded, public = row["key_id"], bytes(row["public_key"])
        if recorded not in trusted:
            problems.append((recorded, f"the store records key {recorded}, which is not "
                             "trusted (add it to SABOT_TRUSTED_KEYS if it is a writer's)"))
        elif trusted[recorded] != public:
            problems.append((recorded, f"the store records key {recorded} with the public key "
                             f"{public.hex()[:16]}…, not the trusted "
                             f"{trusted[recorded].hex()[:16]}…: the key was replaced"))
    return problems
