"""Any table command with any fields, at any moment of a game, is either recorded or refused by
a domain error (`domain.errors`), never anything else, and a refused one leaves the table as
it was with nothing to record: what the API answers as a 4xx problem, never a 500.

A game is driven by the product's bots (`domain.bots.next_command`) between arbitrary commands
(decoded from raw fields as the API decodes a body, so every value keeps the declared bounds),
from players at the table, an unknown one and officials, so the arbitrary ones land in every
phase: before anyone sits, while betting, in the middle of a coup, once it is settled. The
family game ("jeu de famille", 003) gets the most examples; the other variants a few.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.bots import next_command
from domain.errors import DomainError, OutOfTurn, RuleViolation
from domain.game.coup import Side
from domain.game.payouts import Spot
from domain.game.settings import BettingOrder, TableSettings, Variant
from domain.limits import MAX_CHIPS
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import PassReason
from domain.table.state import TableState
from tests.unit.play import DrawnSeeds, physical_table, play_coup
from tests.unit.table_scripts import BANKER_WINS
from tests.unit.table_scripts import snapshot as snapshot_of

PLAYERS = ["p0", "p1", "p2", "p3"]
UNKNOWN = "nobody"
ACTORS = ["@croupier", "@organiser", *PLAYERS, UNKNOWN]
KINDS = [str(kind.__struct_config__.tag) for kind in c.TABLE_COMMANDS]

EDGES: dict[str, Callable[[int, int], int]] = {
    "all": lambda chips, free: chips, "-all": lambda chips, free: -chips,
    "free": lambda chips, free: free, "free+1": lambda chips, free: free + 1,
    "-free": lambda chips, free: -free, "-free-1": lambda chips, free: -free - 1,
}
"""Amounts at the edge of the player's chips (`free`: not in play), read when sent."""
amounts = st.one_of(st.integers(-1000, 1000), st.sampled_from(list(EDGES)),
                    st.sampled_from([0, 1, 10, -10, MAX_CHIPS, -MAX_CHIPS]))
counts = st.one_of(st.integers(0, 500), st.just(2**31 - 1))
AMOUNTS = ("chips", "delta", "amount", "min_stake", "max_stake")
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "player": st.sampled_from([*PLAYERS, UNKNOWN]),
    **{amount: amounts for amount in AMOUNTS},
    "side": st.sampled_from(list(Side)), "tableau": st.sampled_from(list(Side)),
    "spot": st.sampled_from(list(Spot)),
    "standing": st.booleans(), "draw": st.booleans(), "physical": st.booleans(),
    "reason": st.one_of(st.sampled_from(list(PassReason)), st.just("a re-entry")),
    "entropy": st.sampled_from(["00ff", "zz", "", "ABCDEF0123"]),
    "position": counts, "coup": st.one_of(st.none(), counts),
    "bet_seconds": st.one_of(st.none(), counts),
    "card": st.one_of(st.none(), st.sampled_from(["As", "9h", "Td", "Kc", "1x", "", "9h9"])),
    "how": st.sampled_from(["taken", "auction", ""]),
}


@st.composite
def raw_commands(draw: st.DrawFn) -> dict[str, Any]:
    """A command body as a client could send it: a kind, an actor, and any of its fields."""
    kind = draw(st.sampled_from(KINDS))
    command = next(k for k in c.TABLE_COMMANDS if k.__struct_config__.tag == kind)
    raw: dict[str, Any] = {"kind": kind, "command_id": "fuzz",
                           "actor": draw(st.sampled_from(ACTORS))}
    for name in command.__struct_fields__:
        if name in FIELDS and draw(st.integers(0, 9)) > 0:  # now and then a field is left out
            raw[name] = draw(FIELDS[name])
    if "player" in raw and draw(st.booleans()):
        raw["actor"] = raw["player"]  # as often as not, a player acts for themselves
    return raw


BOT_STEPS = 150
fuzzed = st.lists(st.tuples(st.integers(0, BOT_STEPS), raw_commands()), min_size=1,
                  max_size=24)
"""Arbitrary commands, each sent before the bots' move of its number."""


def snapshot(table: Table) -> object:
    return msgspec.to_builtins(table.state), table.version


def apply(table: Table, command: c.TableCommand, cards: DrawnSeeds) -> bool:
    """Execute `command`: recorded (True), or refused by the rules with nothing changed."""
    before = snapshot(table)
    try:
        table.execute(command, cards)
    except DomainError:
        assert snapshot(table) == before, f"{command} was refused but changed the table"
        assert not table.collect_events(), f"{command} was refused but left events to save"
        return False
    table.collect_events()
    state = table.state
    assert state.chips_accounted(), f"{command} lost or made chips"
    for seat in state.seats:
        assert seat.chips >= state.committed(seat.player), (
            f"after {command}, {seat.player} has {seat.chips} chips for "
            f"{state.committed(seat.player)} in play")
    return True


def at_the_edges(raw: dict[str, Any], state: TableState) -> dict[str, Any]:
    """`raw` with its amounts at the edges of its player's chips as the table has them now."""
    player = raw.get("player", "")
    chips = free = 100
    if player in state.players():
        chips = state.seat_of(player).chips
        free = chips - state.committed(player)
    return {name: EDGES[given](chips, free) if name in AMOUNTS and given in EDGES else given
            for name, given in raw.items()}


def play(variant: Variant, seated: int, chips: int, rotating: bool, seed: int,
         game: list[tuple[int, dict[str, Any]]]) -> None:
    overrides = {"betting_order": BettingOrder.ROTATING} if rotating else {}
    if rotating and not variant.house_banks:
        overrides = {}
    table = Table(name="fuzzed", settings=TableSettings.default(variant, **overrides),
                  tournament=None, actor="@organiser", command_id="open")
    table.collect_events()
    rng = random.Random(seed)
    cards = DrawnSeeds(rng)
    two_sides = variant is Variant.DEUX_TABLEAUX
    for i, player in enumerate(PLAYERS[:seated]):
        side = (Side.RIGHT, Side.LEFT)[i % 2] if two_sides else None
        apply(table, c.SeatPlayer(command_id=f"seat-{player}", player=player, chips=chips,
                                  side=side), cards)
    arbitrary = sorted(game, key=lambda sent: sent[0])
    for n in range(BOT_STEPS + 1):
        for m, (_, raw) in enumerate(sent for sent in arbitrary if sent[0] == n):
            try:
                command = msgspec.convert({**at_the_edges(raw, table.state),
                                           "command_id": f"{n}:{m}:fuzz"},
                                          c.TableCommand)
            except msgspec.ValidationError:
                continue  # the API refuses it with a 422 before the table sees it
            apply(table, command, cards)
        try:
            move = next_command(table.state, rng, lambda label, n=n: f"{n}:{label}")
        except DomainError:
            continue  # the bots see no move (nobody can bank or stake)
        apply(table, move, cards)


games = dict(seated=st.integers(0, 4), chips=st.sampled_from([0, 12, 60, 1000]),
             rotating=st.booleans(), seed=st.integers(0, 2**16), game=fuzzed)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**games)
def test_any_command_to_a_family_table_is_recorded_or_refused_by_a_rule(
        seated: int, chips: int, rotating: bool, seed: int,
        game: list[tuple[int, dict[str, Any]]]) -> None:
    play(Variant.SIMPLIFIED, seated, chips, rotating, seed, game)


@pytest.mark.parametrize("variant", [v for v in Variant if v is not Variant.SIMPLIFIED])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**games)
def test_any_command_to_any_table_is_recorded_or_refused_by_a_rule(
        variant: Variant, seated: int, chips: int, rotating: bool, seed: int,
        game: list[tuple[int, dict[str, Any]]]) -> None:
    play(variant, seated, chips, rotating, seed, game)


# --- the roots the fuzz found, each as the input that found it --------------------------


@pytest.mark.parametrize("seated", [0, 1])
@pytest.mark.parametrize("side", [Side.PUNTER, Side.BANKER])
def test_a_decision_before_the_duel_is_formed_is_refused_not_a_crash(
        seated: int, side: Side) -> None:
    """A decision on a hand of a family table whose duel lacks Banque or Ponte (nobody seated,
    one player) asked who holds the hand of `duel[1]`: an IndexError, the API's 500."""
    table = Table(name="fuzzed", settings=TableSettings.default(Variant.SIMPLIFIED),
                  tournament=None, actor="@organiser", command_id="open")
    table.collect_events()
    cards = DrawnSeeds(random.Random(0))
    for player in PLAYERS[:seated]:
        assert apply(table, c.SeatPlayer(command_id=player, player=player, chips=100), cards)
    assert table.state.hand_holder(side) == (PLAYERS[0] if seated and side is Side.BANKER
                                             else None)
    with pytest.raises(OutOfTurn) as refused:
        table.execute(c.Decide(command_id="d", side=side, draw=True), cards)
    assert refused.value.rule == "out-of-turn"
    assert not apply(table, c.Decide(command_id="d", side=side, draw=False), cards)


def test_chips_in_play_stay_at_the_table_until_the_coup_is_paid() -> None:
    """A duellist's stake once betting has closed, a punter's bet or stake while betting: an
    adjustment may not take them (or the chips lost are chips the player never had)."""
    family = physical_table("simplified", {"a": 100, "b": 100, "c": 100})
    family.place_bet("c", Spot.TIE, 30)
    for player, delta in (("c", -71), ("c", -100)):
        before = snapshot_of(family)
        with pytest.raises(OutOfTurn) as refused:
            family.adjust_chips(player, delta)
        assert refused.value.rule == "chips-in-play" and snapshot_of(family) == before
    family.adjust_chips("c", -70)
    family.close_betting()
    for duellist in family.duel:
        before = snapshot_of(family)
        with pytest.raises(OutOfTurn):
            family.adjust_chips(duellist, -91)
        assert snapshot_of(family) == before
        family.adjust_chips(duellist, -90)
    chemin = physical_table("chemin-de-fer", {"a": 100, "b": 100})
    chemin.award_bank("a", 50)
    chemin.place_stake("b", Side.PUNTER, 40)
    with pytest.raises(OutOfTurn):
        chemin.adjust_chips("b", -61)


def test_a_duellist_whose_chips_are_moved_below_the_duel_stake_gives_his_place_up() -> None:
    """003: "La Banque et la Ponte parient sur leur victoire respective un montant identique
    qu'ils placent devant eux": a duellist left without the duel stake between coups makes way
    for the next player who has it, and betting never closes on a duellist who lacks it."""
    state = physical_table("simplified", {"a": 100, "b": 100, "c": 100})
    assert state.duel == ["a", "b"]
    state.adjust_chips("a", -95)
    assert state.duel == ["b", "c"]
    play_coup(state, BANKER_WINS)  # Banque (b) wins the duel from Ponte (c)
    assert all(seat.chips >= 0 for seat in state.seats)
    assert state.chips_accounted()
    state.duel = ["a", "b"]  # as a table could hold it before the rule: a, short, dueling
    before = snapshot_of(state)
    with pytest.raises(RuleViolation) as refused:
        state.close_betting()
    assert refused.value.rule == "no-duel" and snapshot_of(state) == before


def test_chips_given_to_a_player_who_has_bet_do_not_make_them_a_duellist() -> None:
    """Found by the fuzz: a player short of the duel stake bets, is given chips while betting
    is open and was seated as Ponte, side bet and duel stake together more than their chips.
    003: "La Banque et la Ponte parient sur leur victoire respective un montant identique
    qu'ils placent devant eux": the duellists stake the duel, the others bet on it."""
    family = physical_table("simplified", {"a": 100, "b": 100, "c": 5})
    family.adjust_chips("b", -95)
    assert family.duel == ["a"]
    family.place_bet("c", Spot.PUNTER, 1)
    family.adjust_chips("c", 5)
    assert family.duel == ["a"] and family.seat_of("c").chips == 10
    before = snapshot_of(family)
    with pytest.raises(RuleViolation) as refused:
        family.close_betting()
    assert refused.value.rule == "no-duel" and snapshot_of(family) == before
    family.adjust_chips("b", 5)  # a player with no side bet takes the place up
    assert family.duel == ["a", "b"]
    family.close_betting()
    assert all(seat.chips >= family.committed(seat.player) for seat in family.seats)
