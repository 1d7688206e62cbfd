"""Who sent the command this process is applying: the sender the command log records with it.

A command sent with a token is sent by that token's subject: `player:<name>` for a player's
token (whichever of their tokens), `<role>:<token id>` for an official's. Everything else (the
director, the workers, the clock, the command line) is the house, `house`. The API names the
sender of each request (`api.routes_tables.grant_of`); the command log records it, sealed with
the store's signing key (`infra.store.command_log.claim_commands`), and `sabot audit verify` checks
that an event whose actor is a person came from that person (`infra.audit.attribution`).

The sender is a context variable: a request's worker thread runs in a copy of the request's
context, and an effect run after a command (`infra.store.outbox`) is sent by the house again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

HOUSE = "house"
PLAYER = "player"

_SENDER: ContextVar[str] = ContextVar("sabot_sender", default=HOUSE)


def player_sender(player: str) -> str:
    """The sender of a command a player's own token sent."""
    return f"{PLAYER}:{player}"


def current_sender() -> str:
    return _SENDER.get()


def send_as(sender: str) -> None:
    """Name the sender of the commands the rest of this context applies (a request's)."""
    _SENDER.set(sender)


@contextmanager
def sending_as(sender: str) -> Iterator[None]:
    """Name the sender of the commands applied within."""
    token = _SENDER.set(sender)
    try:
        yield
    finally:
        _SENDER.reset(token)
