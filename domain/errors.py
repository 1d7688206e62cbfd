"""Domain errors: a broken rule is reported, never a crash, and the state is left unchanged."""

from __future__ import annotations


class DomainError(Exception):
    """Something the rules or the table's state refuse. `rule` is a stable, machine-readable key."""

    status = 422

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(message)
        self.message = message
        self.rule = rule


class RuleViolation(DomainError):
    """A step the rules of play forbid (drawing on 7, a fourth card, a stake beyond the bank)."""


class OutOfTurn(DomainError):
    """A step that is legal in the game but not now, or not by this actor."""

    status = 409


class Forbidden(DomainError):
    """A step that is someone else's to take, whoever the caller acts for."""

    status = 403


class NotFound(DomainError):
    """An unknown table, tournament, coup or player."""

    status = 404
