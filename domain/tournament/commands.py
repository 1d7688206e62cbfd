"""Tournament commands: what the organiser, a player or the director asks a tournament to do,
in the imperative.

Like the table's (`domain.table.commands`), each carries the caller's `command_id` and the `actor`,
and is a msgspec struct tagged by `kind`. A director's command carries its lease's `epoch`
(None: not a director's command); one from an older epoch is refused. The seating seed is
never in a command: `Tournament.execute` asks the service's port for it when a step needs it.
"""

from __future__ import annotations

from typing import get_args

import msgspec

from domain.commands import Command
from domain.game.coup import Outcome
from domain.limits import AnnouncementText, Name
from domain.tournament.entrants import Bust


class RegisterPlayer(Command, tag="register"):
    """Register a player (after the draw: seated at once); a busted player: a re-entry."""

    player: Name
    bot: bool = False


class UnregisterPlayer(Command, tag="unregister"):
    player: Name


class ReenterPlayer(Command, tag="reenter"):
    """A busted player buys in again during late registration and is seated at once."""

    player: Name


class DrawSeating(Command, tag="draw-seating"):
    """Draw the seats from the seating seed, recording only its commitment."""


class AppointDirector(Command, tag="appoint-director"):
    epoch: int


class PauseTournament(Command, tag="pause"):
    at: float


class ResumeTournament(Command, tag="resume"):
    at: float


class StartRound(Command, tag="start-round"):
    """Start the next round at `at` (a stage's first round starts the stage first)."""

    at: float = 0.0
    epoch: int | None = None


class StartBreak(Command, tag="start-break"):
    """Start the break the format calls for after the round just ended, at `at`."""

    at: float
    epoch: int | None = None


class StartStep(Command, tag="start-step"):
    """Every table plays one coup: each table's coups closed, each player's chips, now."""

    coups: dict[str, int]
    chips: dict[str, int]
    epoch: int | None = None


class EndStep(Command, tag="end-step"):
    epoch: int | None = None


class EndRound(Command, tag="end-round"):
    """End the round with every player's chips (secret bets never revealed forfeited
    first), and where the format sets `min_bets` the bets each has made so far (coups with
    chips at stake at the tournament's tables); place whoever the round's end puts out."""

    chips: dict[str, int]
    coups_bet: dict[str, int] | None = None
    epoch: int | None = None


class SettlePlayOff(Command, tag="settle-play-off"):
    """A play-off coup's result: each tied player's chips after it, at `table`, and who of
    them made no bet in it."""

    table: str
    chips: dict[str, int]
    idle: list[str] = msgspec.field(default_factory=list)
    epoch: int | None = None


class RecordBustOuts(Command, tag="record-bust-outs"):
    """The players a coup at a table left without chips, with their chips at its start."""

    table: str
    coup: int
    busted: list[Bust]
    epoch: int | None = None


class BalanceTables(Command, tag="balance"):
    """Break and move until the tables are balanced; `chips`: each player's chips now (only
    the players who move are read). `breaking`: a table the organiser breaks first."""

    chips: dict[str, int]
    epoch: int | None = None
    breaking: str | None = None


class PlaceSecretBet(Command, tag="place-secret-bet"):
    player: Name
    table: str
    coup: int
    commitment: str


class RevealSecretBet(Command, tag="reveal-secret-bet"):
    """Reveal a secret bet once its coup is dealt (`outcome`: the punter's hand's result;
    `banker_point`: the banker's final point, which a No-Commission table pays by)."""

    player: Name
    spot: str
    amount: int
    nonce: str
    outcome: Outcome
    banker_point: int | msgspec.UnsetType = msgspec.UNSET  # unset: as commands were sent


class Intervene(Command, tag="intervene"):
    """An organiser's intervention: `move` (to `table`), `break-table` (`table`, reseated
    from the seed), `disqualify`, `correct-chips` and `penalise` (by `delta`),
    `add-late-player`. `chips`: each player's chips now."""

    intervention: str
    player: str
    reason: str
    chips: dict[str, int]
    delta: int = 0
    table: str | None = None


class FinishTournament(Command, tag="finish"):
    """Once one player is left: award the prizes, then finish, revealing the seed."""

    epoch: int | None = None


class PublishResults(Command, tag="publish-results"):
    """Declare the finished results final; `open_disputes`: each open dispute of its
    tables, described (e.g. "coup 3 at t1"), which refuse it."""

    at: float
    open_disputes: list[str] = msgspec.field(default_factory=list)


class MakeAnnouncement(Command, tag="announce"):
    """Tell the room something (the big screen's ticker): 1 to 280 printable characters."""

    text: AnnouncementText
    at: float


class CancelTournament(Command, tag="cancel"):
    """Call the tournament off before its start: out of the lobby, kept in the record."""


class ArchiveTournament(Command, tag="archive"):
    """File the finished tournament away: out of the lobby, kept in the record."""


TournamentCommand = (
    RegisterPlayer | UnregisterPlayer | ReenterPlayer | DrawSeating | AppointDirector
    | PauseTournament | ResumeTournament | StartRound | StartStep | EndStep | EndRound
    | SettlePlayOff | RecordBustOuts | BalanceTables | PlaceSecretBet | RevealSecretBet
    | Intervene | FinishTournament | PublishResults | CancelTournament | ArchiveTournament
    | MakeAnnouncement | StartBreak
)

TOURNAMENT_COMMANDS: tuple[type[Command], ...] = get_args(TournamentCommand)
"""Every tournament command, to refuse anything else at run time."""
