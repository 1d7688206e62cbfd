"""The seed vault and the secret key: seeds sealed apart from the events, opened only with
the key, refused when tampered with; the key generated once, private, and reused."""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import pytest

from infra.errors import SealBroken, SeedAlreadySealed, SeedNotFound, SettingsError, VaultError
from infra.settings import load_settings
from infra.store.opening import open_store
from infra.store.vault import SEALED_SIZE, SeedVault, open_seal, seal
from tests.integration.test_audit import sql
from tests.integration.test_store import ToyApp, a_toy

KEY = bytes(range(32))


@pytest.fixture
def vault(database_url: str) -> Iterator[SeedVault]:
    with open_store(database_url) as store:
        yield SeedVault(store.database, KEY)


def test_seal_round_trip_and_layout() -> None:
    shoe, seed = uuid4(), secrets.token_bytes(32)
    sealed = seal(KEY, shoe, seed)
    assert len(sealed) == SEALED_SIZE
    assert seed not in sealed
    assert open_seal(KEY, shoe, sealed) == seed


def test_seal_is_the_documented_computation() -> None:
    import hmac

    shoe, seed = uuid4(), secrets.token_bytes(32)
    pad = hmac.new(KEY, b"sabot-seed-v1" + shoe.bytes, hashlib.sha256).digest()
    ciphertext = bytes(a ^ b for a, b in zip(seed, pad, strict=True))
    mac = hmac.new(KEY, b"sabot-seal-mac" + shoe.bytes + ciphertext, hashlib.sha256).digest()
    assert seal(KEY, shoe, seed) == ciphertext + mac


def test_wrong_key_or_other_shoe_breaks_the_seal() -> None:
    shoe, seed = uuid4(), secrets.token_bytes(32)
    sealed = seal(KEY, shoe, seed)
    with pytest.raises(SealBroken):
        open_seal(bytes(32), shoe, sealed)
    with pytest.raises(SealBroken):
        open_seal(KEY, uuid4(), sealed)
    with pytest.raises(SealBroken):
        open_seal(KEY, shoe, sealed[:-1])


def test_a_seed_is_32_bytes() -> None:
    with pytest.raises(VaultError, match="32 bytes"):
        seal(KEY, uuid4(), b"short")


def test_store_and_unseal(vault: SeedVault) -> None:
    shoe, seed = uuid4(), secrets.token_bytes(32)
    vault.store(shoe, seed)
    assert shoe in vault
    assert vault.unseal(shoe) == seed
    assert vault.unseal(str(shoe)) == seed  # a UUID's text names the same shoe
    commitment = hashlib.sha256(seed).hexdigest()  # a text id works too
    vault.store(commitment, seed)
    assert vault.unseal(commitment) == seed


def test_a_shoe_is_sealed_once(vault: SeedVault) -> None:
    shoe = uuid4()
    vault.store(shoe, secrets.token_bytes(32))
    with pytest.raises(SeedAlreadySealed):
        vault.store(shoe, secrets.token_bytes(32))


def test_unknown_shoe(vault: SeedVault) -> None:
    with pytest.raises(SeedNotFound):
        vault.unseal(uuid4())
    assert uuid4() not in vault


def test_tampered_row_is_refused(database_url: str, vault: SeedVault) -> None:
    shoe, other = uuid4(), uuid4()
    vault.store(shoe, secrets.token_bytes(32))
    vault.store(other, secrets.token_bytes(32))
    sql(
        database_url,
        "UPDATE shoe_seeds SET sealed = (SELECT sealed FROM shoe_seeds WHERE shoe_id = ?)"
        " WHERE shoe_id = ?",
        (str(other), str(shoe)),
    )
    with pytest.raises(SealBroken):
        vault.unseal(shoe)
    select = "SELECT sealed FROM shoe_seeds WHERE shoe_id = ?"
    (sealed,) = sql(database_url, select, (str(other),))[0]
    flipped = bytes([sealed[0] ^ 1]) + bytes(sealed[1:])
    sql(database_url, "UPDATE shoe_seeds SET sealed = ? WHERE shoe_id = ?", (flipped, str(other)))
    with pytest.raises(SealBroken):
        vault.unseal(other)


def test_seed_is_nowhere_in_the_event_store(database_url: str) -> None:
    seed = secrets.token_bytes(32)
    with ToyApp(url=database_url, secret_key=KEY) as app:
        app.save(a_toy())
        app.vault.store(uuid4(), seed)
        assert app.vault is app.vault
    for table in ("stored_events", "event_chain", "shoe_seeds"):
        for row in sql(database_url, f"SELECT * FROM {table}"):
            for value in row:
                assert seed not in (bytes(value) if isinstance(value, bytes | memoryview) else b"")


def test_secret_key_file_is_generated_private_and_reused(tmp_path: Path) -> None:
    home = tmp_path / ".sabot"
    first = load_settings(environ={}, home=home)
    key_file = home / "secret.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert load_settings(environ={}, home=home).secret_key == first.secret_key
    assert [p.name for p in home.iterdir()] == ["secret.key"]


def test_secret_key_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    load_settings(environ={}, home=tmp_path)
    os.chmod(tmp_path / "secret.key", 0o644)
    with pytest.raises(SettingsError, match="chmod 600"):
        load_settings(environ={}, home=tmp_path)


def test_secret_key_from_the_environment(tmp_path: Path) -> None:
    settings = load_settings(environ={"SABOT_SECRET_KEY": KEY.hex()}, home=tmp_path)
    assert settings.secret_key == KEY
    assert not (tmp_path / "secret.key").exists()
    with pytest.raises(SettingsError, match="hexadecimal"):
        load_settings(environ={"SABOT_SECRET_KEY": "not hex"}, home=tmp_path)
    with pytest.raises(SettingsError, match="at least 16 bytes"):
        load_settings(environ={"SABOT_SECRET_KEY": "abcd"}, home=tmp_path)
