"""The table service: a command in, the Table aggregate decides, its events are stored.

One command is one transaction. A command id seen before answers what it answered the first
time and records nothing. Commands on one table queue in the process; two processes racing
on one table: the loser waits a jittered moment, reloads and tries again, and after a few
rounds gets a `Conflict`. RNG shoes are drawn here (the domain has no
randomness): the seed goes to the vault, sealed, and only its commitment into the events;
each card is read off the shoe's order when it is dealt or burned.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import lru_cache
from typing import Any, ClassVar

import msgspec
from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from domain import commands as c
from domain.cards import Card, card
from domain.coup import Side
from domain.defaults import default_draw
from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.settings import TableSettings
from domain.shoe import ALGORITHM, Shoe, check_seed, commitment, shoe_order
from domain.table import Phase, TableState
from domain.table_aggregate import Table
from infra.application import SabotApplication
from infra.errors import DuplicateCommand, SeedAlreadySealed

RETRIES = 8
BACKOFF = 0.005  # seconds: the first retry waits up to 10 ms, the last up to 1.3 s
_LOCKS: dict[uuid.UUID, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@contextmanager
def one_at_a_time(aggregate_id: uuid.UUID) -> Iterator[None]:
    """Serialise this process's commands on one aggregate (others still race, and retry)."""
    with _LOCKS_GUARD:
        if len(_LOCKS) > 4096:
            for key in [k for k, lock in _LOCKS.items() if not lock.locked()]:
                del _LOCKS[key]
        lock = _LOCKS.setdefault(aggregate_id, threading.Lock())
    with lock:
        yield


class Conflict(OutOfTurn):
    """Another command on the same table won the race, every time we tried."""


class Recorded(msgspec.Struct, frozen=True):
    """What a command did: the aggregate it acted on (`table_id`: a table, or an auction or a
    tournament through `apply_once`), its version after, and the events it recorded."""

    table_id: uuid.UUID
    version: int
    events: list[dict[str, Any]]


@lru_cache(maxsize=256)
def _order(shoe: Shoe, seed: bytes) -> tuple[Card, ...]:
    return tuple(shoe_order(shoe, seed))


def describe(event: Any) -> dict[str, Any]:
    """An event as a plain dict: its type, version, and fields (for answers and views)."""
    fields = {k: v for k, v in event.__dict__.items()
              if k not in ("originator_id", "originator_topic")}
    return {"type": type(event).__name__, **msgspec.to_builtins(fields)}


def random_seeds(table_id: uuid.UUID, taille: int) -> bytes:
    """The production seed source: 32 bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(32)


def seeds_from(master: bytes) -> Callable[[uuid.UUID, int], bytes]:
    """A reproducible seed source for bot games and tests: HMAC(master, table/taille)."""

    def seed(table_id: uuid.UUID, taille: int) -> bytes:
        return hmac.new(master, f"{table_id}/{taille}".encode(), hashlib.sha256).digest()

    return seed


class TableService(SabotApplication):
    snapshotting_intervals: ClassVar[dict[type, int]] = {Table: 100}
    # Keep the tables in use in memory: a load reads only the events recorded since the
    # cached version (fast-forward) and works on a deep copy, so a refused command cannot
    # corrupt the cache. A stale copy cannot win: its save loses at the database (version
    # taken) and is retried on a fresh load. The environment may override either setting.
    env: ClassVar[dict[str, str]] = {
        "AGGREGATE_CACHE_MAXSIZE": "256",
        "DEEPCOPY_FROM_AGGREGATE_CACHE": "y",
    }
    seed_source: Callable[[uuid.UUID, int], bytes] = staticmethod(random_seeds)

    # --- reading ------------------------------------------------------------------

    def table(self, table_id: uuid.UUID) -> Table:
        table: Table = self.load(table_id, "table")
        return table

    def load(self, aggregate_id: uuid.UUID, what: str) -> Any:
        """An aggregate by id, or `NotFound` naming what was looked for."""
        try:
            return self.repository.get(aggregate_id)
        except AggregateNotFoundError:
            raise NotFound(f"no {what} {aggregate_id}", rule=f"unknown-{what}") from None

    def state(self, table_id: uuid.UUID) -> TableState:
        return self.table(table_id).state

    def events_of(self, table_id: uuid.UUID, gt: int | None = None,
                  lte: int | None = None) -> list[Any]:
        return list(self.repository.event_store.get(table_id, gt=gt, lte=lte))

    # --- writing ------------------------------------------------------------------

    def open_table(self, name: str, settings: TableSettings, *, command_id: str,
                   tournament: str | None = None, actor: str = "@organiser") -> Recorded:
        table_id = Table.create_id(name)
        answered = self.answered(command_id)
        if answered is not None:
            return answered
        if self._exists(table_id):
            raise RuleViolation(f"a table named {name!r} is already open", rule="table-exists")
        table = Table(name=name, settings=settings.check(), tournament=tournament, actor=actor,
                      command_id=command_id)
        return self.record(table, command_id)

    def execute(self, table_id: uuid.UUID, command: c.TableCommand) -> Recorded:
        """Apply one command to a table, once, whatever the retries and races."""
        return self.apply_once(table_id, "table", command.command_id,
                               lambda table: self._decide(table, command))

    def apply_once(self, aggregate_id: uuid.UUID, what: str, command_id: str,
                   decide: Callable[[Any], object]) -> Recorded:
        """Load, decide, record: once per command id; a lost race reloads and decides again.

        Commands on one aggregate queue in this process (`one_at_a_time`); a race lost to
        another process waits a jittered, growing moment before it tries again."""
        with one_at_a_time(aggregate_id):
            return self._apply_once(aggregate_id, what, command_id, decide)

    def _apply_once(self, aggregate_id: uuid.UUID, what: str, command_id: str,
                    decide: Callable[[Any], object]) -> Recorded:
        for attempt in range(RETRIES):
            if attempt:
                time.sleep(random.uniform(0, BACKOFF * 2**attempt))
            answered = self.answered(command_id)
            if answered is not None:
                if answered.table_id != aggregate_id:
                    raise RuleViolation(f"command id {command_id!r} was used for another "
                                        f"{what} ({answered.table_id})",
                                        rule="command-id-reused")
                return answered
            aggregate = self.load(aggregate_id, what)
            decide(aggregate)
            try:
                return self.record(aggregate, command_id)
            except IntegrityError:
                continue
        raise Conflict(f"the {what} changed under this command too often; try again",
                       rule="conflict")

    def record(self, aggregate: Any, command_id: str) -> Recorded:
        """Save an aggregate's new events under a command id; a duplicate answers as before."""
        pending = list(aggregate._pending_events)
        if not pending:
            return Recorded(aggregate.id, aggregate.version, [])
        try:
            self.save(aggregate, command_id=command_id)
        except DuplicateCommand:
            answered = self.answered(command_id)
            assert answered is not None
            return answered
        return Recorded(aggregate.id, aggregate.version, [describe(e) for e in pending])

    def answered(self, command_id: str) -> Recorded | None:
        recorded = self.recorded_command(command_id)
        if recorded is None:
            return None
        table_id, first, last = recorded
        events = self.events_of(table_id, gt=first - 1, lte=last)
        return Recorded(table_id, last, [describe(e) for e in events])

    def _exists(self, table_id: uuid.UUID) -> bool:
        return bool(self.events_of(table_id, lte=1))

    # --- deciding -----------------------------------------------------------------

    def _decide(self, table: Table, command: c.TableCommand) -> None:
        s = table.state
        who = {"actor": command.actor, "command_id": command.command_id}
        match command:
            case c.SeatPlayer(player=p, chips=chips, side=side, standing=standing):
                table.seat_player(player=p, chips=chips, side=side, standing=standing, **who)
            case c.LeaveTable(player=p):
                table.leave(player=p, **who)
            case c.AdjustChips(player=p, delta=delta, reason=reason):
                table.adjust_chips(player=p, delta=delta, reason=reason, **who)
            case c.ShuffleShoe(physical=physical):
                self._shuffle(table, physical, who)
            case c.ContributeEntropy(player=p, entropy=entropy):
                table.contribute(player=p, entropy=entropy.lower(), **who)
            case c.CutShoe(player=p, position=position):
                table.cut(player=p, position=position, **who)
            case c.BurnCard(card=given):
                pos = s.shoe.position if s.shoe else 0
                table.burn(card=self._next_card(s, given), position=pos, **who)
            case c.AwardBank(player=p, amount=amount, how=how):
                self._check_taker(s, command.actor, p)
                table.award_bank(player=p, amount=amount, how=how, **who)
            case c.DeclineBank(player=p):
                table.decline_bank(player=p, **who)
            case c.RetireBank(player=p):
                table.retire_bank(player=p, amount=s.bank, **who)
            case c.PlaceBet(player=p, spot=spot, amount=amount):
                self._check_own(command.actor, p)
                table.place_bet(coup=s.coup_number + 1, player=p, spot=spot, amount=amount,
                                **who)
            case c.PlaceStake(player=p, tableau=tableau, amount=amount):
                self._check_own(command.actor, p)
                table.place_stake(coup=s.coup_number + 1, player=p, tableau=tableau,
                                  amount=amount, **who)
            case c.CallBanco(player=p):
                self._check_own(command.actor, p)
                table.call_banco(coup=s.coup_number + 1, player=p, **who)
            case c.CloseBetting():
                table.close_betting(coup=s.coup_number + 1, **who)
                table.record_coverage(**who)
            case c.DealCard(card=given):
                self._deal(table, given, who)
            case c.ShowNaturals():
                coup = self._coup(s)
                table.show_naturals(coup=s.coup_number, sides=coup.naturals_preview(), **who)
            case c.Decide(side=side, draw=draw):
                self._decide_hand(table, side, draw, who)
            case c.PlayDefault(coup=number, side=side):
                if s.phase is Phase.PLAYING and s.coup_number == number and (
                    s.coup is not None and s.coup.to_act() is side
                ):
                    self._decide_hand(table, side, default_draw(s, side), who)
            case c.SettleCoup():
                coup = self._coup(s)
                table.settle(coup=s.coup_number, outcomes=coup.outcomes_now(),
                             points=coup.points(), **who)
            case c.PayCoup():
                table.record_payment(**who)
            case c.RevealSeed():
                self._reveal(table, who)
            case c.EndTaille():
                remaining = s.shoe.remaining if s.shoe else 0
                table.end_taille(taille=s.taille, remaining=remaining, **who)

    def _shuffle(self, table: Table, physical: bool, who: dict[str, str]) -> None:
        s = table.state
        s.require(Phase.NO_SHOE, doing="shuffle")
        committed = ""
        if not physical:
            seed = self.seed_source(table.id, s.taille + 1)
            committed = commitment(seed)
            with suppress(SeedAlreadySealed):  # a retried shuffle drew the same seed
                self.vault.store(committed, seed)
        table.shuffle(taille=s.taille + 1, decks=s.settings.decks, algorithm=ALGORITHM,
                      commitment=committed, physical=physical, **who)

    def _next_card(self, s: TableState, given: Card | None) -> Card:
        shoe = s.shoe
        if shoe is None:
            raise OutOfTurn("there is no shoe yet", rule="no-shoe")
        if shoe.physical:
            if given is None:
                raise RuleViolation("a physical shoe's card must be given", rule="card-missing")
            return card(given)
        if given is not None:
            raise RuleViolation("an RNG shoe deals its own cards", rule="card-given")
        if shoe.cut == 0:
            raise OutOfTurn("the shoe is not cut yet", rule="shoe-not-cut")
        if shoe.remaining <= 0:
            raise RuleViolation("the shoe is empty", rule="shoe-empty")
        seed = self.vault.unseal(shoe.commitment)
        return _order(shoe.public(), seed)[shoe.position]

    def _deal(self, table: Table, given: Card | None, who: dict[str, str]) -> None:
        s = table.state
        coup = self._coup(s)
        next_card = self._next_card(s, given)
        assert s.shoe is not None
        position = s.shoe.position
        if coup.awaiting_card is not None:
            table.draw_third_card(coup=s.coup_number, card=next_card, side=coup.awaiting_card,
                                  position=position, **who)
        else:
            side = coup.deal_order[coup.cards_dealt % len(coup.deal_order)]
            table.deal(coup=s.coup_number, card=next_card, side=side, position=position, **who)

    def _decide_hand(self, table: Table, side: Side, draw: bool, who: dict[str, str]) -> None:
        number = table.state.coup_number
        if draw:
            table.ask_third_card(coup=number, side=side, **who)
        else:
            table.stand(coup=number, side=side, **who)

    def _reveal(self, table: Table, who: dict[str, str]) -> None:
        s = table.state
        s.require(Phase.TAILLE_OVER, doing="reveal the seed")
        assert s.shoe is not None
        seed = self.vault.unseal(s.shoe.commitment)
        check_seed(seed, s.shoe.commitment)
        table.reveal(taille=s.taille, seed=seed.hex(), **who)

    @staticmethod
    def _coup(s: TableState) -> Any:
        if s.phase is not Phase.PLAYING or s.coup is None:
            raise OutOfTurn(f"no coup is being played (the table is at {s.phase.value})",
                            rule="out-of-turn")
        return s.coup

    @staticmethod
    def _check_own(actor: str, player: str) -> None:
        if actor != player and not actor.startswith("@"):
            raise OutOfTurn(f"{actor} may not stake for {player}", rule="not-your-stake")

    @staticmethod
    def _check_taker(s: TableState, actor: str, player: str) -> None:
        if actor.startswith("@"):
            return
        if actor != player or s.bank_offered_to != player:
            raise OutOfTurn(f"the shoe is not offered to {actor}", rule="not-your-bank")

