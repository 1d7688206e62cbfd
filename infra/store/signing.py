"""The signing key: where it lives, how it is made, and what it signs.

The key is an Ed25519 private key (`cryptography`), kept in a PEM file (PKCS#8, mode 0600)
that never enters the database. Which file, for a store:

| store                      | key file                                                     |
|----------------------------|--------------------------------------------------------------|
| `SABOT_SIGNING_KEY` is set | that path; it must exist, else the process refuses to start  |
| SQLite file `PATH`         | `PATH.signing.key`, created beside the store on first use    |
| PostgreSQL                 | `.sabot/signing.key` (working directory), created on first use |
| `sqlite:///:memory:`       | a key generated in memory for the process (tests)            |

A production store sets `SABOT_SIGNING_KEY` (created beforehand with `sabot keys create
--out PATH`), so a missing or unreadable key is an error, never a new key. The embedded
default needs no configuration: its key is created beside it, with a warning in the log.

What is signed (a 64-byte Ed25519 signature each):

    head(n, g)      = "sabot-head-v1\\n" || u64 n || g          (g: the global chain digest at
                                                                 notification n: infra.store.chain)
    checkpoint      = "sabot-checkpoint-v1\\n" || its text     (`infra.store.checkpoints`)
    witness         = "sabot-witness-v1\\n" || the checkpoint's text
    command         = "sabot-command-v1\\n" || the command log row's id, stream, first and
                      last versions and sender, each followed by "\\n" (`command_message`)

A key is named by its id: the first 8 bytes of SHA-256(raw public key), in hex.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from uuid import UUID

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from infra.errors import StoreError
from infra.store.database import Database, SQLiteDatabase

HOME = Path(".sabot")
KEY_SUFFIX = ".signing.key"
DEFAULT_KEY_FILE = HOME / "signing.key"
SIGNATURE_SIZE = 64
HEAD_PREFIX = b"sabot-head-v1\n"

log = logging.getLogger("sabot.signing")


class SigningKeyError(StoreError):
    """The signing key is missing, unreadable, not private, or not an Ed25519 key."""


def key_id(public_key: bytes) -> str:
    return hashlib.sha256(public_key).digest()[:8].hex()


class Signer:
    """An Ed25519 private key and its public half."""

    def __init__(self, private: Ed25519PrivateKey, origin: str) -> None:
        self._private = private
        self.origin = origin
        self.public_key = private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.key_id = key_id(self.public_key)

    def __repr__(self) -> str:
        return f"Signer(key_id={self.key_id}, origin={self.origin!r})"

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)

    def sign_head(self, notification_id: int, digest: bytes) -> bytes:
        return self.sign(head_message(notification_id, digest))


def head_message(notification_id: int, digest: bytes) -> bytes:
    return HEAD_PREFIX + notification_id.to_bytes(8, "big") + digest


COMMAND_PREFIX = b"sabot-command-v1\n"


def command_message(command_id: str, originator_id: UUID, first: int, last: int,
                    sender: str) -> bytes:
    """What seals a command log row: who sent the command, and what it produced."""
    fields = (command_id, originator_id.hex, str(first), str(last), sender)
    return COMMAND_PREFIX + b"".join(f"{field}\n".encode() for field in fields)


def signature_valid(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def create_key(path: Path) -> Signer:
    """Write a new private key to `path` (mode 0600); an existing file is never replaced."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(pem)
    try:
        os.link(draft, path)  # fails if the key exists: a concurrent creator won
    except FileExistsError:
        raise SigningKeyError(f"{path} already exists: a signing key is never replaced") from None
    finally:
        draft.unlink()
    return Signer(private, str(path))


def load_key(path: Path) -> Signer:
    try:
        mode = path.stat().st_mode & 0o777
        data = path.read_bytes()
    except FileNotFoundError:
        raise SigningKeyError(
            f"the signing key {path} does not exist: create it with "
            f"`sabot keys create --out {path}`"
        ) from None
    except OSError as error:
        raise SigningKeyError(f"cannot read the signing key {path}: {error.strerror}") from None
    if mode & 0o077:
        raise SigningKeyError(f"{path} is readable by others (mode {mode:o}): chmod 600 it")
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise SigningKeyError(f"{path} is not an unencrypted PEM private key") from None
    if not isinstance(private, Ed25519PrivateKey):
        raise SigningKeyError(f"{path} is not an Ed25519 key")
    return Signer(private, str(path))


def key_path(env: Mapping[str, str]) -> Path | None:
    """The key file of the store an eventsourcing environment names (None: in memory)."""
    configured = env.get("SABOT_SIGNING_KEY")
    if configured:
        return Path(configured)
    dbname = env.get("SQLITE_DBNAME")
    if dbname is not None:
        if dbname.startswith("file:") or dbname == ":memory:":
            return None
        return Path(dbname + KEY_SUFFIX)
    return DEFAULT_KEY_FILE


_LOADED: dict[Path, Signer] = {}
_LOADING = threading.Lock()


def signer_for(env: Mapping[str, str]) -> Signer:
    """The signer of the store `env` names: configured keys must exist; default keys are
    created on first use; an in-memory store gets a key of its own."""
    path = key_path(env)
    if path is None:
        return Signer(Ed25519PrivateKey.generate(), "memory")
    with _LOADING:
        absolute = path.resolve()
        if absolute in _LOADED:
            return _LOADED[absolute]
        if not env.get("SABOT_SIGNING_KEY") and not path.exists():
            try:
                create_key(path)
                log.warning("created the signing key %s (set SABOT_SIGNING_KEY to choose one)",
                            path)
            except SigningKeyError:
                pass  # another process created it first
        signer = _LOADED[absolute] = load_key(path)
        return signer


def key_env(database: Database) -> dict[str, str]:
    """What `key_path` needs to know of a store: the setting, and the SQLite file if any."""
    env = {"SABOT_SIGNING_KEY": os.environ.get("SABOT_SIGNING_KEY", "")}
    if isinstance(database, SQLiteDatabase):
        env["SQLITE_DBNAME"] = str(database.datastore.pool.db_name)
    return env


def public_key_of(env: Mapping[str, str]) -> bytes | None:
    """The public key of the store's signing key, if its file can be read (never created)."""
    path = key_path(env)
    if path is None or not path.exists():
        return None
    return load_key(path).public_key
