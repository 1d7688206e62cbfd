"""One step of a bot-played table through a store, auctions included.

`sabot play`, the tournament's workers, the preview (on `infra.services.memory`'s store) and the
tests drive tables with this: when a table wants its first bank and its settings say auction, the
bots bid at the auction desk; otherwise the table's next command comes from
`domain.bots.next_command`. With `people` (a tournament's entrants who are not bots), the bots
leave their seats alone: a step whose move is a person's raises `Awaited`, naming the person
and the move, and the caller waits for them (or for their clock). The bots' random choices
and the command ids both follow from the game's seed and the table's version, so a step taken
twice (a redelivered task) sends the same command, applied once, and the same seed plays the
same game in any process.

`play_coups` plays the bots' steps in runs (`play_run`): a coup's steps, decided one after
another and saved in one transaction (`TableService.execute_run`), each under its own command
id, so that the game and its record are those of one step a transaction.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

from domain.bots import auction_bids, next_command, playable
from domain.game.settings import FirstBank
from domain.table.aggregate import Table
from domain.table.commands import TableCommand
from domain.table.room import bot_to_move, person_awaited
from domain.table.state import Phase, TableState
from infra.services.auctions import AuctionDesk
from infra.services.memory import Store
from infra.services.tables import Recorded


class Awaited(Exception):
    """The table's next move is `person`'s (`command`, as the bots would have made it)."""

    def __init__(self, person: str, command: TableCommand, state: TableState) -> None:
        super().__init__(f"the table awaits {person}")
        self.person, self.command, self.state = person, command, state


def play_step(service: Store, table_id: uuid.UUID, seed: bytes, prefix: str,
              people: frozenset[str] = frozenset()) -> Recorded:
    """Move the table on by one command (or one whole auction): the table is loaded once,
    the bots choose from it, and it decides. What was recorded, the table after included;
    `Awaited` when the move is one of `people`'s."""
    try:
        return service.execute_next(
            table_id, lambda table: _bots_move(table, table_id, seed, prefix, people))
    except _Auction as wanted:
        return _auction(service, table_id, wanted.bids, wanted.ids)


def _bots_move(table: Table, table_id: uuid.UUID, seed: bytes, prefix: str,
               people: frozenset[str]) -> TableCommand:
    """The table's next command as the bots make it; `_Auction` when the bots bid for the
    first bank, `Awaited` when the move is one of `people`'s."""
    state = table.state
    ids = f"{prefix}:{table.name}:{table.version}"
    rng = bots_random(seed, table_id, table.version)
    wants_auction = (state.phase is Phase.NO_BANK and state.bank_offered_to is None
                     and state.settings.first_bank is FirstBank.AUCTION)
    if wants_auction:
        bids = [(p, a) for p, a in auction_bids(state, rng) if p not in people]
        if bids:
            raise _Auction(bids, ids)
    command = next_command(state, rng, lambda label: f"{ids}:{label}", people=people)
    person = person_awaited(command, state, people)
    if person is not None:
        raise Awaited(person, command, state)
    return command


RUN = 100  # commands at most saved at once (a coup takes some 60 to 90)


def play_run(service: Store, table_id: uuid.UUID, seed: bytes, prefix: str, until: int,
             people: frozenset[str] = frozenset()) -> list[Recorded]:
    """Move the table on by the bots' steps up to the end of the coup under way (or of the
    next one), saved at once (`execute_run`): each the command `play_step` would have sent,
    so that the game and its record are the same. It stops before a person's move, an
    auction, or the table's having dealt coup `until`; where it cannot go on at once (its
    first move is one of those, or the run lost a race), one `play_step` (and `Awaited`)."""
    start: list[int] = []

    def choose(table: Table) -> TableCommand | None:
        state = table.state
        start.append(state.coup_number)
        if not goes_on(state, until) or (state.coup is None and state.coup_number > start[0]):
            return None
        try:
            return _bots_move(table, table_id, seed, prefix, people)
        except (_Auction, Awaited):
            return None

    return (service.execute_run(table_id, choose, RUN)
            or [play_step(service, table_id, seed, prefix, people)])


class _SeededAtFirstDraw(random.Random):
    """`random.Random(f"{seed.hex()}/{table_id}/{version}")` that seeds itself at its first
    draw: the same draws, and nothing paid by the steps that draw none (a deal, a settlement,
    a payment: most of a coup's), where seeding a Mersenne Twister from a text costs more than
    deciding the step (the text too is made then)."""

    def __init__(self, seed: bytes, table_id: uuid.UUID, version: int) -> None:
        # not super().__init__: seeded at a draw
        self._seed_later: tuple[bytes, uuid.UUID, int] | None = (seed, table_id, version)

    def _seed_now(self) -> None:
        assert self._seed_later is not None
        (seed, table_id, version), self._seed_later = self._seed_later, None
        self.seed(f"{seed.hex()}/{table_id}/{version}")

    def random(self) -> float:
        if self._seed_later is not None:
            self._seed_now()
        return super().random()

    def getrandbits(self, k: int) -> int:
        if self._seed_later is not None:
            self._seed_now()
        return super().getrandbits(k)


def bots_random(seed: bytes, table_id: uuid.UUID, version: int) -> random.Random:
    """The bots' randomness at a table's version: from the game's seed, the table and the
    version alone, so that a step taken twice draws the same."""
    return _SeededAtFirstDraw(seed, table_id, version)


class _Auction(Exception):
    """The table wants its first bank from an auction: the bots bid at the desk instead."""

    def __init__(self, bids: list[tuple[str, int]], ids: str) -> None:
        self.bids, self.ids = bids, ids


def _auction(service: Store, table_id: uuid.UUID, bids: list[tuple[str, int]],
             ids: str) -> Recorded:
    desk = AuctionDesk(service)
    auction_id = desk.open(table_id, command_id=f"{ids}:auction")
    opened = service.answered(f"{ids}:auction")
    events: list[dict[str, Any]] = opened.events if opened else []
    for n, (player, amount) in enumerate(bids):
        events += desk.bid(auction_id, player, amount, command_id=f"{ids}:bid-{n}",
                           actor=player).events
    closed = desk.close(auction_id, command_id=f"{ids}:award")
    return Recorded(table_id, closed.version, events + closed.events, closed.aggregate)


SEAT_PHASES = (Phase.NO_BANK, Phase.BETTING, Phase.PLAYING)  # when seats decide


def play_bot_seat(service: Store, table_id: uuid.UUID, seed: bytes, prefix: str,
                  people: frozenset[str]) -> Recorded | None:
    """At a croupier's table, the move of the house bot whose decision the table awaits (a
    bet, a stake, a banco, taking or passing the bank, a hand), as the bots choose it where the
    house deals; None when the next move is the croupier's step or a person's."""
    def choose(table: Table) -> TableCommand:
        state = table.state
        rng = bots_random(seed, table_id, table.version)
        command = next_command(state, rng, lambda label: f"{prefix}:{table.name}:"
                               f"{table.version}:{label}", people=people)
        if state.phase not in SEAT_PHASES or bot_to_move(command, state, people) is None:
            raise _NotABotsMove
        return command

    try:
        return service.execute_next(table_id, choose)
    except _NotABotsMove:
        return None


class _NotABotsMove(Exception):
    """The table's next move is the croupier's or a person's."""


def goes_on(state: TableState, until: int) -> bool:
    """Whether the table has a step to take before it has closed coup `until` (and revealed
    a finished taille's seed): false too when it cannot play on."""
    between = state.coup is None and state.phase is not Phase.TAILLE_OVER
    return (state.coup_number < until or not between) and not (between and not playable(state))


def play_coups(service: Store, table_id: uuid.UUID, seed: bytes, prefix: str,
               until: int, on_step: Callable[[TableState], object] = lambda _: None,
               people: frozenset[str] = frozenset()) -> int:
    """Play until the table has closed coup `until` (and revealed a finished taille's seed),
    or until it cannot go on, in runs of bot steps (`play_run`); returns the events
    recorded. `on_step` sees the table after every run (a progress display); `Awaited` when
    a move is one of `people`'s."""
    events = 0
    state = service.state(table_id)
    while goes_on(state, until):
        run = play_run(service, table_id, seed, prefix, until, people)
        events += sum(len(recorded.events) for recorded in run)
        state = run[-1].state or service.state(table_id)
        on_step(state)
    return events
