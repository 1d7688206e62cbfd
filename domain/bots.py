"""Bots: the next command a table needs, when everyone at it plays by habit.

`next_command` looks at what the table may do now and returns the one command that moves it
on: the croupier's forced steps, the default decision for a hand, and for players simple
staking habits (a random stake between the minimum and a fifth of their free chips, a banco
now and then). `Habits` widen the play for tests that explore the rules: a banker who retires
between coups, a coin where the drawing table leaves the choice. The randomness is injected
(`random.Random`), so a bot game is a function of its seed. `sabot play`, the tournament's
tables and the tests all play with this one engine.

`people` are the seats the engine must leave alone (a tournament's entrants who are not house
bots): it never stakes, bets, passes, takes the bank, contributes entropy or cuts for them; the
move it returns may then be theirs to make, which the caller waits for
(`domain.table.room.person_awaited`).
"""

from __future__ import annotations

import random
from bisect import bisect
from collections.abc import Callable

import msgspec

from domain.errors import RuleViolation
from domain.game.coup import Step
from domain.game.coverage import tableau_halves
from domain.game.drawing import Rule
from domain.game.payouts import Spot
from domain.game.sides import Side
from domain.table import commands as c
from domain.table.betting_order import bettor, yet_to_stake
from domain.table.defaults import default_draw
from domain.table.state import CROUPIER, Phase, TableState

CommandId = Callable[[str], str]


class Habits(msgspec.Struct, frozen=True, kw_only=True):
    """How bots play; the defaults are `sabot play`'s."""

    banco_rate: float = 0.1  # how often a punter who can cover the bank calls banco
    suivi_rate: float = 0.5  # the same, for the banco suivi (their right to go again)
    retire_rate: float = 0.0  # chemin de fer: how often the banker retires between coups
    unit: int = 0  # stakes of 1 to 5 units (0: between the minimum and a fifth of the chips)
    random_choices: bool = False  # a coin where the rules leave a choice (a draw on 5, an
    # à deux tableaux banker showing down instead of offering a card)


DEFAULT_HABITS = Habits()
SPOTS = (Spot.PUNTER, Spot.BANKER, Spot.TIE)  # a house-banked bet's spots (the tie: where paid)
SPOT_ODDS = (10, 20, 21)  # a bot bets on either hand ten times as often as on the tie (the
# weights 10, 10, 1 summed along: `random.choices` then has no sums to make)


def next_command(state: TableState, rng: random.Random, command_id: CommandId,
                 habits: Habits = DEFAULT_HABITS,
                 people: frozenset[str] = frozenset()) -> c.TableCommand:
    """The command that moves the table on; `command_id(label)` names it deterministically."""
    return MOVES[state.phase](state, rng, command_id, habits, people)


def _croupier(command: type[c.PayCoup | c.ShuffleShoe | c.BurnCard | c.RevealSeed],
              label: str) -> Move:
    """The move of a phase that only the croupier's `command` moves on, named `label`."""

    def move(state: TableState, rng: random.Random, command_id: CommandId, habits: Habits,
             people: frozenset[str]) -> c.TableCommand:
        return command(command_id=command_id(label))

    return move


def _shuffle_ritual(state: TableState, rng: random.Random, command_id: CommandId,
                    habits: Habits, people: frozenset[str]) -> c.TableCommand:
    """The first two seated punters shuffle in entropy; the third (or the first) cuts; people
    are left out (the croupier cuts if nobody else may)."""
    assert state.shoe is not None
    seated = [p for p in state.seated() if p not in people]
    contributed = len(state.shoe.contributions)
    if contributed < min(2, len(seated)):
        player = seated[contributed]
        return c.ContributeEntropy(command_id=command_id(f"contribute-{player}"),
                                   actor=player, player=player, entropy=rng.randbytes(8).hex())
    cutter = seated[2] if len(seated) > 2 else (seated[0] if seated else CROUPIER)
    position = rng.randrange(state.shoe.decks * 13, state.shoe.decks * 39)
    return c.CutShoe(command_id=command_id("cut"), actor=cutter, player=cutter,
                     position=position)


def _bank(state: TableState, rng: random.Random, command_id: CommandId, habits: Habits,
          people: frozenset[str]) -> c.TableCommand:
    """Take the shoe when offered and affordable, else pass it; with nobody offered, a lot."""
    offered = state.bank_offered_to
    floor = max(state.settings.min_stake, state.bank_required)
    if offered is not None:
        chips = state.seat_of(offered).chips
        if chips >= floor:
            # a passed hand is taken with exactly the sum the banker withdrew (000)
            amount = state.bank_required or max(floor, min(chips, chips // 4 or chips))
            return c.AwardBank(command_id=command_id("take-bank"), actor=offered,
                               player=offered, amount=amount, how="taken")
        return c.DeclineBank(command_id=command_id("decline-bank"), actor=offered,
                             player=offered)
    able = [p for p in state.seated() if state.seat_of(p).chips >= floor]
    if not able:
        raise RuleViolation(f"nobody at the table can put up a bank of {floor}",
                            rule="no-banker")
    player = rng.choice(able)
    amount = max(floor, state.seat_of(player).chips // 4)
    return c.AwardBank(command_id=command_id("lot"), player=player, amount=amount, how="lot")


def auction_bids(state: TableState, rng: random.Random) -> list[tuple[str, int]]:
    """Bids for a first bank: each seated player bids once, or not, in seat order; a bid is
    a random part of their chips and must beat the highest so far to count."""
    bids: list[tuple[str, int]] = []
    highest = state.settings.min_stake - 1
    for player in state.seated():
        chips = state.seat_of(player).chips
        if chips <= highest or rng.random() < 0.3:
            continue
        amount = rng.randint(highest + 1, max(highest + 1, chips // 3))
        bids.append((player, amount))
        highest = amount
    return bids


def _stakes(state: TableState, rng: random.Random, command_id: CommandId,
            habits: Habits, people: frozenset[str]) -> c.TableCommand:
    """Each punter who has not yet staked this coup stakes once (in turn, where the table
    says so: a player in turn with no chips to bet passes); then betting closes. Before any
    stake, a chemin de fer banker may retire (`Habits.retire_rate`)."""
    if state.tie_replay:  # a tied chemin-de-fer coup is played again as it was staked
        return c.CloseBetting(command_id=command_id("close"))
    banker = state.banker
    if (habits.retire_rate and banker is not None and banker not in people
            and state.rules.passing.shoe_passes
            and not state.stakes and not state.banco_calls
            and rng.random() < habits.retire_rate):
        return c.RetireBank(command_id=command_id(f"retire-{state.coup_number}"),
                            actor=banker, player=banker)
    minimum = state.settings.min_stake
    for player in yet_to_stake(state):
        if player in people:
            continue
        free = state.seat_of(player).chips  # nothing of theirs is at stake yet
        label = f"stake-{state.coup_number + 1}-{player}"
        if state.banks_with_player and _calls_banco(state, player, free, rng, habits):
            return c.CallBanco(command_id=command_id(f"banco-{state.coup_number + 1}-{player}"),
                               actor=player, player=player)
        ceiling = max(minimum, free // 5)
        if state.settings.max_stake:
            ceiling = min(ceiling, state.settings.max_stake)
        amount = rng.randint(minimum, ceiling)
        if habits.unit:  # 1 to 5 units, as far as the free chips and the maximum go
            amount = max(minimum, min(habits.unit * rng.randint(1, 5), ceiling))
        if state.house_banks:
            spots = SPOTS if state.settings.tie_pays else SPOTS[:2]
            return c.PlaceBet(command_id=command_id(label), actor=player, player=player,
                              spot=_weighted(rng, spots, SPOT_ODDS),
                              amount=amount)
        tableau = rng.choice(_covered_tableaux(state))
        return c.PlaceStake(command_id=command_id(label), actor=player, player=player,
                            tableau=tableau, amount=amount)
    turn = bettor(state)
    if turn is not None:
        return c.PassBetTurn(command_id=command_id(f"pass-{state.coup_number + 1}-{turn}"),
                             actor=turn, player=turn)
    return c.CloseBetting(command_id=command_id("close"))


def _weighted(rng: random.Random, items: tuple[Spot, ...], odds: tuple[int, ...]) -> Spot:
    """One of `items`, by their summed weights `odds`: the draw `rng.choices(items,
    cum_weights=odds)` makes, from the same random number, without its checks and list."""
    return items[bisect(odds, rng.random() * odds[len(items) - 1], 0, len(items) - 1)]


def _covered_tableaux(state: TableState) -> list[Side]:
    """The tableaux a stake may be engaged on: à deux tableaux not one whose half of the bank
    is nothing (a bank of one chip covers the right only)."""
    tableaux = list(state.rules.tableaux)
    if len(tableaux) == 1:
        return tableaux
    halves = tableau_halves(state.bank)
    return [t for t in tableaux if halves[t] > 0] or tableaux


def _calls_banco(state: TableState, player: str, free: int, rng: random.Random,
                 habits: Habits) -> bool:
    """Now and then a punter who can cover the whole bank calls banco (the banco suivi more
    readily: it is their right to go again)."""
    if not state.settings.banco_allowed or player in state.banco_calls or free < state.bank:
        return False
    limit = state.rules.bancos_per_bank
    if limit is not None and state.bancos_in_a_row >= limit:
        return False
    return rng.random() < (habits.suivi_rate if player == state.banco_suivi
                           else habits.banco_rate)


def _play(state: TableState, rng: random.Random, command_id: CommandId, habits: Habits,
          people: frozenset[str]) -> c.TableCommand:
    assert state.coup is not None
    step = state.coup.legal_steps()[0]
    label = f"{step.step!s}-{state.coup.cards_dealt}"  # !s: str's own, not Enum.__format__
    table_step = TABLE_STEPS.get(step.step)
    if table_step is not None:
        return table_step(command_id=command_id(label))
    if step.step is Step.OFFER:  # the banker's default: "Je donne" (domain.game.policies); by
        banker = state.banker or CROUPIER  # a coin, he shows down (`Habits.random_choices`)
        if habits.random_choices and rng.random() < 0.2:
            return c.ShowDown(command_id=command_id(label), actor=banker)
        return c.OfferCard(command_id=command_id(label), actor=banker)
    side = step.side
    assert side is not None
    actor = state.hand_holder(side) or CROUPIER
    coin = habits.random_choices and state.coup.rule_for(side) is Rule.CHOICE
    draw = rng.random() < 0.5 if coin else default_draw(state, side)
    return c.Decide(command_id=command_id(f"decide-{side!s}"), actor=actor, side=side,
                    draw=draw)


TABLE_STEPS: dict[Step, type[c.DealCard | c.ShowNaturals | c.SettleCoup]] = {
    Step.DEAL: c.DealCard, Step.SHOW_NATURALS: c.ShowNaturals, Step.SETTLE: c.SettleCoup}
"""The coup's steps that are the table's, the croupier's command for each."""

Move = Callable[[TableState, random.Random, CommandId, Habits, frozenset[str]], c.TableCommand]
MOVES: dict[Phase, Move] = {
    Phase.PLAYING: _play, Phase.BETTING: _stakes, Phase.SETTLED: _croupier(c.PayCoup, "pay"),
    Phase.NO_BANK: _bank, Phase.NO_SHOE: _croupier(c.ShuffleShoe, "shuffle"),
    Phase.SHUFFLED: _shuffle_ritual, Phase.BURNING: _croupier(c.BurnCard, "burn"),
    Phase.TAILLE_OVER: _croupier(c.RevealSeed, "reveal")}
"""The bots' move in each phase of the table (looked up: a match would read the phase's
members off the enum class, each read a call of its metaclass's hook)."""


def playable(state: TableState) -> bool:
    """Whether bots can go on: enough players with chips to make a coup."""
    minimum = state.settings.min_stake
    with_chips = [s for s in state.seats if not s.standing and s.chips >= minimum]
    return len(with_chips) >= state.rules.banking.players_needed

