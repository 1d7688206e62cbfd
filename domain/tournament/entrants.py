"""A tournament's players: where each stands (registered, seated, out, placed), where they
sit, their chips as the tournament last recorded them, and how players leave play together
(an exit: one coup's bust-outs at one table, or a round's cut)."""

from __future__ import annotations

from enum import StrEnum

import msgspec


class Status(StrEnum):
    REGISTERED = "registered"  # waiting for a seat (the draw, or a late seat)
    SEATED = "seated"
    OUT = "out"  # busted or cut, finishing position not yet given
    PLACED = "placed"


class Entrant(msgspec.Struct, kw_only=True):
    """A player in the tournament. `draw_rank`: the order in which they were first seated (the
    draw's order, then late seats); it breaks ties between players."""

    player: str
    status: Status = Status.REGISTERED
    bot: bool = False  # a house bot, played by the workers
    entries: int = 1
    draw_rank: int | None = None
    table: str | None = None  # where they sit, or sat last
    seat: int | None = None
    chips: int = 0  # as last recorded by the tournament
    moves: int = 0
    position: int | None = None
    tied: int = 0  # how many players share positions position .. position + tied - 1
    prize: int | None = None  # awarded


class Bust(msgspec.Struct, frozen=True, kw_only=True):
    """A player out: chips at the start of the coup they busted in, or at the end of the round
    they were cut at. Players out together are ranked by these chips."""

    player: str
    chips: int


class Exit(msgspec.Struct, kw_only=True):
    """Players out at the same moment: one coup's bust-outs at one table, or a round's cut."""

    round: int
    table: str | None  # None: a cut, over every table
    coup: int | None  # None: a cut
    players: list[Bust]
    short: list[str] = msgspec.field(default_factory=list)  # of the minimum of bets: ranked last

    def rank(self, bust: Bust) -> tuple[bool, int]:
        """Smaller ranks better: the format's minimum of bets met, then more chips."""
        return bust.player in self.short, -bust.chips

    def ranked(self) -> list[Bust]:
        """The players out together, the best first (equal ranks in the order recorded)."""
        return sorted(self.players, key=self.rank)
