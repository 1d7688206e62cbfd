"""The Tournament aggregate: registration, the seating draw, rounds, balancing, eliminations,
prizes, every step an event.

Each `@event` method records one past-tense event whose application is the matching step of
the pure `TournamentState`; a refused step raises before the event is kept, and replaying the
events through the same steps rebuilds the same tournament. `Tournament.execute` takes a
command (`domain.tournament.commands`) with what only the caller has (the chips on the tables;
the secret seed through a port), checks the actor and the director's epoch, computes the steps
from the state, checks them, then records them. Every event carries the actor and the command
id.

The Table aggregates hold the chips during play: `domain.tournament.table_orders` turns each
tournament event into the table commands that mirror it, so that each table's chips balance on
their own events (a move takes them off the old table and puts them on the new one).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import assert_never

import msgspec
from eventsourcing.domain import Aggregate, event

from domain.commands import require_known
from domain.errors import OutOfTurn, RuleViolation
from domain.game.coup import Outcome
from domain.game.shoe import commitment
from domain.limits import check_announcement
from domain.topics import keep_topics
from domain.tournament import balancing, records
from domain.tournament import commands as tc
from domain.tournament.entrants import Bust, Status
from domain.tournament.intervening import record_intervention
from domain.tournament.prizes import Placement
from domain.tournament.records import Announcement, Break, Intervention, Phase, SecretBet
from domain.tournament.rights import require_right
from domain.tournament.seating import SEATING_ALGORITHM
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import TournamentState

NAMESPACE = uuid.UUID("5ab07000-0000-4000-8000-70a2a0e00000")


class Tournament(Aggregate):
    name: str
    state: TournamentState
    master: str  # the commitment of the master seed the seating and shoe seeds derive from

    @staticmethod
    def create_id(name: str, **_: object) -> uuid.UUID:
        """A tournament's id follows from its name, so creating it twice is one tournament."""
        return uuid.uuid5(NAMESPACE, f"tournament/{name}")

    class Event(Aggregate.Event):
        actor: str
        command_id: str

    class TournamentCreated(Aggregate.Created):
        name: str
        settings: TournamentSettings
        actor: str
        command_id: str
        master: str = ""

    @event(TournamentCreated)
    def __init__(self, name: str, settings: TournamentSettings, actor: str,
                 command_id: str, master: str = "") -> None:
        self.name = name
        self.master = master
        self.state = TournamentState(name=name, settings=settings.check())

    # --- registration ---------------------------------------------------------------

    class PlayerRegistered(Event):
        player: str
        bot: bool = False

    @event(PlayerRegistered)
    def _registered(self, player: str, bot: bool, actor: str, command_id: str) -> None:
        self.state.register(player, bot)

    class PlayerUnregistered(Event):
        player: str

    @event(PlayerUnregistered)
    def _unregistered(self, player: str, actor: str, command_id: str) -> None:
        self.state.unregister(player)

    class PlayerReentered(Event):
        player: str
        entry: int

    @event(PlayerReentered)
    def _reentered(self, player: str, entry: int, actor: str, command_id: str) -> None:
        if self.state.entrant(player).entries + 1 != entry:
            raise RuleViolation(f"{player}'s next entry is not {entry}", rule="entry-mismatch")
        self.state.reenter(player)

    # --- seats ----------------------------------------------------------------------

    class SeatingDrawn(Event):
        commitment: str
        algorithm: str
        entrants: list[str]
        tables: int

    @event(SeatingDrawn)
    def _drawn(self, commitment: str, algorithm: str, entrants: list[str], tables: int,
               actor: str, command_id: str) -> None:
        self.state.draw(commitment, algorithm, entrants, tables)

    class PlayerSeatedAt(Event):
        player: str
        table: str
        seat: int
        chips: int

    @event(PlayerSeatedAt)
    def _seated(self, player: str, table: str, seat: int, chips: int, actor: str,
                command_id: str) -> None:
        self.state.seat_at(player, table, seat, chips)

    class TableBroken(Event):
        table: str
        players: list[str]  # in seat order
        order: list[str]  # the seeded stream's order of reseating

    @event(TableBroken)
    def _broken(self, table: str, players: list[str], order: list[str], actor: str,
                command_id: str) -> None:
        self.state.break_table(table, players, order)

    class PlayerMoved(Event):
        player: str
        from_table: str
        to_table: str
        seat: int
        chips: int

    @event(PlayerMoved)
    def _moved(self, player: str, from_table: str, to_table: str, seat: int, chips: int,
               actor: str, command_id: str) -> None:
        self.state.move(player, from_table, to_table, seat, chips)

    # --- rounds and eliminations ----------------------------------------------------

    class DirectorAppointed(Event):
        """A director took the tournament's lease; older epochs' commands are refused."""

        epoch: int

    @event(DirectorAppointed)
    def _appointed(self, epoch: int, actor: str, command_id: str) -> None:
        self.state.appoint(epoch)

    class StageStarted(Event):
        stage: int
        name: str
        reset: dict[str, int]  # chips each player gains (or loses) to the starting stack
        tables: dict[str, str]  # where each of them sits

    @event(StageStarted)
    def _stage_started(self, stage: int, name: str, reset: dict[str, int],
                       tables: dict[str, str], actor: str, command_id: str) -> None:
        if stage != self.state.stage:
            raise RuleViolation(f"the next stage is not {stage}", rule="stage-mismatch")
        self.state.reset_chips(reset)

    class RoundStarted(Event):
        round: int
        coups: int | None
        minutes: int | None
        at: float = 0.0  # the director's clock, seconds since the epoch
        min_stake: int = 0
        max_stake: int = 0
        tables: list[str] | None = None  # the open tables, whose limits follow the round's
        bet_seconds: int = 0  # the round's bet clock, which the tables follow too

    @event(RoundStarted)
    def _round_started(self, round: int, coups: int | None, minutes: int | None, at: float,
                       min_stake: int, max_stake: int, tables: list[str] | None,
                       bet_seconds: int, actor: str, command_id: str) -> None:
        if self.state.round + 1 != round:
            raise RuleViolation(f"the next round is not {round}", rule="round-mismatch")
        self.state.start_round(at)

    class BreakStarted(Event):
        round: int  # the round it follows
        at: float  # the director's clock, seconds since the epoch
        seconds: float

    @event(BreakStarted)
    def _break_started(self, round: int, at: float, seconds: float, actor: str,
                       command_id: str) -> None:
        self.state.start_break(round, at, seconds)

    class StepStarted(Event):
        """Every table plays one coup: each table's coups closed, each player's chips, now."""

        round: int
        step: int
        coups: dict[str, int]
        chips: dict[str, int]

    @event(StepStarted)
    def _step_started(self, round: int, step: int, coups: dict[str, int],
                      chips: dict[str, int], actor: str, command_id: str) -> None:
        self.state.start_step(step, coups, chips)

    class StepEnded(Event):
        round: int
        step: int

    @event(StepEnded)
    def _step_ended(self, round: int, step: int, actor: str, command_id: str) -> None:
        self.state.end_step(step)

    class TournamentPaused(Event):
        at: float

    @event(TournamentPaused)
    def _paused(self, at: float, actor: str, command_id: str) -> None:
        self.state.pause(at)

    class TournamentResumed(Event):
        at: float

    @event(TournamentResumed)
    def _resumed(self, at: float, actor: str, command_id: str) -> None:
        self.state.resume(at)

    class RoundEnded(Event):
        round: int
        chips: dict[str, int]  # every player in play, at the end of the round
        coups_bet: dict[str, int] | None = None  # `min_bets` set: each one's bets so far

    @event(RoundEnded)
    def _round_ended(self, round: int, chips: dict[str, int], actor: str, command_id: str,
                     coups_bet: dict[str, int] | None = None) -> None:
        self.state.end_round(round, chips, coups_bet)

    class PlayOffPlayed(Event):
        """The extra coup for a tie on the line of a cut: each tied player's chips after it,
        who of them made no bet in it, and what that settled (None: recorded before)."""

        round: int
        table: str
        chips: dict[str, int]
        idle: list[str] | None = None
        decided_by: records.PlayOffDecision | None = None

    @event(PlayOffPlayed)
    def _playoff_played(self, round: int, table: str, chips: dict[str, int], actor: str,
                        command_id: str, idle: list[str] | None = None,
                        decided_by: records.PlayOffDecision | None = None) -> None:
        self.state.settle_playoff(chips, idle or [], decided_by)

    class SecretBetPlaced(Event):
        """Only the commitment: the spot and amount stay the player's until the deal."""

        player: str
        table: str
        coup: int
        commitment: str

    @event(SecretBetPlaced)
    def _secret_bet_placed(self, player: str, table: str, coup: int, commitment: str,
                           actor: str, command_id: str) -> None:
        self.state.place_secret_bet(SecretBet(player=player, table=table, coup=coup,
                                              round=self.state.round, commitment=commitment))

    class SecretBetRevealed(Event):
        player: str
        table: str
        coup: int
        spot: str
        amount: int
        nonce: str
        outcome: str
        delta: int  # chips won (negative: lost)

    @event(SecretBetRevealed)
    def _secret_bet_revealed(self, player: str, table: str, coup: int, spot: str, amount: int,
                             nonce: str, outcome: str, delta: int, actor: str,
                             command_id: str) -> None:
        self.state.settle_secret_bet(player, spot, amount, nonce, delta)

    class SecretBetForfeited(Event):
        player: str
        table: str
        amount: int

    @event(SecretBetForfeited)
    def _secret_bet_forfeited(self, player: str, table: str, amount: int, actor: str,
                              command_id: str) -> None:
        self.state.forfeit(player, amount)

    class InterventionMade(Event):
        """An organiser's correction, with its reason and the chips before and after."""

        kind: str
        player: str
        reason: str
        chips_before: int
        chips_after: int
        table: str | None = None

    @event(InterventionMade)
    def _intervened(self, kind: str, player: str, reason: str, chips_before: int,
                    chips_after: int, table: str | None, actor: str, command_id: str) -> None:
        self.state.intervene(Intervention(kind=kind, player=player, reason=reason, actor=actor,
                                          chips_before=chips_before, chips_after=chips_after,
                                          table=table))

    class PlayersBusted(Event):
        """One coup's bust-outs at one table, with each player's chips at the coup's start."""

        table: str
        coup: int
        busted: list[Bust]

    @event(PlayersBusted)
    def _busted(self, table: str, coup: int, busted: list[Bust], actor: str,
                command_id: str) -> None:
        self.state.bust(table, coup, busted)

    class PlayerEliminated(Event):
        """A finishing position: `tied` players share positions position .. position + tied - 1.
        `coup` is None for a player cut at the end of `round`."""

        player: str
        position: int
        tied: int
        table: str
        coup: int | None
        round: int

    @event(PlayerEliminated)
    def _eliminated(self, player: str, position: int, tied: int, table: str, coup: int | None,
                    round: int, actor: str, command_id: str) -> None:
        self.state.place(Placement(player=player, position=position, tied=tied, table=table,
                                   coup=coup, round=round))

    # --- the end --------------------------------------------------------------------

    class PrizeAwarded(Event):
        player: str
        position: int
        amount: int

    @event(PrizeAwarded)
    def _awarded(self, player: str, position: int, amount: int, actor: str,
                 command_id: str) -> None:
        self.state.award(player, amount)

    class TournamentFinished(Event):
        winners: list[str]
        seed: str  # the seating seed, revealed: the draw and every break can be recomputed

    @event(TournamentFinished)
    def _finished(self, winners: list[str], seed: str, actor: str, command_id: str) -> None:
        self.state.finish(bytes.fromhex(seed), winners)

    class TournamentCancelled(Event):
        """Called off before its start: out of the lobby, never out of the record."""

    @event(TournamentCancelled)
    def _cancelled(self, actor: str, command_id: str) -> None:
        self.state.cancel()

    class TournamentArchived(Event):
        """Filed away after its finish: out of the lobby, never out of the record."""

    @event(TournamentArchived)
    def _archived(self, actor: str, command_id: str) -> None:
        self.state.archive()

    class AnnouncementMade(Event):  # the organiser told the room: the big screen's ticker
        text: str
        at: float

    @event(AnnouncementMade)
    def _announced(self, text: str, at: float, actor: str, command_id: str) -> None:
        self.state.announce(Announcement(text=text, at=at, actor=actor))

    # --- commands: what the organiser, the players and the director ask ------------

    def execute(self, command: tc.TournamentCommand, seed: Callable[[], bytes]) -> None:
        """Check `command` (its actor's right, a director's epoch, the rules) and record what
        it does. `seed`: the seating seed, asked for only by the steps that need it (the
        draw, balancing, breaking a table, the finish)."""
        require_known(command, tc.TOURNAMENT_COMMANDS, "a tournament")
        state = self.state
        actor = command.actor
        who = {"actor": actor, "command_id": command.command_id}
        require_right(actor, command, state)
        match command:
            case tc.RegisterPlayer(player=p, bot=bot):
                self._register(p, bot, **who)
            case tc.UnregisterPlayer(player=p):
                self._unregistered(player=p, **who)
            case tc.ReenterPlayer(player=p):
                self._reenter(p, **who)
            case tc.DrawSeating():
                self._draw_seating(seed(), **who)
            case tc.AppointDirector(epoch=epoch):
                self._appointed(epoch=epoch, **who)
            case tc.PauseTournament(at=at):
                self._paused(at=at, **who)
            case tc.ResumeTournament(at=at):
                self._resumed(at=at, **who)
            case tc.StartRound(at=at, epoch=epoch):
                self._start_round(at, **who)
            case tc.StartBreak(at=at, epoch=epoch):
                due = state.break_due()
                self._break_started(round=state.round, at=at,
                                    seconds=due.minutes * 60 if due else 0.0, **who)
            case tc.StartStep(coups=coups, chips=chips, epoch=epoch):
                self._step_started(round=state.round, step=state.steps + 1, coups=dict(coups),
                                   chips=dict(chips), **who)
            case tc.EndStep(epoch=epoch):
                state.require_running("end a step")  # checked here: records before it replay
                if state.step is None:
                    raise RuleViolation("no step is under way", rule="step-mismatch")
                self._step_ended(round=state.round, step=state.step.number, **who)
            case tc.EndRound(chips=chips, coups_bet=coups_bet, epoch=epoch):
                state.require_running("end a round")
                self._end_round(chips, coups_bet, **who)
            case tc.SettlePlayOff(table=table, chips=chips, idle=idle, epoch=epoch):
                self._playoff_played(round=state.round, table=table, chips=dict(chips), idle=idle,
                                     decided_by=state.playoff_decision(chips, idle), **who)
                self._place_due(**who)
            case tc.RecordBustOuts(table=table, coup=coup, busted=busted, epoch=epoch):
                self._busted(table=table, coup=coup, busted=list(busted), **who)
                self._place_due(**who)
            case tc.BalanceTables(chips=chips, epoch=epoch, breaking=breaking):
                self._balance(seed(), chips, breaking, **who)
            case tc.PlaceSecretBet(player=p, table=table, coup=coup, commitment=committed):
                self._secret_bet_placed(player=p, table=table, coup=coup, commitment=committed,
                                        **who)
            case tc.RevealSecretBet(player=p, spot=spot, amount=amount, nonce=nonce,
                                    outcome=outcome, banker_point=point):
                self._reveal_secret_bet(p, spot, amount, nonce, outcome,
                                        None if point is msgspec.UNSET else point, **who)
            case tc.Intervene():
                record_intervention(self, command, seed, **who)
            case tc.FinishTournament(epoch=epoch):
                self._finish(seed(), **who)
            case tc.PublishResults(at=at, open_disputes=open_disputes):
                self._publish_results(open_disputes, at, **who)
            case tc.CancelTournament():
                self._cancelled(**who)
            case tc.ArchiveTournament():
                self._archived(**who)
            case tc.MakeAnnouncement(text=text, at=at):
                self._announced(text=check_announcement(text), at=at, **who)
            case _:
                assert_never(command)

    def _register(self, player: str, bot: bool, actor: str, command_id: str) -> str:
        """Register a player (their name trimmed: the name recorded); after the draw (late
        registration) seat them at once. A player who busted registers again to re-enter,
        while the format allows it."""
        player = self.state.new_name(player)
        entrant = self.state.entrants.get(player)
        if entrant is not None and entrant.status is Status.OUT:
            self._reenter(player, actor, command_id)
            return player
        self._registered(player=player, bot=bot, actor=actor, command_id=command_id)
        if self.state.seating is not None:
            self._seat_late(player, actor, command_id)
        return player

    def _reenter(self, player: str, actor: str, command_id: str) -> None:
        entry = self.state.entrant(player).entries + 1
        self._reentered(player=player, entry=entry, actor=actor, command_id=command_id)
        self._seat_late(player, actor, command_id)

    def _draw_seating(self, seed: bytes, actor: str, command_id: str) -> None:
        seats = self.state.drawn_seating(seed)
        entrants = list(self.state.entrants)
        self._drawn(commitment=commitment(seed), algorithm=SEATING_ALGORITHM, entrants=entrants,
                    tables=self.state.tables_for(len(entrants)), actor=actor,
                    command_id=command_id)
        chips = self.state.settings.starting_chips
        for seat in seats:
            self._seated(player=seat.player, table=seat.table, seat=seat.seat, chips=chips,
                         actor=actor, command_id=command_id)

    def _start_round(self, at: float, actor: str, command_id: str) -> None:
        state = self.state
        state.ready_for_round()
        stage = state.current
        if state.stage_round == 0:
            reset = state.stage_reset()
            self._stage_started(stage=state.stage, name=stage.name, reset=reset,
                                tables={p: state.entrant(p).table or "" for p in reset},
                                actor=actor, command_id=command_id)
        limits = stage.limits_for(state.stage_round + 1)
        self._round_started(round=state.round + 1, coups=stage.coups, minutes=stage.minutes,
                            at=at, min_stake=limits.min_stake, max_stake=limits.max_stake,
                            tables=list(state.tables), bet_seconds=stage.bet_seconds or 0,
                            actor=actor, command_id=command_id)

    def _reveal_secret_bet(self, player: str, spot: str, amount: int, nonce: str,
                           outcome: Outcome, banker_point: int | None, actor: str,
                           command_id: str) -> None:
        """A secret bet is paid at the table's odds."""
        bet = self.state.secret_bet_of(player)
        delta = self.state.secret_bet_pays(player, spot, amount, outcome, banker_point)
        self._secret_bet_revealed(player=player, table=bet.table, coup=bet.coup, spot=spot,
                                  amount=amount, nonce=nonce, outcome=outcome.value,
                                  delta=delta, actor=actor, command_id=command_id)

    def _end_round(self, chips: Mapping[str, int], coups_bet: dict[str, int] | None,
                   actor: str, command_id: str) -> None:
        left = dict(chips)
        for player, amount in self.state.forfeits(chips).items():
            self._secret_bet_forfeited(player=player, amount=amount,
                                       table=self.state.entrant(player).table or "",
                                       actor=actor, command_id=command_id)
            left[player] -= amount
        self._round_ended(round=self.state.round, chips=left, coups_bet=coups_bet, actor=actor,
                          command_id=command_id)
        self._place_due(actor, command_id)

    def _balance(self, seed: bytes, chips: Mapping[str, int], breaking: str | None,
                 actor: str, command_id: str) -> None:
        """Call after every seat, bust-out and round end."""
        plan = self.state.balancing_plan(seed, breaking)
        balancing.require_chips(plan, chips)
        for step in plan:
            if isinstance(step, Break):
                self._broken(table=step.table, players=list(step.players),
                             order=list(step.order), actor=actor, command_id=command_id)
            else:
                self._moved(player=step.player, from_table=step.from_table,
                            to_table=step.to_table, seat=step.seat, chips=chips[step.player],
                            actor=actor, command_id=command_id)

    def _finish(self, seed: bytes, actor: str, command_id: str) -> None:
        """Award the prizes, then finish, revealing the seed."""
        self.state.require_decided()
        self.state.verify(seed)
        prizes = self.state.prizes()
        standings = self.state.standings()
        for player, position, _ in standings:
            if prizes[player]:
                self._awarded(player=player, position=position, amount=prizes[player],
                              actor=actor, command_id=command_id)
        self._finished(winners=[p for p, position, _ in standings if position == 1],
                       seed=seed.hex(), actor=actor, command_id=command_id)

    def _seat_late(self, player: str, actor: str, command_id: str) -> None:
        seat = self.state.late_seat(player)
        self._seated(player=player, table=seat.table, seat=seat.seat,
                     chips=self.state.settings.starting_chips, actor=actor,
                     command_id=command_id)

    def _place_due(self, actor: str, command_id: str) -> None:
        for placement in self.state.placements_due():
            self._eliminated(player=placement.player, position=placement.position,
                             tied=placement.tied, table=placement.table, coup=placement.coup,
                             round=placement.round, actor=actor, command_id=command_id)

    # --- publishing the results -----------------------------------------------------
    # Until the organiser publishes them the results are provisional: a dispute of a coup
    # may still correct the chips. Publishing is refused while one is open.

    published_by: str | None = None
    published_at: float | None = None  # seconds since the epoch

    class ResultsPublished(Event):
        """The organiser declared the finished tournament's results final."""

        at: float

    @event(ResultsPublished)
    def _published(self, at: float, actor: str, command_id: str) -> None:
        self.published_by = actor
        self.published_at = at

    def _publish_results(self, open_disputes: Sequence[str], at: float, actor: str,
                         command_id: str) -> None:
        """Once finished, once, and only when no dispute of its tables is open."""
        if self.state.phase is not Phase.FINISHED:
            raise OutOfTurn("the results are published once the tournament is finished",
                            rule="not-finished")
        if self.published_at is not None:
            raise OutOfTurn(f"the results were published by {self.published_by}",
                            rule="results-published")
        if open_disputes:
            raise OutOfTurn("disputes are still open: " + ", ".join(open_disputes),
                            rule="disputes-open")
        self._published(at=at, actor=actor, command_id=command_id)


keep_topics(Tournament, "domain.tournament_aggregate")
