"""Actors: who may act for whom, decided here only.

An actor is a player id, or an official's id starting with `@` (`@croupier`, `@organiser`,
`@deadline`, `@director`...). An official acts for anyone; a player for themselves.
"""

from __future__ import annotations

from domain.errors import OutOfTurn

CROUPIER = "@croupier"
ORGANISER = "@organiser"


def is_official(actor: str) -> bool:
    """Officials act for anyone at the table."""
    return actor.startswith("@")


def require_actor(actor: str, player: str | None, doing: str, *,
                  rule: str = "not-your-turn") -> None:
    """Refuse `actor` doing what is `player`'s to do (`player` None: an official's step)."""
    if is_official(actor) or (player is not None and actor == player):
        return
    raise OutOfTurn(f"{actor} may not {doing}: it is for {player or 'an official'}", rule=rule)
