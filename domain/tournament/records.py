"""The records a tournament's state keeps besides its players' (`domain.tournament.entrants`):
the phase, the round's clock, the pauses and the step under way, a play-off and what settled it,
the seats given and their draw, a table's break, the organiser's interventions and
announcements, and the secret bets.
"""

from __future__ import annotations

from enum import StrEnum

import msgspec


class Phase(StrEnum):
    REGISTRATION = "registration"
    SEATED = "seated"  # drawn, the first round not started
    RUNNING = "running"  # a round is being played
    BETWEEN_ROUNDS = "between-rounds"
    FINISHED = "finished"


class Clock(msgspec.Struct, kw_only=True):
    """A round's clock, from the times the director recorded (seconds since the epoch)."""

    started_at: float
    paused_at: float | None = None
    paused_for: float = 0.0

    def elapsed(self, now: float) -> float:
        """Seconds of play so far: a pause stops the clock."""
        end = self.paused_at if self.paused_at is not None else now
        return max(0.0, end - self.started_at - self.paused_for)


class Pause(msgspec.Struct, kw_only=True):
    """A pause of the tournament, from the times recorded (`until` None: it lasts)."""

    at: float
    until: float | None = None

    def within(self, since: float, now: float) -> float:
        """How much of the pause falls between `since` and `now`."""
        end = now if self.until is None else min(self.until, now)
        return max(0.0, end - max(self.at, since))


class Step(msgspec.Struct, kw_only=True):
    """A step of a round under way: every table plays one coup. `coups`: each table's coups
    closed at its start (the coup to reach is one more); `chips`: each player's at its start."""

    number: int
    coups: dict[str, int]
    chips: dict[str, int]


class PlayOff(msgspec.Struct, kw_only=True):
    """Players tied on the line of a cut, to play an extra coup for `places` places."""

    round: int
    players: list[str]
    places: int


class PlayOffDecision(StrEnum):
    """What settled a play-off (`domain.tournament.stages.playoff_decision`)."""

    BETS = "bets"  # who bet in the play-off coup went before who did not
    CHIPS = "chips"  # the chips the play-off coup left them with
    AGAIN = "again"  # tied again: another play-off
    DRAW_ORDER = "draw-order"  # tied again after the last play-off: the seating draw's order


class PlayOffResult(msgspec.Struct, frozen=True, kw_only=True):
    """A play-off played: the tied players, who of them made no bet in it, what settled it."""

    round: int
    players: list[str]
    idle: list[str]
    decision: PlayOffDecision


class Seating(msgspec.Struct, frozen=True, kw_only=True):
    player: str
    table: str
    seat: int


class Draw(msgspec.Struct, kw_only=True):
    """The seating draw as recorded: everything needed to recompute it but the seed."""

    commitment: str
    algorithm: str
    entrants: list[str]  # in registration order, the order the stream shuffles
    tables: int
    seats: list[Seating] = msgspec.field(default_factory=list)  # the draw's seats, in its order


class Break(msgspec.Struct, frozen=True, kw_only=True):
    """A table broken: its players in seat order, and the order the seeded stream reseats them."""

    table: str
    players: tuple[str, ...]
    order: tuple[str, ...]


class Intervention(msgspec.Struct, frozen=True, kw_only=True):
    """An organiser's correction, as recorded: who, why, and the chips before and after."""

    kind: str
    player: str
    reason: str
    actor: str
    chips_before: int
    chips_after: int
    table: str | None = None


class Announcement(msgspec.Struct, frozen=True, kw_only=True):
    """What the organiser told the room (the big screen's ticker), when and who."""

    text: str
    at: float  # seconds since the epoch
    actor: str


class SecretBet(msgspec.Struct, kw_only=True):
    """A bet on a coup that nobody, the croupier and the organiser included, can read before
    its cards are dealt: only its commitment is recorded until the player reveals it."""

    player: str
    table: str
    coup: int
    round: int
    commitment: str
    settled: bool = False
