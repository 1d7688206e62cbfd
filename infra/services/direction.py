"""The director's decisions: what a running tournament does next, and the commands it takes.

`direct(desk, now)` takes one step of a running tournament: finish it once decided, play a
play-off for a tie on a cut's line, start the break the format calls for after a round and
wait it out, start the next round (balancing first), play the step under way (the bots'
secret bets, every table dealt to its next coup, the players who cannot
cover the minimum put out, the tables balanced), end the round (by coups, by minutes, or
when no table can play), or start the next step. It reads the tournament and its tables and
acts through a `Desk`, and does no I/O itself: one copy of the director's logic for the
store-backed `infra.services.tournaments.Director` (commands applied once by their ids under its
lease's epoch, croupiers' tables waited for, a checkpoint at each round's end) and the
in-memory preview (`infra.services.preview`: the aggregates in a dict, the bots dealing).

Every command id follows from the tournament's recorded position (`<id>/r<round>/k<step>/...`),
so a director that dies at any point and its successor carry on exactly where it stopped.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Iterable, Mapping
from contextlib import suppress
from enum import StrEnum
from typing import Protocol

from domain.actors import ORGANISER
from domain.bots import playable
from domain.errors import OutOfTurn
from domain.game.coup import Outcome, Side
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.betting_order import check_turn_to_come
from domain.table.state import Phase, TableState
from domain.tournament import commands as tc
from domain.tournament.aggregate import Tournament
from domain.tournament.balancing import Move
from domain.tournament.entrants import Bust, Status
from domain.tournament.records import Phase as TournamentPhase
from domain.tournament.records import SecretBet, Step
from domain.tournament.state import TournamentState, secret_commitment
from domain.tournament.table_orders import TableOrder
from infra.services.memory import Store

DIRECTOR = "@director"
PLAYOFF_STACK = 100  # a play-off coup's stacks, in minimum stakes


class Tick(StrEnum):
    ACTED = "acted"  # took a step; call again
    WAITING = "waiting"  # the clock, a pause, registration, or another director's lease
    FINISHED = "finished"


class SecretBetNotDealt(OutOfTurn):
    """A secret bet's coup has not been dealt: it cannot be revealed yet."""


class Desk(Protocol):
    """What a director reads and does for one tournament."""

    tournament_id: uuid.UUID
    epoch: int  # the director's lease's epoch, carried by its commands

    def state(self) -> TournamentState:
        """The tournament as recorded."""
        ...

    def tables(self) -> dict[str, TableState]:
        """The tournament's open tables, by name."""
        ...

    def table(self, name: str) -> TableState | None:
        """A table by name, None if it was never opened."""
        ...

    def open_table(self, name: str, command_id: str) -> None: ...

    def execute(self, name: str, command: c.TableCommand) -> None:
        """Apply a command to a table (once)."""
        ...

    def do(self, command: tc.TournamentCommand) -> None:
        """Execute a tournament command (once), then send the table commands its events
        need."""
        ...

    def deal(self, name: str, until: int) -> bool:
        """The tournament's table has closed coup `until` (or cannot go on): the bots play it
        there, or a croupier has dealt it (False: not yet)."""
        ...

    def play(self, name: str, until: int) -> bool:
        """The house deals a table until it has closed coup `until` (or cannot go on), the
        bots playing their seats (False: a person's move is still awaited)."""
        ...

    def master(self) -> bytes: ...

    def seating_seed(self) -> bytes: ...

    def place_secret_bet(self, player: str, commitment: str, command_id: str) -> None: ...

    def reveal_secret_bet(self, player: str, spot: str, amount: int, nonce: str,
                          command_id: str) -> None:
        """Reveal a secret bet; `SecretBetNotDealt` while its coup is not dealt."""
        ...

    def round_ended(self) -> None:
        """A round has ended and its tables are balanced (a checkpoint's moment)."""
        ...


def direct(desk: Desk, now: float) -> Tick:
    """One step of the tournament at time `now`; whether it acted, waits, or has finished."""
    state = desk.state()
    tournament_id, epoch = desk.tournament_id, desk.epoch
    if state.cancelled:  # called off before its start: no table was ever opened
        return Tick.FINISHED
    if state.phase is TournamentPhase.FINISHED:
        close_tables(desk, state)
        return Tick.FINISHED
    if state.phase is TournamentPhase.REGISTRATION or state.paused:
        return Tick.WAITING
    here = f"{tournament_id}/r{state.round}"
    if state.decided:
        desk.do(tc.FinishTournament(actor=DIRECTOR, command_id=f"{tournament_id}/finish",
                                    epoch=epoch))
        close_tables(desk, desk.state())
    elif state.playoff is not None:
        return play_off(desk, state)
    elif state.break_due() is not None:
        desk.do(tc.StartBreak(at=now, actor=DIRECTOR, command_id=f"{here}/break", epoch=epoch))
    elif state.break_left(now):
        return Tick.WAITING
    elif state.phase in (TournamentPhase.SEATED, TournamentPhase.BETWEEN_ROUNDS):
        cid = f"{tournament_id}/r{state.round + 1}/start"
        balance(desk, f"{cid}/balance")  # if a crash skipped it
        desk.do(tc.StartRound(actor=DIRECTOR, command_id=cid, at=now, epoch=epoch))
    elif state.step is not None:
        return play_step(desk, state, state.step)
    else:
        tables = desk.tables()
        chips = chips_of(tables.values())
        if state.round_over(now) or stuck(state, tables.values()):
            desk.do(tc.EndRound(chips=chips, coups_bet=coups_bet(desk, state, chips),
                                actor=DIRECTOR, command_id=f"{here}/end", epoch=epoch))
            balance(desk, f"{here}/end/balance")
            desk.round_ended()
        else:
            coups = {name: table.coup_number for name, table in tables.items()}
            desk.do(tc.StartStep(coups=coups, chips=chips, actor=DIRECTOR,
                                 command_id=f"{here}/k{state.steps + 1}/start", epoch=epoch))
    return Tick.ACTED


def chips_of(tables: Iterable[TableState]) -> dict[str, int]:
    """Each player in play's chips at their table, their bank included."""
    return {player: table.holding(player) for table in tables for player in table.players()}


def coups_bet(desk: Desk, state: TournamentState,
              players: Iterable[str]) -> dict[str, int] | None:
    """Where the format sets `min_bets`: the bets (coups with chips at stake) each of
    `players` has made at every table the tournament opened, closed ones included; None
    where it sets none."""
    if not state.settings.min_bets:
        return None
    counts = [table.coups_bet for number in range(1, state.tables_opened + 1)
              if (table := desk.table(state.table_name(number))) is not None]
    return {player: sum(count.get(player, 0) for count in counts) for player in players}


def stuck(state: TournamentState, tables: Iterable[TableState]) -> bool:
    """No table can play a coup and nobody is to be put out: the round can only end."""
    tables = list(tables)
    minimum = state.limits.min_stake
    return not any(playable(table) for table in tables) and all(
        table.holding(p) >= minimum for table in tables for p in table.players())


def busted_at(table: TableState, step: Step, minimum: int) -> list[Bust]:
    """The players of a table who cannot cover the minimum after a step, with their chips at
    the step's start (one at least, so that they rank above those out before)."""
    return [Bust(player=p, chips=max(1, step.chips.get(p, table.holding(p))))
            for p in table.players() if table.holding(p) < minimum]


def play_step(desk: Desk, state: TournamentState, step: Step) -> Tick:
    """Every table of the step plays to the coup after the one it had closed at the step's
    start; then the players who cannot cover the round's minimum are out, with their chips at
    the step's start; the tables are balanced; the step ends."""
    here = f"{desk.tournament_id}/r{state.round}/k{step.number}"
    bets = secret_bets(desk, state, here)
    dealt = [desk.deal(name, step_coup(state, name, coups)) for name, coups in step.coups.items()
             if name in state.tables]  # every table moves on, whichever waits
    if not all(dealt):
        return Tick.WAITING
    for player, (spot, amount, nonce) in bets.items():
        with suppress(SecretBetNotDealt):  # a table that could not play: forfeited
            desk.reveal_secret_bet(player, spot, amount, nonce, f"{here}/reveal/{player}")
    minimum, epoch = state.limits.min_stake, desk.epoch
    for name, table in desk.tables().items():
        busted = busted_at(table, step, minimum)
        if busted:
            desk.do(tc.RecordBustOuts(table=name, coup=table.coup_number, busted=busted,
                                      actor=DIRECTOR, command_id=f"{here}/bust/{name}",
                                      epoch=epoch))
    balance(desk, f"{here}/balance")
    desk.do(tc.EndStep(actor=DIRECTOR, command_id=f"{here}/end", epoch=epoch))
    return Tick.ACTED


def step_coup(state: TournamentState, name: str, coups: int) -> int:
    """The coup a table plays to in a step: the one after those it had closed, but never past
    the round's last (a croupier who dealt ahead of the steps has played the round's coups)."""
    last = state.last_coup_at(name, coups)
    return coups + 1 if last is None else min(coups + 1, last)


def secret_bet_on(table: TableState, name: str, player: str, commitment: str, *, actor: str,
                  command_id: str) -> tc.PlaceSecretBet:
    """A player's secret bet on the next coup of their table `name`: refused once that coup is
    being dealt, or, betting in turn, once the player's turn has passed (it is a turn's bet)."""
    if table.phase in (Phase.PLAYING, Phase.SETTLED):
        raise OutOfTurn(f"the coup at {name} is being dealt", rule="betting-closed")
    check_turn_to_come(table, player)
    return tc.PlaceSecretBet(player=player, table=name, coup=table.coup_number + 1,
                             commitment=commitment, actor=actor, command_id=command_id)


def secret_bet_reveal(bet: SecretBet, table_events: Iterable[object], spot: str, amount: int,
                      nonce: str, *, actor: str, command_id: str) -> tc.RevealSecretBet:
    """The reveal of a secret bet, its coup's outcome read off its table's events;
    `SecretBetNotDealt` while the coup is not settled."""
    outcome, banker_point = dealt_outcome(table_events, bet.table, bet.coup)
    return tc.RevealSecretBet(player=bet.player, spot=spot, amount=amount, nonce=nonce,
                              outcome=outcome, banker_point=banker_point, actor=actor,
                              command_id=command_id)


def dealt_outcome(events: Iterable[object], table: str,
                  coup: int) -> tuple[Outcome, int]:
    """The punter's hand's result in coup `coup` of `table` (its `events`) and the banker's
    point, which a secret bet on it is paid by; `SecretBetNotDealt` while it is not settled."""
    for event in events:
        if isinstance(event, Table.CoupSettled) and event.coup == coup:
            return event.outcomes[Side.PUNTER], event.points[Side.BANKER]
    raise SecretBetNotDealt(f"coup {coup} at {table} is not dealt yet", rule="secret-bet-not-dealt")


def bot_secret_bet(master: bytes, round_: int, player: str,
                   amount: int) -> tuple[str, int, str]:
    """A house bot's secret bet of a round: its spot and nonce from the master seed (so a
    successor director reveals the same), `amount` staked."""
    digest = hmac.new(master, f"secret/{round_}/{player}".encode(), hashlib.sha256).digest()
    return ("punter", "banker")[digest[0] % 2], amount, digest[1:17].hex()


def secret_bets(desk: Desk, state: TournamentState, here: str
                ) -> dict[str, tuple[str, int, str]]:
    """On the round's last coup, where the stage allows it, each house bot places a secret
    bet of the round's minimum; the bets still to reveal once the coup is dealt."""
    if not state.current.secret_bet or state.coups_left() != 1:  # the step under way: the last
        return {}
    master = desk.master()
    bets = {}
    for entrant in state.entrants.values():
        if not entrant.bot or entrant.status is not Status.SEATED:
            continue
        spot, amount, nonce = bet = bot_secret_bet(master, state.round, entrant.player,
                                                   state.limits.min_stake)
        if not any(b.player == entrant.player and b.round == state.round
                   for b in state.secret_bets):
            desk.place_secret_bet(entrant.player, secret_commitment(spot, amount, nonce),
                                  f"{here}/secret/{entrant.player}")
        bets[entrant.player] = bet
    settled = {b.player for b in desk.state().secret_bets if b.round == state.round and b.settled}
    return {p: bet for p, bet in bets.items() if p not in settled}


def movers(state: TournamentState, seed: bytes) -> set[str]:
    """The players the balancing plan moves or reseats from a broken table."""
    plan = state.balancing_plan(seed)
    return ({m.player for m in plan if isinstance(m, Move)}
            | {p for b in plan if not isinstance(b, Move) for p in b.players})


def balance(desk: Desk, command_id: str) -> None:
    """Break and move as the tournament's plan says; moving bankers retire first (the plan
    is asked for them only where a table has a banker: the tournament makes it again)."""
    tables = desk.tables()
    banked = any(table.banker is not None for table in tables.values())
    moving = movers(desk.state(), desk.seating_seed()) if banked else set()
    retirements = bank_retirements(tables, moving, command_id)
    for name, command in retirements:
        desk.execute(name, command)
    chips = chips_of((desk.tables() if retirements else tables).values())
    desk.do(tc.BalanceTables(chips=chips, actor=DIRECTOR, command_id=command_id,
                             epoch=desk.epoch))


def bank_retirements(tables: Mapping[str, TableState], players: set[str],
                     command_id: str) -> list[tuple[str, c.RetireBank]]:
    """Players about to move or leave give up the bank first: the commands, by table."""
    return [(name, retirement(table.banker, f"{command_id}:{name}"))
            for name, table in tables.items() if table.banker in players]


def retirement(banker: str, command_id: str) -> c.RetireBank:
    return c.RetireBank(command_id=f"{command_id}/retire", actor=ORGANISER, player=banker)


def mirrored(order: TableOrder, table: TableState) -> list[c.TableCommand]:
    """The commands a tournament's table order sends to its table: a banker who leaves
    retires the bank first."""
    command = order.command
    if isinstance(command, c.LeaveTable) and table.banker == command.player:
        return [retirement(command.player, command.command_id), command]
    return [command]


def send_order(store: Store, tournament: Tournament, order: TableOrder) -> None:
    """Send a tournament's table order to its table (`mirrored`), opening the table first,
    as the organiser, if it is not open yet; each command applies once by its id."""
    table_id = Table.create_id(order.table)
    if not store.events_of(table_id, lte=1):
        store.open_table(order.table, tournament.state.settings.table_settings(),
                         command_id=f"{tournament.id}/open/{order.table}",
                         tournament=tournament.state.name, actor=ORGANISER)
    for command in mirrored(order, store.state(table_id)):
        store.execute(table_id, command)


def play_off(desk: Desk, state: TournamentState) -> Tick:
    """The tied players sit at a play-off table with equal stacks and play one coup (the
    house dealing it, a person's moves waited for); who bet in it, then the chips they end it
    with, settle the tie (`domain.tournament.stages.playoff_decision`)."""
    playoff = state.playoff
    assert playoff is not None
    number, epoch = state.playoffs + 1, desk.epoch
    here = f"{desk.tournament_id}/r{state.round}/playoff{number}"
    name = f"{state.name}-playoff-{state.round}-{number}"
    stack = PLAYOFF_STACK * state.limits.min_stake
    if desk.table(name) is None:
        desk.open_table(name, f"{here}/open")
    for player in playoff.players:
        desk.execute(name, c.SeatPlayer(command_id=f"{here}/seat/{player}", actor=DIRECTOR,
                                        player=player, chips=stack))
    if not desk.play(name, 1):
        return Tick.WAITING
    table = desk.table(name)
    assert table is not None
    chips = {player: table.holding(player) for player in playoff.players}
    idle = [player for player in playoff.players if not table.coups_bet.get(player)]
    close(desk, name, f"{here}/close")
    desk.do(tc.SettlePlayOff(table=name, chips=chips, idle=idle, actor=DIRECTOR,
                             command_id=here, epoch=epoch))
    balance(desk, f"{here}/balance")
    return Tick.ACTED


def close(desk: Desk, name: str, command_id: str) -> None:
    """End a table's taille and reveal its shoe's seed."""
    table = desk.table(name)
    if table is not None and table.phase in (Phase.BETTING, Phase.NO_BANK):
        desk.execute(name, c.EndTaille(command_id=f"{command_id}:end", actor=DIRECTOR))
    table = desk.table(name)
    if table is not None and table.phase is Phase.TAILLE_OVER:
        desk.execute(name, c.RevealSeed(command_id=f"{command_id}:reveal", actor=DIRECTOR))


def close_tables(desk: Desk, state: TournamentState) -> None:
    """Every table the tournament opened ends its taille and reveals its shoe's seed, so
    that every card can be checked (again after a crash: each step applies once)."""
    for number in range(1, state.tables_opened + 1):
        close(desk, state.table_name(number), f"{desk.tournament_id}/finish:{number}")
