"""Errors raised by the persistence layer, each with a one-line message fit for a terminal.

`DuplicateCommand` is not a failure of the store: it tells the caller that a command with
this id was already applied, and what it produced, so a retried command is answered, not
re-applied. A version conflict (two commands racing on one aggregate) stays eventsourcing's
`IntegrityError`, which the API maps to 409.
"""

from __future__ import annotations

from typing import NamedTuple
from uuid import UUID


class RecordedCommand(NamedTuple):
    """What an applied command produced: versions `first_version..last_version` of a stream."""

    originator_id: UUID
    first_version: int
    last_version: int


class StoreError(Exception):
    """The store cannot be opened or used as asked (bad URL, missing database, corrupt chain)."""


class UnsupportedDatabaseURL(StoreError):
    """A database URL this layer cannot open (unknown scheme, missing part, unknown option)."""


class NotAStore(StoreError):
    """The URL points at something that is not a Sabot store (no database, no tables)."""


class ChainError(StoreError):
    """The hash chain cannot be extended: its table disagrees with the stored events."""


class WritersInFlight(StoreError):
    """A reader in notification order (a checkpoint, a view's catch-up) gave up waiting for
    the writers in flight (`SABOT_WRITERS_WAIT_SECONDS`): it tries again later."""


class DuplicateCommand(Exception):
    """A command id that was already recorded: nothing was written this time."""

    def __init__(self, command_id: str, recorded: RecordedCommand | None) -> None:
        where = (
            f" (stream {recorded.originator_id}, versions "
            f"{recorded.first_version}..{recorded.last_version})"
            if recorded
            else ""
        )
        super().__init__(f"command {command_id} was already applied{where}")
        self.command_id = command_id
        self.recorded = recorded


class SettingsError(Exception):
    """A setting read from the environment or the command line is malformed."""


class VaultError(Exception):
    """The seed vault refuses: unknown shoe, seed already sealed, or a seal that fails its MAC."""


class SeedNotFound(VaultError):
    """No seed was sealed for this shoe."""


class SeedAlreadySealed(VaultError):
    """A shoe's seed is sealed once: sealing another under the same id would reuse the pad."""


class SealBroken(VaultError):
    """The sealed seed does not match its MAC: altered row, other shoe's row, or wrong key."""


class ServiceUnavailable(StoreError):
    """A server this process needs (PostgreSQL, or Redis as the broker) does not answer, or
    refuses us: `cannot open URL (Service): cause`, the URL's password redacted."""

    def __init__(self, service: str, url: str, cause: str) -> None:
        super().__init__(f"cannot open {url} ({service}): {cause}")
        self.service = service
        self.url = url
