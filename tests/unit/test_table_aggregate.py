"""The Table aggregate decides: `execute` checks the actor and the rule and computes what each
event records; applying an event checks the values it carries; anything that is not a table
command is refused by name. Pure: the RNG shoe's seeds come from an in-memory `CardSource`."""

from __future__ import annotations

import random
import uuid

import msgspec
import pytest

from domain.bots import next_command
from domain.commands import Command
from domain.errors import OutOfTurn, RuleViolation
from domain.game.cards import Card
from domain.game.settings import TableSettings, Variant
from domain.game.shoe import Shoe, commitment, shoe_order
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.state import Phase


class SeededCards:
    """A `CardSource` that keeps its seeds in a dict: the domain's port, without a vault."""

    def __init__(self) -> None:
        self.seeds: dict[str, bytes] = {}

    def seal_seed(self, table_id: uuid.UUID, taille: int) -> str:
        seed = f"{table_id}/{taille}".encode().ljust(32, b".")[:32]
        self.seeds[commitment(seed)] = seed
        return commitment(seed)

    def card_at(self, shoe: Shoe, position: int) -> Card:
        return shoe_order(shoe, self.seeds[shoe.commitment])[position]

    def seed_of(self, commitment: str) -> bytes:
        return self.seeds[commitment]


def a_table(variant: Variant = Variant.CHEMIN_DE_FER) -> Table:
    table = Table(name="t", settings=TableSettings.default(variant), tournament=None,
                  actor="@organiser", command_id="open")
    for i in range(4):
        table.execute(c.SeatPlayer(command_id=f"seat-{i}", player=f"p{i}", chips=1000),
                      SeededCards())
    return table


def test_an_unknown_command_is_refused_by_name() -> None:
    class CallTheManager(Command, tag="call-the-manager"):
        pass

    table = a_table()
    before = table.version
    with pytest.raises(RuleViolation) as refused:
        table.execute(CallTheManager(command_id="x"), SeededCards())  # type: ignore[arg-type]
    assert refused.value.rule == "unknown-command"
    assert "CallTheManager" in refused.value.message
    assert table.version == before


def test_bots_play_whole_coups_through_execute_and_the_events_replay() -> None:
    table, cards, rng = a_table(), SeededCards(), random.Random(4)
    for n in range(400):
        table.execute(next_command(table.state, rng, lambda label, n=n: f"{n}:{label}"), cards)
    assert table.state.coup_number >= 5
    replayed = None
    for event in table.collect_events():
        replayed = event.mutate(replayed)
    assert isinstance(replayed, Table)
    assert msgspec.to_builtins(replayed.state) == msgspec.to_builtins(table.state)


def test_an_event_whose_values_disagree_with_the_table_is_refused() -> None:
    table, cards, rng = a_table(Variant.PUNTO_BANCO), SeededCards(), random.Random(2)
    while table.state.phase is not Phase.PLAYING:
        table.execute(next_command(table.state, rng, lambda label: label), cards)
    events = table.collect_events()
    dealt = Table.CardDealt(originator_id=table.id, originator_version=table.version + 1,
                            timestamp=events[-1].timestamp, actor="@croupier",
                            command_id="forged", coup=table.state.coup_number,
                            card=Card("As"), side=table.state.coup.legal_steps()[0].side,
                            position=table.state.shoe.position + 3)  # type: ignore[union-attr]
    with pytest.raises(RuleViolation) as refused:
        dealt.mutate(table)
    assert refused.value.rule == "event-mismatch"
    assert "shoe position" in refused.value.message


def test_a_player_may_not_act_for_another_nor_take_an_officials_step() -> None:
    table = a_table(Variant.PUNTO_BANCO)
    with pytest.raises(OutOfTurn) as refused:
        table.execute(c.ShuffleShoe(command_id="s", actor="p1"), SeededCards())
    assert refused.value.rule == "official-step"
    with pytest.raises(OutOfTurn) as refused:
        table.execute(c.LeaveTable(command_id="l", actor="p1", player="p2"), SeededCards())
    assert refused.value.rule == "not-yourself"
