"""The API's request and response bodies, as msgspec structs (also the OpenAPI schema).

A table is shown as its caller may see it (`api.visibility`): a card the caller may not see
is `null` in its hand, so the number of cards is public but not their faces. The shoe is
shown by its public record (commitment, contributions, cut, how many cards are out), never
by its seed nor by the list of cards it has given.
"""

from __future__ import annotations

import typing
import uuid
from typing import Annotated, Any

import msgspec

from domain.game.cards import RANKS, SUITS
from domain.game.coup import Outcome, Side
from domain.game.coverage import Stake
from domain.game.payouts import Bet
from domain.game.settings import TableSettings, Variant
from domain.limits import Name
from domain.tournament.settings import TournamentSettings
from workers.heartbeat import Workers


class OpenTable(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Open a table: its name (its id follows from it), variant and setting overrides."""

    name: Name
    variant: Variant
    settings: dict[str, Any] = msgspec.field(default_factory=dict)
    tournament: Name | None = None


FORMAT_FIELDS = TournamentSettings.__struct_fields__
"""The fields of a tournament's format, each of which a request may give over a preset."""

_FORMAT_HINTS = typing.get_type_hints(TournamentSettings)

if typing.TYPE_CHECKING:
    class FormatChoice(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
        """What a type checker sees of the struct built below."""

        preset: str | None = None
        format: TournamentSettings | None = None

        def __getattr__(self, name: str) -> Any: ...
else:
    FormatChoice = msgspec.defstruct(
        "FormatChoice",
        [("preset", str | None, None), ("format", TournamentSettings | None, None),
         *((name, _FORMAT_HINTS[name] | None, None) for name in FORMAT_FIELDS)],
        kw_only=True, forbid_unknown_fields=True,
        namespace={"__module__": __name__, "__doc__": (
            "A `preset` or a whole `format`, and any field of a format given beside it over "
            "the preset's (or the format's): the fields of `TournamentSettings`, derived from "
            "it, not copied.")})


def format_overrides(body: msgspec.Struct) -> dict[str, Any]:
    """The format fields a `FormatChoice` body gives (None: not given)."""
    return {name: value for name in FORMAT_FIELDS
            if (value := getattr(body, name)) is not None}


CardCode = Annotated[str, msgspec.Meta(pattern=f"^[{RANKS}][{SUITS}]$",
                                        description="a card: rank then suit (`9h`, `Ts`)")]
HAND_MOST = 3
"""Cards a hand may hold: two, and a third."""


class LookAhead(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """The tableau's question (`POST /tables/{table}/tableau`): the cards the caller knows of
    each hand, in deal order, and the card dealt next, if any."""

    known: dict[Side, Annotated[list[CardCode], msgspec.Meta(max_length=HAND_MOST)]] = \
        msgspec.field(default_factory=dict)
    card: CardCode | None = None


class Recorded(msgspec.Struct, frozen=True):
    """What a command did: the table, its version after, the events (as the caller may see),
    and `position`, the log position of its last event: a view read given it as `?at=` shows
    this command (null when the command id was answered before, or the table's events live
    in another database)."""

    table_id: uuid.UUID
    version: int
    events: list[dict[str, Any]]
    position: int | None = None


class SeatView(msgspec.Struct, frozen=True):
    player: str
    chips: int
    side: Side | None
    standing: bool


class HandView(msgspec.Struct, frozen=True):
    """A hand of the coup: `cards` in deal order, `null` for a card the caller may not see;
    `point` only when every card is visible; `holder` decides for it (None: the croupier)."""

    side: Side
    cards: list[str | None]
    point: int | None
    holder: str | None


class CoupView(msgspec.Struct, frozen=True):
    number: int
    hands: list[HandView]
    naturals: list[Side]
    outcomes: dict[Side, Outcome] | None


class ShoeView(msgspec.Struct, frozen=True):
    """The public record of the shoe: the seed is only revealed by an event after the taille."""

    decks: int
    physical: bool
    algorithm: str
    commitment: str
    contributions: list[str]
    cut: int
    cards_out: int
    remaining: int
    last_coup: bool


class ActionView(msgspec.Struct, frozen=True):
    """A step the table may take now; `actor` None: any seated player."""

    step: str
    actor: str | None
    side: Side | None
    forced: bool


class TableView(msgspec.Struct, frozen=True, kw_only=True):
    table_id: uuid.UUID
    name: str
    version: int
    viewer: str
    settings: TableSettings
    phase: str
    taille: int
    coup_number: int
    banker: str | None
    bank: int
    bank_offered_to: str | None
    bank_required: int  # a passed hand is taken with exactly this (0: any bank from the minimum)
    seats: list[SeatView]
    bets: list[Bet]
    stakes: list[Stake]
    banco_calls: list[str]  # the players who called banco this coup, in order (said aloud)
    shoe: ShoeView | None
    coup: CoupView | None
    legal_actions: list[ActionView]  # none that puts chips on a coup once `round_over`
    round_over: bool = False  # its round's last coup played: no stake until the next round
    # The milliseconds left on the clock the table runs (a turn to bet, a hand's decision, the
    # shoe offered), as the server reckons them when it answers; None: no clock runs. A page
    # counts down from it on its own clock, never comparing its wall clock with the server's.
    clock_ms: int | None = None


class Health(msgspec.Struct, frozen=True):
    status: str


class StoppedProjection(msgspec.Struct, frozen=True):
    """A projection stopped at an event it cannot apply (`at`: its notification id)."""

    projection: str
    at: int
    error: str


class Unanchored(msgspec.Struct, frozen=True):
    """A store this instance writes to but cannot checkpoint (`infra.store.checkpoints`): its
    checkpoint file's name, the attempts that failed, the last one's reason, and the seconds
    since the file's latest checkpoint (null: none)."""

    database: str
    failures: int
    reason: str
    age_seconds: float | None


class Ready(msgspec.Struct, frozen=True, omit_defaults=True):
    """`ready`, or `degraded` when something below does not stop this instance serving: a
    stopped projection, no worker alive (`workers`, shown once a worker ever beat), or a store
    whose checkpoints fail (`unanchored`: its new events are in no checkpoint)."""

    status: str
    database: str
    stopped_projections: list[StoppedProjection] = msgspec.field(default_factory=list)
    workers: Workers | None = None
    unanchored: list[Unanchored] = msgspec.field(default_factory=list)
