"""Tournaments through the store: the organiser's commands, the director, the shared view.

`Tournaments` is the organiser's application service (the HTTP routes and the CLI call it):
create from a format, register (people and house bots; a busted player again: a re-entry),
unregister, start (the seating draw), pause, resume, intervene, a player's secret bet and its
reveal; and the reads: `view` (the big screen: one JSON shape for
`GET /tournaments/{id}` and `sabot tournament show --json`), `results` (provisional until
published: `infra.services.results`).

Every tournament command is executed once (`Tournament.execute` through
`TableService.apply_once`), then the table commands that mirror its events
(`Tournament.table_orders`: seat, move, leave, adjust) are sent to the tables under command ids
that follow from those events, so re-sending them is harmless. A banker who must move or leave
first retires the bank (before the chips to move are read, so the bank moves with its owner).

Seeds: a tournament has one master seed, the `--seed` given (demos, tests) or 32 bytes of
the operating system's CSPRNG, sealed in the vault at creation; only its commitment is
recorded. The seating seed and every shoe seed of its tables derive from it (HMAC), and the
bots' choices too, so no seed ever travels in a message: a worker unseals it from the store.

The big screen's shape of a tournament is `infra.services.tournament_view`'s.

`Director.tick` takes one step of a running tournament and says whether it acted, waits (a
clock, a pause, croupiers still dealing, another director's lease) or saw it finished. What
the step does is decided by `infra.services.direction.direct` (the director's decisions, the
preview's too), on a `StoreDesk` that loads and saves through the services. Each decision is
derived from the recorded events alone (the round, its steps and their snapshots, the
play-off waiting, the clock's recorded times), and each command id from the tournament's
recorded position, so a director that dies at any point and its successor carry on exactly
where it stopped; a director taking over first re-sends the table commands of every recorded
event, and before each step those of the commands others recorded since (the organiser's,
whose API replica may have died before sending them, or be sending them still). One director
acts per tournament: it holds the lease (`infra.store.leases`) and its commands carry the lease's
epoch.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
import uuid
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from eventsourcing.utils import get_topic

from domain.actors import ORGANISER
from domain.bots import playable
from domain.errors import OutOfTurn, RuleViolation
from domain.game.shoe import commitment
from domain.limits import taken_by, trimmed_name
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.defaults import clock_default
from domain.table.room import RoundOver, TournamentPaused
from domain.table.state import Phase, TableState
from domain.tournament import commands as tc
from domain.tournament.aggregate import Tournament
from domain.tournament.records import Phase as TournamentPhase
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import TournamentState
from domain.tournament.table_orders import table_orders
from infra.errors import SeedAlreadySealed
from infra.services.autoplay import Awaited, play_bot_seat, play_coups
from infra.services.direction import (
    DIRECTOR,
    Tick,
    bank_retirements,
    chips_of,
    direct,
    secret_bet_on,
    secret_bet_reveal,
    send_order,
)
from infra.services.tables import Recorded, TableService, seating_seed_from, seeds_from
from infra.services.tournament_view import Position, Results, TournamentView, view_of
from infra.store import ledger
from infra.store.checkpointer import write_checkpoint
from infra.store.leases import Lease, Leases

log = logging.getLogger("sabot.director")

LEASE_SECONDS = 5.0
FRESH_SECONDS = 1.0  # a tournament's view is read again at least this often (`Tournaments.view`)


@dataclass(frozen=True)
class _Shown:
    """What a tournament's view was last made of: its streams' versions, the time then."""

    versions: dict[uuid.UUID, int]  # the tournament's and each open table's
    at: float
    tournament: Tournament
    tables: dict[str, TableState]
    lease: Lease | None


def tournament_id_of(ref: str) -> uuid.UUID:
    """A tournament named in a path or on the command line: its UUID, or its name."""
    try:
        return uuid.UUID(ref)
    except ValueError:
        return Tournament.create_id(ref)


class Tournaments:
    """The organiser's commands and the reads, over one `TableService`."""

    def __init__(self, service: TableService) -> None:
        self.service = service
        self._masters: dict[uuid.UUID, bytes] = {}
        self._opened: set[uuid.UUID] = set()  # tables known open (a table is never deleted)
        self._shown: dict[uuid.UUID, _Shown] = {}
        fallback = service.seed_source
        if not getattr(fallback, "tournaments", False):
            service.seed_source = self._shoe_seeds(fallback)

    # --- reading ------------------------------------------------------------------

    def tournament(self, tournament_id: uuid.UUID) -> Tournament:
        tournament: Tournament = self.service.load(tournament_id, "tournament")
        return tournament

    def state(self, tournament_id: uuid.UUID) -> TournamentState:
        return self.tournament(tournament_id).state

    def ids(self) -> list[uuid.UUID]:
        """Every tournament of the store, oldest first (in each database, `infra.store.homes`)."""
        return self.service.streams_with(get_topic(Tournament.TournamentCreated))

    def listed(self, everything: bool = False) -> list[tuple[uuid.UUID, TournamentState]]:
        """The tournaments of the lobby, oldest first: the cancelled and the archived left
        out, unless `everything`."""
        current = self.current(self.ids(), "tournament")
        return [(tid, tournament.state) for tid, tournament in current.items()
                if everything or tournament.state.listed]

    def tables(self, tournament_id: uuid.UUID) -> dict[str, TableState]:
        """The tournament's open tables, by name."""
        return self.tables_of(self.state(tournament_id))

    def tables_of(self, state: TournamentState) -> dict[str, TableState]:
        """The open tables of the tournament `state`, by name, each as recorded now
        (`current`: a read a table made the director's step cost a round trip for each)."""
        return {name: table.state for name, table in self.open_tables(state).items()}

    def open_tables(self, state: TournamentState) -> dict[str, Table]:
        """The open tables of the tournament `state`, by name, as aggregates (`tables_of`)."""
        ids = {name: Table.create_id(name) for name in state.tables}
        ids = {name: table_id for name, table_id in ids.items() if self.opened(table_id)}
        current = self.current(ids.values(), "table")
        return {name: current[table_id] for name, table_id in ids.items()}

    def current(self, ids: Iterable[uuid.UUID], what: str) -> dict[uuid.UUID, Any]:
        """Each aggregate of `ids`, in order, as recorded now: the ones this process keeps are
        checked against the store's versions in one read, and only those that moved are read
        again (the lobby read each tournament, one round trip each, at every look)."""
        kept = {aggregate_id: self.service.kept(aggregate_id, what) for aggregate_id in ids}
        now = ledger.stream_versions(self.service.database, kept)
        return {aggregate_id: aggregate if now.get(aggregate_id) == aggregate.version
                else self.service.load(aggregate_id, what)
                for aggregate_id, aggregate in kept.items()}

    def opened(self, table_id: uuid.UUID) -> bool:
        """Whether the table was opened: asked of the store until it was."""
        if table_id not in self._opened and self.service.events_of(table_id, lte=1):
            self._opened.add(table_id)
        return table_id in self._opened

    def chips(self, tournament_id: uuid.UUID) -> dict[str, int]:
        """Each player in play's chips at their table, their bank included."""
        return chips_of(self.tables(tournament_id).values())

    def view(self, tournament_id: uuid.UUID, now: float | None = None) -> TournamentView:
        """The tournament as the pages show it. What it is made of (the tournament, each open
        table, the director's lease) is read again only when one of its streams has moved
        (their versions, in one read) or `FRESH_SECONDS` have passed: every page of an evening
        asks for it every second, and rebuilding each table for each of them cost more than
        the commands did (issue 36); the store's head, the key before, moved with every other
        tournament's write. A write of this process or another shows at once; the bound
        covers a director's lease renewed without an event."""
        shown = self._shown.get(tournament_id)
        clock = time.monotonic()
        if (shown is None or clock - shown.at >= FRESH_SECONDS
                or ledger.stream_versions(self.service.database, shown.versions)
                != shown.versions):
            tournament = self.tournament(tournament_id)
            tables = self.open_tables(tournament.state)
            versions = {tournament.id: tournament.version,
                        **{table.id: table.version for table in tables.values()}}
            shown = self._shown[tournament_id] = _Shown(
                versions, clock, tournament,
                {name: table.state for name, table in tables.items()},
                Leases(self.service.database).held(tournament_id))
        return view_of(shown.tournament, shown.tables, shown.lease,
                       time.time() if now is None else now)

    def results(self, tournament_id: uuid.UUID) -> Results:
        tournament = self.tournament(tournament_id)
        state = tournament.state
        finished = state.phase is TournamentPhase.FINISHED
        positions = [Position(player=r.player, position=r.position, tied=r.tied, prize=r.prize)
                     for r in state.results()] if finished else [
            Position(player=e.player, position=e.position, tied=e.tied, prize=e.prize or 0)
            for e in sorted(state.entrants.values(), key=lambda e: e.position or 0)
            if e.position is not None]
        winners = [p.player for p in positions if p.position == 1] if finished else []
        return Results(id=str(tournament.id), name=state.name, status=state.status.value,
                       winner=winners[0] if len(winners) == 1 else None, winners=winners,
                       prize_pool=state.pool, positions=positions,
                       published=tournament.published_at is not None,
                       published_by=tournament.published_by,
                       published_at=tournament.published_at)

    # --- the organiser's commands ---------------------------------------------------

    def create(self, name: str, settings: TournamentSettings, *, seed: bytes | None = None,
               actor: str = ORGANISER, command_id: str) -> uuid.UUID:
        """A new tournament; its master seed (the SHA-256 of `seed`, else 32 bytes from the
        CSPRNG) sealed in the vault. A name already taken is refused; a name is trimmed, 1
        to 100 printable characters."""
        name = trimmed_name(name, "tournament's name")
        tournament_id = Tournament.create_id(name)
        if self.service.answered(command_id) is not None:
            return tournament_id
        if self.service.events_of(tournament_id, lte=1):
            raise RuleViolation(f"a tournament named {name!r} exists", rule="tournament-exists")
        taken = taken_by(name, (state.name for _, state in self.listed(everything=True)))
        if taken is not None:
            raise RuleViolation(f"{name!r} is taken: a tournament named {taken!r} exists",
                                rule="tournament-exists")
        master = hashlib.sha256(seed).digest() if seed is not None else secrets.token_bytes(32)
        tournament = Tournament(name=name, settings=settings.check(), actor=actor,
                                command_id=command_id, master=commitment(master))
        with suppress(SeedAlreadySealed):  # the same seed for another tournament
            self.service.vault.store(commitment(master), master)
        self.service.record(tournament, command_id)
        return tournament_id

    def register(self, tournament_id: uuid.UUID, player: str, *, bot: bool = False,
                 actor: str = ORGANISER, command_id: str) -> Recorded:
        return self.execute(tournament_id, tc.RegisterPlayer(
            player=player, bot=bot, actor=actor, command_id=command_id))

    def unregister(self, tournament_id: uuid.UUID, player: str, *, actor: str = ORGANISER,
                   command_id: str) -> Recorded:
        return self.execute(tournament_id, tc.UnregisterPlayer(
            player=player, actor=actor, command_id=command_id))

    def start(self, tournament_id: uuid.UUID, *, actor: str = ORGANISER,
              command_id: str) -> Recorded:
        """Draw the seats from the seating seed: the director plays the rounds from here."""
        return self.execute(tournament_id, tc.DrawSeating(actor=actor, command_id=command_id))

    def pause(self, tournament_id: uuid.UUID, *, at: float | None = None,
              actor: str = ORGANISER, command_id: str) -> Recorded:
        when = time.time() if at is None else at
        return self.execute(tournament_id, tc.PauseTournament(
            at=when, actor=actor, command_id=command_id))

    def resume(self, tournament_id: uuid.UUID, *, at: float | None = None,
               actor: str = ORGANISER, command_id: str) -> Recorded:
        when = time.time() if at is None else at
        resumed = self.execute(tournament_id, tc.ResumeTournament(
            at=when, actor=actor, command_id=command_id))
        for name in self.tables(tournament_id):  # a deadline come in the pause played nothing
            self.service.restart_clocks(Table.create_id(name), when, f"{command_id}:{name}")
        return resumed

    def announce(self, tournament_id: uuid.UUID, text: str, *, at: float | None = None,
                 actor: str = ORGANISER, command_id: str) -> Recorded:
        """Tell the room something: the big screen's ticker."""
        when = time.time() if at is None else at
        return self.execute(tournament_id, tc.MakeAnnouncement(
            text=text, at=when, actor=actor, command_id=command_id))

    def cancel(self, tournament_id: uuid.UUID, *, actor: str = ORGANISER,
               command_id: str) -> Recorded:
        """Call the tournament off before its start (hidden from the listings, kept)."""
        return self.execute(tournament_id, tc.CancelTournament(actor=actor,
                                                               command_id=command_id))

    def archive(self, tournament_id: uuid.UUID, *, actor: str = ORGANISER,
                command_id: str) -> Recorded:
        """File the finished tournament away (hidden from the listings, kept)."""
        return self.execute(tournament_id, tc.ArchiveTournament(actor=actor,
                                                                command_id=command_id))

    def intervene(self, tournament_id: uuid.UUID, kind: str, player: str, reason: str, *,
                  delta: int = 0, table: str | None = None, actor: str = ORGANISER,
                  command_id: str) -> Recorded:
        """An organiser's intervention (`domain.tournament.commands.Intervene`), recorded
        with its reason and the player's chips before and after."""
        self.retire_bankers(tournament_id, {player}, command_id)
        return self.execute(tournament_id, tc.Intervene(
            intervention=kind, player=player, reason=reason, chips=self.chips(tournament_id),
            delta=delta, table=table, actor=actor, command_id=command_id))

    def place_secret_bet(self, tournament_id: uuid.UUID, player: str, commitment: str, *,
                         actor: str, command_id: str) -> Recorded:
        """A player's secret bet on their table's next coup: only its commitment is kept."""
        table = self.state(tournament_id).entrant(player).table or ""
        return self.execute(tournament_id, secret_bet_on(
            self.service.state(Table.create_id(table)), table, player, commitment, actor=actor,
            command_id=command_id))

    def reveal_secret_bet(self, tournament_id: uuid.UUID, player: str, spot: str, amount: int,
                          nonce: str, *, actor: str, command_id: str) -> Recorded:
        """Reveal a secret bet once its coup's cards are dealt; it is paid at the table."""
        bet = self.state(tournament_id).secret_bet_of(player)
        return self.execute(tournament_id, secret_bet_reveal(
            bet, self.service.events_of(Table.create_id(bet.table)), spot, amount, nonce,
            actor=actor, command_id=command_id))

    # --- applying and mirroring on the tables --------------------------------------

    def execute(self, tournament_id: uuid.UUID, command: tc.TournamentCommand) -> Recorded:
        """Execute a tournament command once, then send the table commands its events need."""
        recorded = self.service.apply_once(
            tournament_id, "tournament", command.command_id,
            lambda t: t.execute(command, lambda: self.seating_seed(tournament_id)))
        tournament = (recorded.aggregate if recorded.aggregate is not None
                      else self.tournament(tournament_id))  # as saved, with its events
        first = recorded.version - len(recorded.events)
        events = recorded.saved or (self.service.events_of(
            tournament_id, gt=first, lte=recorded.version) if recorded.events else [])
        for event in events:
            for order in table_orders(tournament, event):
                send_order(self.service, tournament, order)
        return recorded

    def resend(self, tournament_id: uuid.UUID, gt: int = 0, skip: str | None = None) -> int:
        """Send the table commands of the events recorded after version `gt` again (each
        applies once), but those of `skip`'s events; the last version read. For a director
        that died between a tournament command and its table commands, and for the commands
        another process recorded (the organiser's, through an API replica that may have died
        before sending their table commands, or may be sending them still). The tournament
        is read once, with those events."""
        tournament, events = self.service.load_since(tournament_id, "tournament", gt)
        last = gt
        for event in events:
            last = event.originator_version
            for order in table_orders(tournament, event) if event.actor != skip else ():
                send_order(self.service, tournament, order)
        return last

    def retire_bankers(self, tournament_id: uuid.UUID, players: set[str],
                       command_id: str) -> None:
        """Players about to move or leave give up the bank first."""
        for name, command in bank_retirements(self.tables(tournament_id), players, command_id):
            self.service.execute(Table.create_id(name), command)

    # --- seeds ----------------------------------------------------------------------

    def master(self, tournament_id: uuid.UUID) -> bytes:
        """The master seed, unsealed from the vault."""
        if tournament_id not in self._masters:
            sealed = self.tournament(tournament_id).master
            self._masters[tournament_id] = self.service.vault.unseal(sealed)
        return self._masters[tournament_id]

    def seating_seed(self, tournament_id: uuid.UUID) -> bytes:
        return seating_seed_from(self.master(tournament_id))

    def _shoe_seeds(self, fallback: Callable[[uuid.UUID, int], bytes]
                    ) -> Callable[[uuid.UUID, int], bytes]:
        """Shoe seeds: a tournament table's from its master seed, any other's from
        `fallback`."""

        def seed(table_id: uuid.UUID, taille: int) -> bytes:
            name = self.service.table(table_id).tournament
            if name is None:
                return fallback(table_id, taille)
            return seeds_from(self.master(Tournament.create_id(name)))(table_id, taille)

        seed.tournaments = True  # type: ignore[attr-defined]
        return seed


class Director:
    """Runs tournaments one step at a time, from what the store recorded."""

    def __init__(self, service: TableService, holder: str | None = None,
                 clock: Callable[[], float] = time.time,
                 lease_seconds: float = LEASE_SECONDS) -> None:
        self.tournaments = Tournaments(service)
        self.service = service
        self.holder = holder or f"director-{uuid.uuid4()}"
        self.clock = clock
        self.lease_seconds = lease_seconds
        self.leases = Leases(service.database)
        # each tournament's version up to which its table commands are known sent (absent:
        # taking over, or a tick failed: every table command may be missing)
        self._mirrored: dict[uuid.UUID, int] = {}

    def run(self, tournament_id: uuid.UUID, *, on_tick: Callable[[], object] = lambda: None,
            idle: float = 0.05) -> None:
        """Direct a tournament until it finishes (tests, demos); waits out clocks and pauses."""
        while (tick := self.tick(tournament_id)) is not Tick.FINISHED:
            on_tick()
            if tick is Tick.WAITING:
                time.sleep(idle)

    def tick(self, tournament_id: uuid.UUID) -> Tick:
        """One step; a director taking over (or retrying after a failure) first sends the
        table commands of every recorded event again, in case its predecessor died between a
        tournament command and them; otherwise those of what others recorded since its last
        tick (the organiser's start, interventions, late seats), so that it never steps ahead
        of a table command the organiser's process has not sent, or never will."""
        epoch = self._lease(tournament_id)
        if epoch is None:
            return Tick.WAITING
        state = self.service.kept(tournament_id, "tournament").state
        if state.epoch < epoch:
            self._do(tournament_id, tc.AppointDirector(
                epoch=epoch, actor=DIRECTOR, command_id=f"{tournament_id}/epoch/{epoch}"))
            self._mirrored.pop(tournament_id, None)
        try:
            sure = tournament_id in self._mirrored
            self._mirrored[tournament_id] = self.tournaments.resend(
                tournament_id, gt=self._mirrored.get(tournament_id, 0),
                skip=DIRECTOR if sure else None)
            return self._step(tournament_id, epoch)
        except Exception:
            self._mirrored.pop(tournament_id, None)
            raise

    def _step(self, tournament_id: uuid.UUID, epoch: int) -> Tick:
        try:
            return direct(StoreDesk(self, tournament_id, epoch), self.clock())
        except TournamentPaused:  # paused since the step read the tournament: it waits
            return Tick.WAITING

    def _lease(self, tournament_id: uuid.UUID) -> int | None:
        return self.leases.acquire(tournament_id, self.holder, time.time(), self.lease_seconds)

    def _do(self, tournament_id: uuid.UUID, command: tc.TournamentCommand) -> Recorded:
        return self.tournaments.execute(tournament_id, command)


class StoreDesk:
    """A director's `Desk` on the store for one tournament, under its lease's `epoch`: the
    automatic tables dealt by the house, the bots playing their seats
    (`infra.services.autoplay`) and the people theirs (waited for, on their clocks), the
    croupiers' tables waited for."""

    def __init__(self, director: Director, tournament_id: uuid.UUID, epoch: int) -> None:
        self.director, self.tournaments = director, director.tournaments
        self.service = director.service
        self.tournament_id, self.epoch = tournament_id, epoch

    def state(self) -> TournamentState:
        """The tournament as the tick read it (`Director.tick`), and as this process wrote it
        since: a command another process recorded in the meantime makes this process's next
        save of the tournament, or of a run at its table, fail, and decide again on the
        store's."""
        tournament: Tournament = self.service.kept(self.tournament_id, "tournament")
        return tournament.state

    def tables(self) -> dict[str, TableState]:
        return self.tournaments.tables_of(self.state())

    def table(self, name: str) -> TableState | None:
        table_id = Table.create_id(name)
        return self.service.state(table_id) if self.tournaments.opened(table_id) else None

    def open_table(self, name: str, command_id: str) -> None:
        state = self.state()
        self.service.open_table(name, state.settings.table_settings(), command_id=command_id,
                                tournament=state.name, actor=DIRECTOR)

    def execute(self, name: str, command: c.TableCommand) -> None:
        self.service.execute(Table.create_id(name), command)

    def do(self, command: tc.TournamentCommand) -> None:
        self.tournaments.execute(self.tournament_id, command)

    def deal(self, name: str, until: int) -> bool:
        if self.director._lease(self.tournament_id) != self.epoch:
            raise OutOfTurn("this director's lease has passed on", rule="stale-epoch")
        tournament = self.state()
        if not tournament.croupier_deals(name):
            return self.play(name, until)
        table_id = Table.create_id(name)
        with suppress(TournamentPaused, RoundOver):  # a bot's stake on the next round's coup
            self.bots_think(table_id, tournament)
        return dealt(self.service.state(table_id), until)

    def bots_think(self, table_id: uuid.UUID, tournament: TournamentState) -> None:
        """At a croupier's table, the house bot whose decision the table awaits makes it once
        it has thought `bot_think_seconds` (of play) since the table's last move."""
        since = self.service.last_move(table_id)
        if tournament.played(since, self.director.clock()) >= (
                tournament.settings.bot_think_seconds):
            play_bot_seat(self.service, table_id, self.master(), "bots",
                          tournament.room().people)

    def deal_house(self, name: str, until: int, tournament: TournamentState) -> bool:
        """Deal a table to coup `until`, the bots playing their seats; where the move is a
        person's, wait for them (False) until their clock has run out (the time of play since
        the table's last event: a pause stops it), then apply the default as the clock's (or,
        nobody else punting, leave the table out of the step)."""
        table_id = Table.create_id(name)
        while True:
            try:
                play_coups(self.service, table_id, self.master(), "bots", until,
                           people=tournament.room().people)
                return True
            except Awaited as awaited:
                seconds = tournament.settings.person_clock(awaited.command,
                                                           awaited.state.settings)
                since = self.service.last_move(table_id)
                if tournament.played(since, self.director.clock()) < seconds:
                    return False
                default = clock_default(awaited.state, table_id, awaited.command,
                                        awaited.person)
                if default is None:  # the table cannot play this coup without the person
                    return True
                if not self.service.execute(table_id, default).events:
                    return False  # nothing to default after all: look again next tick

    def play(self, name: str, until: int) -> bool:
        try:
            return self.deal_house(name, until, self.state())
        except TournamentPaused:  # paused mid-coup: the coup goes on at the resume
            return False

    def master(self) -> bytes:
        return self.tournaments.master(self.tournament_id)

    def seating_seed(self) -> bytes:
        return self.tournaments.seating_seed(self.tournament_id)

    def place_secret_bet(self, player: str, commitment: str, command_id: str) -> None:
        self.tournaments.place_secret_bet(self.tournament_id, player, commitment,
                                          actor=player, command_id=command_id)

    def reveal_secret_bet(self, player: str, spot: str, amount: int, nonce: str,
                          command_id: str) -> None:
        self.tournaments.reveal_secret_bet(self.tournament_id, player, spot, amount, nonce,
                                           actor=player, command_id=command_id)

    def round_ended(self) -> None:
        """A signed checkpoint of the store at each round's end (`infra.store.checkpoints`)."""
        try:
            write_checkpoint(self.service)
        except Exception as error:  # the round stands; the next write checkpoints anyway
            log.warning("no checkpoint at the round's end: %s", error)


def dealt(table: TableState, coup: int) -> bool:
    """The table has closed coup `coup` and is between coups, or cannot play on."""
    between = table.coup is None and table.phase is not Phase.TAILLE_OVER
    return (table.coup_number >= coup and between) or (between and not playable(table))
