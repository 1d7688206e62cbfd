"""The legal actions a table offers are exactly the steps it accepts: every offered step has a
command that `Table.execute` takes, and every step not offered is refused whatever its
arguments. Property-based over random tables of every variant, played by bots."""

from __future__ import annotations

import copy
import random

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.bots import next_command
from domain.errors import DomainError
from domain.game.coup import Side, tableaux_of
from domain.game.payouts import Spot
from domain.game.settings import BettingOrder, TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.state import CROUPIER, TableState
from tests.unit.test_table_aggregate import SeededCards

KINDS = ("shuffle", "contribute", "cut", "burn", "award-bank", "take-bank", "decline-bank",
         "bet", "pass-bet", "stake", "banco", "close-betting", "retire-bank", "end-taille", "pay",
         "reveal-seed", "deal", "show-naturals", "draw", "stand", "settle")


def commands_for(kind: str, s: TableState) -> list[c.TableCommand]:
    """Every command that would take the step `kind`, with the arguments worth trying."""
    players, stake, cid = s.players(), s.settings.min_stake, f"try-{kind}"
    bank = max(s.settings.min_stake, s.bank_required)
    offered = [s.bank_offered_to] if s.bank_offered_to else []
    physical = s.shoe is not None and s.shoe.physical
    match kind:
        case "shuffle":
            return [c.ShuffleShoe(command_id=cid)]
        case "contribute":
            return [c.ContributeEntropy(command_id=cid, actor=p, player=p, entropy="00")
                    for p in players]
        case "cut":
            return [c.CutShoe(command_id=cid, actor=p, player=p, position=1) for p in players]
        case "burn":
            return [c.BurnCard(command_id=cid, card="As" if physical else None)]
        case "award-bank":
            return [c.AwardBank(command_id=cid, player=p, amount=bank, how="lot")
                    for p in players]
        case "take-bank":
            return [c.AwardBank(command_id=cid, actor=p, player=p, amount=bank) for p in offered]
        case "decline-bank":
            return [c.DeclineBank(command_id=cid, actor=p, player=p) for p in offered]
        case "bet":
            return [c.PlaceBet(command_id=cid, actor=p, player=p, spot=spot, amount=stake)
                    for p in players for spot in Spot]
        case "pass-bet":
            return [c.PassBetTurn(command_id=cid, actor=p, player=p) for p in players]
        case "stake":
            return [c.PlaceStake(command_id=cid, actor=p, player=p, tableau=t, amount=stake)
                    for p in players for t in tableaux_of(s.variant)]
        case "banco":
            return [c.CallBanco(command_id=cid, actor=p, player=p) for p in players]
        case "close-betting":
            return [c.CloseBetting(command_id=cid)]
        case "retire-bank":
            return [c.RetireBank(command_id=cid, actor=p, player=p) for p in [s.banker] if p]
        case "end-taille":
            return [c.EndTaille(command_id=cid)]
        case "pay":
            return [c.PayCoup(command_id=cid)]
        case "reveal-seed":
            return [c.RevealSeed(command_id=cid)]
        case "deal":
            return [c.DealCard(command_id=cid, card="As" if physical else None)]
        case "show-naturals":
            return [c.ShowNaturals(command_id=cid)]
        case "draw" | "stand":
            return [c.Decide(command_id=cid, actor=s.hand_holder(side) or CROUPIER, side=side,
                             draw=kind == "draw") for side in Side]
        case "settle":
            return [c.SettleCoup(command_id=cid)]
    raise AssertionError(kind)


def accepted(table: Table, command: c.TableCommand, cards: SeededCards) -> bool:
    try:
        copy.deepcopy(table).execute(command, cards)
    except DomainError:
        return False
    return True


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(list(Variant)), seed=st.integers(0, 10**6),
       steps=st.integers(0, 120), physical=st.booleans(), in_turn=st.booleans())
def test_offered_steps_are_accepted_and_refused_ones_not_offered(
        variant: Variant, seed: int, steps: int, physical: bool, in_turn: bool) -> None:
    table, cards = played_table(variant, seed, steps, physical, in_turn)
    state = table.state
    offered = {a.step for a in state.legal_actions()}
    for kind in KINDS:
        takes = any(accepted(table, command, cards) for command in commands_for(kind, state))
        assert takes == (kind in offered), (kind, state.phase, sorted(offered))
    for action in state.legal_actions():  # a player's step offered to one: no other takes it
        if action.actor is not None and action.step in ("bet", "pass-bet"):
            others = [command for command in commands_for(action.step, state)
                      if getattr(command, "player", None) != action.actor]
            assert not any(accepted(table, command, cards) for command in others), action


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(list(Variant)), seed=st.integers(0, 10**6),
       steps=st.integers(0, 120), physical=st.booleans(), in_turn=st.booleans())
def test_asking_the_legal_actions_changes_nothing(
        variant: Variant, seed: int, steps: int, physical: bool, in_turn: bool) -> None:
    """The steps' checks run on the table itself, not on a copy: they must leave it as it was."""
    state = played_table(variant, seed, steps, physical, in_turn)[0].state
    before = msgspec.msgpack.encode(state)
    state.legal_actions()
    assert msgspec.msgpack.encode(state) == before


def played_table(variant: Variant, seed: int, steps: int, physical: bool,
                 in_turn: bool) -> tuple[Table, SeededCards]:
    """A table of four players (betting in turn where the house banks and `in_turn`), played
    by bots for up to `steps` commands."""
    house = Variant(variant).house_banks  # bets in turn where the house banks
    order = BettingOrder.ROTATING if in_turn and house else BettingOrder.FREE
    settings_ = TableSettings.default(variant, betting_order=order)
    table = Table(name="t", settings=settings_, tournament=None, actor="@organiser",
                  command_id="open")
    cards, rng = SeededCards(), random.Random(seed)
    two_sides = variant is Variant.DEUX_TABLEAUX
    for i in range(4):
        side = (Side.RIGHT, Side.LEFT)[i % 2] if two_sides else None
        table.execute(c.SeatPlayer(command_id=f"seat-{i}", player=f"p{i}", chips=1000,
                                   side=side), cards)
    if physical:
        table.execute(c.ShuffleShoe(command_id="physical", physical=True), cards)
    for n in range(steps):
        command = next_command(table.state, rng, lambda label, n=n: f"{n}:{label}")
        if physical and isinstance(command, c.BurnCard | c.DealCard):
            command = type(command)(command_id=command.command_id, card="2c")
        try:
            table.execute(command, cards)
        except DomainError:
            break  # the bots have no more to play (a physical shoe out of twos, no banker)
    table.collect_events()  # recorded, as a store would take them: `accepted` copies the table
    return table, cards
