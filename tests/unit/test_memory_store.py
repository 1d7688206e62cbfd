"""The in-memory store of the pure engine: commands applied once by id, events by version."""

from __future__ import annotations

import pytest

from domain.errors import DomainError
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from infra.services.autoplay import play_coups
from infra.services.memory import MemoryStore
from infra.services.tables import seeds_from


def test_a_command_id_applies_once_and_names_one_table() -> None:
    store = MemoryStore(seeds_from(b"memory"))
    settings = TableSettings.default(Variant.PUNTO_BANCO)
    store.open_table("t1", settings, command_id="open-1")
    store.open_table("t2", settings, command_id="open-2")
    t1 = Table.create_id("t1")
    seat = c.SeatPlayer(command_id="seat", actor="@croupier", player="ann", chips=500)
    first = store.execute(t1, seat)
    again = store.execute(t1, seat)
    assert again.version == first.version and again.events == first.events
    assert [type(e).__name__ for e in store.events_of(t1, gt=first.version - 1)] == [
        first.events[0]["type"]]
    assert len(store.events_of(t1)) == store.table(t1).version == first.version
    with pytest.raises(DomainError) as reused:
        store.execute(Table.create_id("t2"), seat)
    assert reused.value.rule == "command-id-reused"
    with pytest.raises(DomainError) as twice:
        store.open_table("t1", settings, command_id="open-again")
    assert twice.value.rule == "table-exists"


def test_bots_play_a_table_in_memory_as_the_seed_says() -> None:
    def played(seed: bytes) -> list[object]:
        store = MemoryStore(seeds_from(seed))
        store.open_table("t", TableSettings.default(Variant.PUNTO_BANCO), command_id="open")
        table_id = Table.create_id("t")
        for n, player in enumerate(("ann", "bob", "cy")):
            store.execute(table_id, c.SeatPlayer(command_id=f"seat-{n}", actor="@croupier",
                                                 player=player, chips=1_000))
        play_coups(store, table_id, seed, "bots", 5)
        assert store.state(table_id).coup_number == 5
        return [e.outcomes for e in store.events_of(table_id) if isinstance(e, Table.CoupSettled)]

    assert played(b"one") == played(b"one") and len(played(b"one")) == 5
    assert played(b"one") != played(b"two")
