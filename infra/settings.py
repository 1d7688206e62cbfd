"""Process settings read from the environment, with explicit (command line) values winning.

| variable              | default                                             |
|-----------------------|-----------------------------------------------------|
| `SABOT_DATABASE_URL`  | `sqlite:///.sabot/sabot.db` (relative to the cwd)   |
| `SABOT_BROKER_URL`    | `""`: the embedded broker                           |
| `SABOT_SECRET_KEY`    | hex; else generated once into `.sabot/secret.key`   |
| `SABOT_LOG_JSON`      | false                                               |
| `SABOT_CONNECT_TIMEOUT` | 3: seconds for PostgreSQL or Redis to let us in   |
| `SABOT_OUTBOX_RETENTION` | 86400: seconds a dispatched follow-up effect is kept |
| `SABOT_WRITERS_WAIT_SECONDS` | 10: a checkpoint's or a view's wait for writers |
| `SABOT_LOCK_WAIT_SECONDS` | 10: a command's wait for another process's writer of its aggregate |
| `SABOT_IDLE_IN_TRANSACTION_SECONDS` | 5: a session idle in a transaction ends |
| `SABOT_LIVE_PER_ADDRESS` | 20: live event streams (SSE) one client address may hold open |
| `SABOT_LIVE_TOTAL`    | 2000: live event streams an API process holds open in all |
| `SABOT_WITNESSES`     | none: `URL VKEY`, comma-separated: witnesses checkpoints go to |
| `SABOT_PIN_TRIES`     | 5: wrong PINs that lock a sign-in slip until a new one is made |

The secret key seals shoe seeds (see `infra.store.vault`): losing it makes sealed seeds unreadable,
leaking it makes them readable before their reveal. A generated key file is created with mode
0600 and refused if it is later readable by others (as ssh does with private keys).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

import msgspec

from infra.errors import SettingsError

HOME = Path(".sabot")
DEFAULT_DATABASE_URL = f"sqlite:///{HOME}/sabot.db"
SECRET_KEY_FILE = "secret.key"
SECRET_KEY_BYTES = 32
MIN_SECRET_KEY_BYTES = 16
DEFAULT_CONNECT_TIMEOUT = 3.0
MAX_CONNECT_TIMEOUT = 300.0
DEFAULT_OUTBOX_RETENTION = 24 * 3600.0
MAX_OUTBOX_RETENTION = 365 * 24 * 3600.0
DEFAULT_WRITERS_WAIT = 10.0
MAX_WRITERS_WAIT = 3600.0
DEFAULT_LOCK_WAIT = 10.0
MAX_LOCK_WAIT = 600.0
DEFAULT_IDLE_IN_TRANSACTION = 5.0  # eventsourcing's own default, now named
MAX_IDLE_IN_TRANSACTION = 24 * 3600.0
DEFAULT_LIVE_PER_ADDRESS = 20
DEFAULT_LIVE_TOTAL = 2000
MAX_LIVE_STREAMS = 1_000_000

_TRUE = frozenset({"1", "true", "yes", "on", "y", "t"})
_FALSE = frozenset({"", "0", "false", "no", "off", "n", "f"})


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    database_url: str
    broker_url: str
    secret_key: bytes
    log_json: bool

    def __repr__(self) -> str:
        return (
            f"Settings(database_url={redact_url(self.database_url)!r}, "
            f"broker_url={redact_url(self.broker_url)!r}, secret_key=<{len(self.secret_key)} "
            f"bytes>, log_json={self.log_json!r})"
        )


def load_settings(
    database_url: str | None = None,
    broker_url: str | None = None,
    secret_key: str | None = None,
    log_json: bool | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
) -> Settings:
    """Settings from explicit arguments, else the environment, else the defaults."""
    env = os.environ if environ is None else environ
    folder = HOME if home is None else home
    return Settings(
        database_url=resolve_database_url(database_url, environ=env),
        broker_url=broker_url if broker_url is not None else env.get("SABOT_BROKER_URL", ""),
        secret_key=_secret_key(secret_key, env, folder),
        log_json=log_json if log_json is not None else _flag(env.get("SABOT_LOG_JSON", "")),
    )


def resolve_database_url(
    explicit: str | None = None, *, environ: Mapping[str, str] | None = None
) -> str:
    """The database URL alone, for commands that need no secret (e.g. `sabot audit verify`)."""
    env = os.environ if environ is None else environ
    return explicit or env.get("SABOT_DATABASE_URL") or DEFAULT_DATABASE_URL


def absolute_database_url(url: str) -> str:
    """`url` with a relative SQLite path made absolute: a worker opens the URL it is sent from
    its own directory."""
    prefix = "sqlite:///"
    if url.startswith(prefix) and not url.startswith(prefix + "/") and ":memory:" not in url:
        return prefix + str(Path(url[len(prefix):]).resolve())
    return url


def redact_url(url: str) -> str:
    """The URL with any password replaced by `***`, safe to print or log."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}"


def connect_timeout(environ: Mapping[str, str] | None = None) -> float:
    """Seconds to wait for a server to accept a connection (`SABOT_CONNECT_TIMEOUT`)."""
    return _seconds("SABOT_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT, MAX_CONNECT_TIMEOUT,
                    environ)


def outbox_retention(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a dispatched follow-up effect is kept in the outbox (`SABOT_OUTBOX_RETENTION`)."""
    return _seconds("SABOT_OUTBOX_RETENTION", DEFAULT_OUTBOX_RETENTION, MAX_OUTBOX_RETENTION,
                    environ)


def writers_wait(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a reader in notification order (a checkpoint, a view's catch-up) waits for the
    writers in flight before it gives up and tries again later (`SABOT_WRITERS_WAIT_SECONDS`)."""
    return _seconds("SABOT_WRITERS_WAIT_SECONDS", DEFAULT_WRITERS_WAIT, MAX_WRITERS_WAIT,
                    environ)


def lock_wait(environ: Mapping[str, str] | None = None) -> float:
    """Seconds a command waits for the writer of its aggregate in another process before it
    is answered "busy, try again" (`SABOT_LOCK_WAIT_SECONDS`; `infra.store.aggregate_locks`)."""
    return _seconds("SABOT_LOCK_WAIT_SECONDS", DEFAULT_LOCK_WAIT, MAX_LOCK_WAIT, environ)


def idle_in_transaction(environ: Mapping[str, str] | None = None) -> float:
    """Seconds after which PostgreSQL ends a session of ours left idle inside a transaction
    (`SABOT_IDLE_IN_TRANSACTION_SECONDS`): a writer stuck mid-transaction holds its locks,
    and the readers waiting for it, no longer than that."""
    return _seconds("SABOT_IDLE_IN_TRANSACTION_SECONDS", DEFAULT_IDLE_IN_TRANSACTION,
                    MAX_IDLE_IN_TRANSACTION, environ)


def live_limits(environ: Mapping[str, str] | None = None) -> tuple[int, int]:
    """How many live event streams (SSE) one client address may hold open in an API process
    (`SABOT_LIVE_PER_ADDRESS`), and how many the process holds in all (`SABOT_LIVE_TOTAL`)."""
    return (_count("SABOT_LIVE_PER_ADDRESS", DEFAULT_LIVE_PER_ADDRESS, environ),
            _count("SABOT_LIVE_TOTAL", DEFAULT_LIVE_TOTAL, environ))


def witnesses(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The witnesses a writer pushes each checkpoint to (`SABOT_WITNESSES`): pairs of the
    witness's URL (its tlog-witness submission prefix, http or https) and its verifier key
    (C2SP signed-note vkey, checked where it is used: `infra.store.witness_push`)."""
    text = (os.environ if environ is None else environ).get("SABOT_WITNESSES", "")
    pairs = []
    for entry in filter(None, (part.strip() for part in text.split(","))):
        parts = entry.split()
        if len(parts) != 2 or not parts[0].startswith(("http://", "https://")):
            raise SettingsError("SABOT_WITNESSES is comma-separated `URL VKEY` pairs (an http "
                                f"or https URL, a space, a verifier key), not {entry!r}")
        pairs.append((parts[0], parts[1]))
    return pairs


# --- sign-in slips and the proxy in front (issue 35) ---
DEFAULT_PIN_TRIES = 5


def pin_tries(environ: Mapping[str, str] | None = None) -> int:
    """Wrong PINs a sign-in slip takes before it is locked (`SABOT_PIN_TRIES`)."""
    return _count("SABOT_PIN_TRIES", DEFAULT_PIN_TRIES, environ)


def _count(name: str, default: int, environ: Mapping[str, str] | None) -> int:
    text = (os.environ if environ is None else environ).get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or not 0 < int(text) <= MAX_LIVE_STREAMS:
        raise SettingsError(f"{name} must be a whole number in [1, {MAX_LIVE_STREAMS}], "
                            f"not {text!r}")
    return int(text)


def _seconds(name: str, default: float, maximum: float,
             environ: Mapping[str, str] | None) -> float:
    text = (os.environ if environ is None else environ).get(name, "")
    if not text.strip():
        return default
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= maximum:
        raise SettingsError(f"{name} must be seconds in (0, {maximum:.0f}], not {text!r}")
    return seconds


def _flag(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise SettingsError(f"SABOT_LOG_JSON must be true or false, not {value!r}")


def _secret_key(explicit: str | None, env: Mapping[str, str], folder: Path) -> bytes:
    given = explicit if explicit is not None else env.get("SABOT_SECRET_KEY")
    if given:
        return _parse_key(given, "SABOT_SECRET_KEY")
    return _key_file(folder / SECRET_KEY_FILE)


def _parse_key(text: str, origin: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        raise SettingsError(f"{origin} must be hexadecimal") from None
    if len(key) < MIN_SECRET_KEY_BYTES:
        raise SettingsError(f"{origin} must hold at least {MIN_SECRET_KEY_BYTES} bytes")
    return key


def _key_file(path: Path) -> bytes:
    """Read the generated key, creating it first if missing.

    The key is written to a private temporary file, then linked into place: a concurrent
    process either wins the link or reads the complete key of the one that did.
    """
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(secrets.token_hex(SECRET_KEY_BYTES) + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    mode = path.stat().st_mode & 0o777
    if mode & 0o077:
        raise SettingsError(f"{path} is readable by others (mode {mode:o}): chmod 600 it")
    return _parse_key(path.read_text(), str(path))
