"""The partition key of each kind of stream (`infra.store.partitions`)."""

from __future__ import annotations

import uuid

from domain.dispute.aggregate import Dispute
from domain.game.settings import TableSettings, Variant
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from infra.store.partitions import partition_key


def a_table(name: str, tournament: str | None) -> Table:
    return Table(name=name, settings=TableSettings.default(Variant.PUNTO_BANCO),
                 tournament=tournament, actor="@organiser", command_id=f"{name}:open")


def test_a_table_of_a_tournament_shares_the_tournament_s_partition() -> None:
    assert partition_key(a_table("cup-1", "cup")) == str(Tournament.create_id("cup"))
    assert partition_key(a_table("cup-2", "cup")) == partition_key(a_table("cup-1", "cup"))


def test_a_table_outside_a_tournament_is_its_own_partition() -> None:
    assert partition_key(a_table("solo", None)) == str(Table.create_id("solo"))


def test_a_dispute_takes_its_table_s_partition_and_other_objects_none() -> None:
    table_id = uuid.uuid4()
    dispute = Dispute(table_id=table_id, coup=4, reason="misread", by="ann", actor="ann",
                      command_id="d1")
    assert partition_key(dispute) == table_id
    assert partition_key(object()) is None
