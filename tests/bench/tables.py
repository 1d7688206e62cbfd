"""Tables for the benchmarks: a seated punto banco table, and bots playing one in memory
through the service's deciding (saved in batches, or never) to build a long history fast."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from functools import partial

from domain.bots import next_command, playable
from domain.game.settings import TableSettings, Variant
from domain.table.aggregate import Table
from domain.table.commands import AdjustChips, SeatPlayer
from domain.table.state import Phase
from infra.services.tables import TableService, seeds_from

SECRET = bytes(range(32))
PLAYERS = 4
CHIPS = 10**12  # bots stake up to a tenth of their chips: topped up when half is gone


def service(url: str, env: dict[str, str] | None = None,
            cls: type[TableService] = TableService) -> TableService:
    svc = cls(env=env, url=url, secret_key=SECRET)
    svc.seed_source = seeds_from(b"bench")
    return svc


def seated_table(svc: TableService, name: str) -> uuid.UUID:
    settings = TableSettings.default(Variant.PUNTO_BANCO)
    table_id = svc.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(PLAYERS):
        svc.execute(table_id, SeatPlayer(command_id=f"{name}:seat:{i}", player=f"p{i}",
                                         chips=CHIPS))
    return table_id


def ids(prefix: str) -> Callable[[int], Callable[[str], str]]:
    return lambda n: lambda label: f"{prefix}:{n}:{label}"


def command_id(sent: str, label: str) -> str:
    """The id of a bot's command: the game's prefix and the commands sent so far, its label."""
    return sent + label


def in_memory_game(svc: TableService, table: Table, coups: int, prefix: str,
                   save_every: int | None) -> int:
    """Bots play `table` through the service's deciding, in memory; saved every
    `save_every` events (None: never). Between coups, a player down to half the starting
    chips is topped up (bots lose about 1% a coup: without, all are broke by coup 4,000).
    Returns the commands sent."""
    rng = random.Random(1)
    sent = 0
    batch = 0
    checked = None  # the last coup after which the bots were seen able to go on
    state = table.state
    while state.coup_number < coups or state.coup is not None or (
        state.phase is Phase.TAILLE_OVER
    ):
        if state.coup is None:
            for seat in state.seats:
                if seat.chips < CHIPS // 2:
                    table.execute(AdjustChips(command_id=f"{prefix}:{sent}:top-up",
                                              actor="@system", player=seat.player,
                                              delta=CHIPS - seat.chips, reason="bench"),
                                  svc.cards)
                    sent += 1
            state = table.state
            if checked != state.coup_number:  # topped up, they can: asked once a coup
                checked = state.coup_number
                assert playable(state)
        table.execute(next_command(state, rng, partial(command_id, f"{prefix}:{sent}:")),
                      svc.cards)
        sent += 1
        if save_every is None:
            table.collect_events()
        elif len(table._pending_events) >= save_every:
            svc.save(table, command_id=f"{prefix}:batch:{batch}")
            batch += 1
        state = table.state
    if save_every is not None and table._pending_events:
        svc.save(table, command_id=f"{prefix}:batch:{batch}")
    return sent
