"""The shoe-seed vault: a shoe's secret seed, kept apart from the events and sealed.

The event store only ever holds a commitment to a seed (until the seed's reveal event), so
that nobody who can read the events (players, auditors, a leaked backup) can predict the
cards. The seed itself is kept in the table `shoe_seeds (shoe_id, sealed, created_at)` of
the same database, sealed under the process's secret key (`SABOT_SECRET_KEY`):

    pad        = HMAC-SHA256(key, b"sabot-seed-v1" || id)
    ciphertext = seed XOR pad                                   (32 bytes)
    mac        = HMAC-SHA256(key, b"sabot-seal-mac" || id || ciphertext)
    sealed     = ciphertext || mac                              (64 bytes)

where `id` is the shoe id's bytes (a UUID's 16 bytes, also when given as its canonical
text; else a text id in UTF-8, e.g. the seed's commitment). The pad depends only on the key
and the shoe id, so a shoe is sealed once: sealing a second seed under the same id would
let the two be XORed together, and is refused (`SeedAlreadySealed`). Unsealing checks the
MAC first (`SealBroken` on an altered row, a row copied from another shoe, or the wrong key).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from uuid import UUID

from infra.errors import SealBroken, SeedAlreadySealed, SeedNotFound, VaultError
from infra.store.database import Database

SEED_SIZE = 32
SEALED_SIZE = 2 * SEED_SIZE

ShoeId = UUID | str

def _id_bytes(shoe_id: ShoeId) -> bytes:
    shoe_id = _normal(shoe_id)
    return shoe_id.bytes if isinstance(shoe_id, UUID) else shoe_id.encode()


def _normal(shoe_id: ShoeId) -> ShoeId:
    """A UUID given as its canonical text is that UUID (so both spellings open one seal)."""
    if isinstance(shoe_id, str) and len(shoe_id) == 36:
        try:
            parsed = UUID(shoe_id)
        except ValueError:
            return shoe_id
        return parsed if str(parsed) == shoe_id else shoe_id
    return shoe_id


def _pad(secret_key: bytes, shoe_id: ShoeId) -> bytes:
    return hmac.new(secret_key, b"sabot-seed-v1" + _id_bytes(shoe_id), hashlib.sha256).digest()


def _mac(secret_key: bytes, shoe_id: ShoeId, ciphertext: bytes) -> bytes:
    message = b"sabot-seal-mac" + _id_bytes(shoe_id) + ciphertext
    return hmac.new(secret_key, message, hashlib.sha256).digest()


def seal(secret_key: bytes, shoe_id: ShoeId, seed: bytes) -> bytes:
    """The sealed form of a 32-byte seed: ciphertext || MAC."""
    if len(seed) != SEED_SIZE:
        raise VaultError(f"a shoe seed is {SEED_SIZE} bytes, not {len(seed)}")
    ciphertext = bytes(a ^ b for a, b in zip(seed, _pad(secret_key, shoe_id), strict=True))
    return ciphertext + _mac(secret_key, shoe_id, ciphertext)


def open_seal(secret_key: bytes, shoe_id: ShoeId, sealed: bytes) -> bytes:
    """The seed inside `sealed`, after checking its MAC."""
    ciphertext, mac = sealed[:SEED_SIZE], sealed[SEED_SIZE:]
    if len(sealed) != SEALED_SIZE or not hmac.compare_digest(
        mac, _mac(secret_key, shoe_id, ciphertext)
    ):
        raise SealBroken(f"the sealed seed of shoe {shoe_id} fails its MAC (altered or wrong key)")
    return bytes(a ^ b for a, b in zip(ciphertext, _pad(secret_key, shoe_id), strict=True))


class SeedVault:
    """Sealed seeds in the `shoe_seeds` table of one database."""

    def __init__(self, database: Database, secret_key: bytes) -> None:
        self.database = database
        self._key = secret_key

    def __repr__(self) -> str:
        return f"SeedVault({self.database.dialect})"

    def store(self, shoe_id: ShoeId, seed: bytes) -> None:
        """Seal and keep a shoe's seed; a shoe's seed is kept once."""
        sealed = seal(self._key, shoe_id, seed)
        with self.database.transaction(write=True) as cursor:
            stored = self.database.execute(
                cursor,
                "INSERT INTO {shoe_seeds} (shoe_id, sealed) VALUES (?, ?)"
                " ON CONFLICT (shoe_id) DO NOTHING RETURNING shoe_id",
                (_row_key(shoe_id), sealed),
            ).fetchone()
        if stored is None:
            raise SeedAlreadySealed(f"shoe {shoe_id} already has a sealed seed")

    def unseal(self, shoe_id: ShoeId) -> bytes:
        """The seed of a shoe; `SeedNotFound` or `SealBroken` otherwise."""
        row = self._row(shoe_id)
        if row is None:
            raise SeedNotFound(f"no sealed seed for shoe {shoe_id}")
        return open_seal(self._key, shoe_id, bytes(row["sealed"]))

    def __contains__(self, shoe_id: ShoeId) -> bool:
        return self._row(shoe_id) is not None

    def _row(self, shoe_id: ShoeId) -> Any:
        with self.database.transaction(write=False) as cursor:
            return self.database.execute(
                cursor, "SELECT sealed FROM {shoe_seeds} WHERE shoe_id = ?", (_row_key(shoe_id),)
            ).fetchone()


def _row_key(shoe_id: ShoeId) -> str:
    return str(_normal(shoe_id))
