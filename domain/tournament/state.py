"""A baccara tournament from registration to prizes: the pure state machine.

The steps, in order: players register (and may unregister) until the seating draw; the draw
orders the entrants with a keyed stream from a secret seed whose commitment it records, and
deals them round the tables; rounds of play start and end; the tables report each coup's
bust-outs; after every change the tables are balanced (moves, or a table broken and its
players reseated at random from the same seeded stream); eliminations get finishing positions
from the bottom; when one player is left the prizes are awarded and the seed is revealed, so
that anyone can recompute the draw and every reseating.

Late registration and re-entry stay open through the end of round `late_rounds`. A player who
busts meanwhile is out but not yet placed (a late entrant could still finish below them); the
positions of those bust-outs are given, oldest first, when registration closes.

Every method validates before it changes anything, so a refused step leaves the tournament as
it was; the Tournament aggregate records each step as an event and replays it through these
methods. Chips during play live on the Table aggregates: the tournament records them when a
player is seated, moved, busted or reaches the end of a round.

This module keeps the steps the state takes itself (`TournamentState`): registration, the
director's lease, secret bets and the organiser's interventions, over the fields of
`domain.tournament.base` and the format of `domain.tournament.settings`; the other steps live by
concept and the state asks them: its seats (domain/tournament/seating.py), balancing
(domain/tournament/balancing.py), stages and rounds (domain/tournament/stages.py), eliminations
and prizes (domain/tournament/prizes.py), the players' records (domain/tournament/entrants.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import msgspec

from domain.errors import NotFound, OutOfTurn, RuleViolation
from domain.game.coup import Outcome
from domain.game.payouts import Bet, Spot, house_bets
from domain.limits import check_announcement, taken_by, trimmed_name
from domain.tournament import balancing, prizes, seating, stages
from domain.tournament.balancing import Move
from domain.tournament.base import TournamentBase
from domain.tournament.entrants import Bust, Entrant, Exit, Status
from domain.tournament.formats import RoundBreak
from domain.tournament.prizes import Placement, Result
from domain.tournament.records import (
    Announcement,
    Break,
    Intervention,
    Phase,
    PlayOffDecision,
    Seating,
    SecretBet,
)

DISQUALIFIED = 0  # the "coup" of an exit the organiser decided


INTERVENTIONS = ("move", "break-table", "disqualify", "correct-chips", "add-late-player",
                 "penalise")


SECRET_BET_V1 = "sabot-secret-bet-v1"


def secret_commitment(spot: str, amount: int, nonce: str) -> str:
    """The commitment a secret bet is placed with: SHA-256 (hex) of
    `sabot-secret-bet-v1/<spot>/<amount>/<nonce>`; the nonce (16 random bytes or more, in
    hex) keeps anyone from trying every spot and amount."""
    return hashlib.sha256(f"{SECRET_BET_V1}/{spot}/{amount}/{nonce}".encode()).hexdigest()


class TournamentState(TournamentBase, kw_only=True):
    """A tournament's state and every step it takes (each validated before it changes
    anything)."""

    # --- registration ---------------------------------------------------------------

    def new_name(self, player: str) -> str:
        """A name given at registration, trimmed: 1 to 100 printable characters, and no
        other entrant's but for case or width (`Chloe` or `ｃhloe` beside `chloe` is refused;
        `chloe` again is chloe, a re-entry)."""
        name = trimmed_name(player, "player's name")
        taken = taken_by(name, self.entrants)
        if taken is not None:
            raise RuleViolation(f"{name!r} is taken: {taken} is registered",
                                rule="name-taken")
        return name

    def register(self, player: str, bot: bool = False) -> None:
        if not player or player.startswith("@"):
            raise RuleViolation("a player id is not empty and does not start with @",
                                rule="player-id")
        if player in self.entrants:
            raise RuleViolation(f"{player} is already registered", rule="already-registered")
        self._require_registration_open("register")
        self.entrants[player] = Entrant(player=player, bot=bot)

    def unregister(self, player: str) -> None:
        self.entrant(player)
        self.require(Phase.REGISTRATION, doing="unregister")
        del self.entrants[player]

    def reenter(self, player: str) -> None:
        """A busted player buys in again while late registration is open."""
        entrant = self.entrant(player)
        self._require_registration_open("re-enter")
        if entrant.status is not Status.OUT:
            raise RuleViolation(f"{player} has not busted", rule="not-busted")
        if entrant.entries > self.settings.reentries:
            raise RuleViolation(f"{player} has used the {self.settings.reentries} re-entries "
                                "allowed", rule="no-reentry")
        for exit_ in self.exits:
            exit_.players = [b for b in exit_.players if b.player != player]
        self.exits = [exit_ for exit_ in self.exits if exit_.players]
        self.short = [p for p in self.short if p != player]  # a new entry starts afresh
        entrant.entries += 1
        entrant.status = Status.REGISTERED
        entrant.seat = None

    def cancel(self) -> None:
        """Call the tournament off before its start (the seating draw)."""
        self.require(Phase.REGISTRATION, doing="cancel")
        self.cancelled = True

    def archive(self) -> None:
        """File the finished tournament away, once."""
        self.require(Phase.FINISHED, doing="archive")
        if self.archived:
            raise OutOfTurn(f"{self.name} is archived already", rule="archived")
        self.archived = True

    def _require_registration_open(self, doing: str) -> None:
        if self.cancelled:
            self.require(Phase.REGISTRATION, doing=doing)  # refused: cancelled
        if not self.registration_open or self.phase is Phase.FINISHED:
            raise OutOfTurn(f"cannot {doing}: registration has closed",
                            rule="registration-closed")


    def appoint(self, epoch: int) -> None:
        """A director takes the tournament's lease with a newer fencing epoch."""
        if epoch <= self.epoch:
            raise OutOfTurn(f"epoch {epoch} is not newer than {self.epoch}", rule="stale-epoch")
        self.epoch = epoch

    def check_epoch(self, epoch: int | None) -> None:
        """Refuse a director's command from an epoch older than the lease's (None: not a
        director's command)."""
        if epoch is not None and epoch < self.epoch:
            raise OutOfTurn(f"epoch {epoch} is older than the director's ({self.epoch})",
                            rule="stale-epoch")


    # --- secret bets -----------------------------------------------------------------

    def place_secret_bet(self, bet: SecretBet) -> None:
        """One secret bet a player per round, where the stage allows it, on a coup of their
        table not yet dealt."""
        self.require(Phase.RUNNING, doing="place a secret bet")
        if not self.current.secret_bet:
            raise RuleViolation(f"the {self.current.name} stage has no secret bet",
                                rule="secret-bet-not-allowed")
        entrant = self.entrant(bet.player)
        if entrant.status is not Status.SEATED or entrant.table != bet.table:
            raise RuleViolation(f"{bet.player} is not playing at {bet.table}",
                                rule="secret-bet-player")
        if any(b.player == bet.player and b.round == self.round for b in self.secret_bets):
            raise RuleViolation(f"{bet.player} has used this round's secret bet",
                                rule="secret-bet-used")
        if len(bet.commitment) != 64 or bet.commitment.strip("0123456789abcdef"):
            raise RuleViolation("a commitment is a SHA-256 in lowercase hex",
                                rule="secret-bet-commitment")
        self.secret_bets.append(msgspec.structs.replace(bet, round=self.round))

    def secret_bet_of(self, player: str) -> SecretBet:
        """The player's secret bet of this round that is waiting for its reveal."""
        for bet in self.secret_bets:
            if bet.player == player and bet.round == self.round and not bet.settled:
                return bet
        raise NotFound(f"{player} has no secret bet waiting", rule="no-secret-bet")

    def secret_bet_pays(self, player: str, spot: str, amount: int, outcome: Outcome,
                        banker_point: int | None) -> int:
        """What a secret bet of `amount` on `spot` wins or loses at the table's odds."""
        try:
            placed = Bet(player=player, spot=Spot(spot), amount=amount)
        except ValueError:
            raise RuleViolation(f"no spot {spot!r}", rule="secret-bet-spot") from None
        return house_bets(self.settings.table_settings(), outcome, [placed],
                          banker_point=banker_point).net_of(player)

    def settle_secret_bet(self, player: str, spot: str, amount: int, nonce: str,
                          delta: int) -> None:
        """The reveal: it must open the commitment, within the round's limits and the chips
        the player had; `delta` is what the bet won or lost at the coup's outcome."""
        bet = self.secret_bet_of(player)
        if secret_commitment(spot, amount, nonce) != bet.commitment:
            raise RuleViolation("the bet revealed is not the one committed to",
                                rule="secret-bet-mismatch")
        limits = self.limits
        if not limits.min_stake <= amount <= limits.max_stake:
            raise RuleViolation(f"a bet is {limits.min_stake} to {limits.max_stake}",
                                rule="secret-bet-amount")
        entrant = self.entrants[player]
        bet.settled = True
        entrant.chips += delta
        self.chips_added += delta

    def forfeits(self, chips: Mapping[str, int]) -> dict[str, int]:
        """At the round's end, each secret bet never revealed costs the round's maximum bet
        (leaving the player one chip at least)."""
        return {b.player: min(self.limits.max_stake, chips[b.player] - 1)
                for b in self.secret_bets if b.round == self.round and not b.settled
                and b.player in chips and chips[b.player] > 1}

    def forfeit(self, player: str, amount: int) -> None:
        bet = self.secret_bet_of(player)
        bet.settled = True
        self.entrants[player].chips -= amount
        self.chips_added -= amount

    # --- the organiser's interventions and announcements ----------------------------

    def announce(self, announcement: Announcement) -> None:
        """Tell the room something, at any time but after the finish or a cancellation."""
        check_announcement(announcement.text)
        self.require(Phase.REGISTRATION, Phase.SEATED, Phase.RUNNING, Phase.BETWEEN_ROUNDS,
                     doing="make an announcement")
        self.announcements.append(announcement)

    def intervene(self, intervention: Intervention) -> None:
        """Record a correction; chip corrections and penalties change the player's chips,
        a disqualification puts them out (last of the players out with them)."""
        if not intervention.reason.strip():
            raise RuleViolation("an intervention gives its reason", rule="reason-required")
        self.require(Phase.SEATED, Phase.RUNNING, Phase.BETWEEN_ROUNDS, doing="intervene")
        if intervention.kind not in INTERVENTIONS:
            raise RuleViolation(f"no intervention {intervention.kind!r} (known: "
                                f"{', '.join(INTERVENTIONS)})", rule="intervention-kind")
        if intervention.kind == "break-table":
            self.interventions.append(intervention)
            return
        entrant = self.entrant(intervention.player)
        if entrant.status is not Status.SEATED:
            raise RuleViolation(f"{entrant.player} is not playing", rule="intervention-player")
        delta = intervention.chips_after - intervention.chips_before
        if intervention.kind == "penalise" and delta >= 0:
            raise RuleViolation("a penalty takes chips", rule="penalty-chips")
        if intervention.kind in ("correct-chips", "penalise"):
            if intervention.chips_after < 1:
                raise RuleViolation("a correction leaves the player chips; disqualify instead",
                                    rule="correction-chips")
            entrant.chips = intervention.chips_after
            self.chips_added += delta
        if intervention.kind == "disqualify":
            self.exits.append(Exit(round=self.round, table=entrant.table, coup=DISQUALIFIED,
                                   players=[Bust(player=entrant.player, chips=0)]))
            entrant.status, entrant.seat, entrant.chips = Status.OUT, None, 0
            if self.registration_open and len(self.in_play()) <= 1:
                self.close_registration()
        self.interventions.append(intervention)

    # --- seats (domain/tournament/seating.py) ----------------------------------------------------

    def drawn_seating(self, seed: bytes) -> list[Seating]:
        return seating.drawn_seating(self, seed)

    def tables_for(self, players: int) -> int:
        return seating.tables_for(self, players)

    def draw(self, commitment: str, algorithm: str, entrants: Sequence[str], tables: int) -> None:
        seating.draw(self, commitment, algorithm, entrants, tables)

    def late_seat(self, player: str) -> Seating:
        return seating.late_seat(self, player)

    def seat_at(self, player: str, table: str, seat: int, chips: int) -> None:
        seating.seat_at(self, player, table, seat, chips)

    def free_seats(self, table: str) -> list[int]:
        return seating.free_seats(self, table)

    def check_seed(self, seed: bytes) -> None:
        seating.check_seed(self, seed)

    def verify(self, seed: bytes) -> None:
        seating.verify(self, seed)

    # --- stages and rounds (domain/tournament/stages.py) -----------------------------------------

    def coups_left(self) -> int | None:
        return stages.coups_left(self)

    def seconds_left(self, now: float) -> float | None:
        return stages.seconds_left(self, now)

    def round_over(self, now: float) -> bool:
        return stages.round_over(self, now)

    def next_cut(self) -> int | None:
        return stages.next_cut(self)

    def break_due(self) -> RoundBreak | None:
        return stages.break_due(self)

    def start_break(self, round_: int, at: float, seconds: float) -> None:
        stages.start_break(self, round_, at, seconds)

    def break_left(self, now: float) -> float | None:
        return stages.break_left(self, now)

    def ready_for_round(self) -> None:
        stages.ready_for_round(self)

    def start_round(self, at: float) -> None:
        stages.start_round(self, at)

    def stage_reset(self) -> dict[str, int]:
        return stages.stage_reset(self)

    def reset_chips(self, deltas: Mapping[str, int]) -> None:
        stages.reset_chips(self, deltas)

    def start_step(self, number: int, coups: Mapping[str, int], chips: Mapping[str, int]) -> None:
        stages.start_step(self, number, coups, chips)

    def end_step(self, number: int) -> None:
        stages.end_step(self, number)

    def pause(self, at: float) -> None:
        stages.pause(self, at)

    def require_running(self, doing: str) -> None:
        stages.require_running(self, doing)

    def resume(self, at: float) -> None:
        stages.resume(self, at)

    def end_round(self, round_: int, chips: Mapping[str, int],
                  coups_bet: Mapping[str, int] | None) -> None:
        stages.end_round(self, round_, chips, coups_bet)

    def playoff_decision(self, chips: Mapping[str, int], idle: Sequence[str]) -> PlayOffDecision:
        return stages.playoff_decision(self, chips, idle)

    def settle_playoff(self, chips: Mapping[str, int], idle: Sequence[str],
                       decision: PlayOffDecision | None) -> None:
        stages.settle_playoff(self, chips, idle, decision)

    # --- balancing (domain/tournament/balancing.py) ----------------------------------------------

    def balancing_plan(self, seed: bytes, breaking: str | None = None) -> list[Break | Move]:
        return balancing.balancing_plan(self, seed, breaking)

    def break_table(self, table: str, players: Sequence[str], order: Sequence[str]) -> None:
        balancing.break_table(self, table, players, order)

    def move(self, player: str, from_table: str, to_table: str, seat: int, chips: int) -> None:
        balancing.move(self, player, from_table, to_table, seat, chips)

    # --- eliminations and prizes (domain/tournament/prizes.py) -----------------------------------

    def bust(self, table: str, coup: int, busted: Sequence[Bust]) -> None:
        prizes.bust_out(self, table, coup, busted)

    def placements_due(self) -> list[Placement]:
        return prizes.placements_due(self)

    def place(self, placement: Placement) -> None:
        prizes.place(self, placement)

    def standings(self) -> list[tuple[str, int, int]]:
        return prizes.standings(self)

    def prizes(self) -> dict[str, int]:
        return prizes.prizes(self)

    def require_decided(self) -> None:
        prizes.require_decided(self)

    def award(self, player: str, amount: int) -> None:
        prizes.award(self, player, amount)

    def finish(self, seed: bytes, winners: Sequence[str]) -> None:
        prizes.finish(self, seed, winners)

    def results(self) -> list[Result]:
        return prizes.results(self)
