"""The tournament director: runs a Tournament aggregate's process over its tables.

Every tournament command is applied once (`TableService.apply_once`), then the table
commands that mirror its events (`Tournament.table_orders`: seat, move, leave) are sent to
the tables under command ids that follow from those events, so re-sending them is harmless.
A banker who must move or leave first retires the bank (before the chips to move are read,
so the bank moves with its owner).

A round is played in steps: at each step every table that can play plays one coup (through
`play`, which the caller provides: celery workers in `sabot demo`, in-process in tests);
then the players who can no longer stake are recorded busted, with their chips at the start
of that coup, and the tables are balanced. After the round's coups the round ends (the cut,
if any), the tables are balanced again, and once one player is left the tournament finishes:
prizes are awarded and the seating seed revealed.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from contextlib import suppress

from domain import commands as c
from domain.bots import playable
from domain.shoe import commitment
from domain.table import Phase, TableState
from domain.table_aggregate import Table
from domain.tournament import Bust, Move, TournamentSettings, TournamentState
from domain.tournament_aggregate import TableOrder, Tournament
from infra.errors import SeedAlreadySealed
from infra.service import Recorded, TableService

ORGANISER = "@organiser"

# Play every (table id, coup to reach) given, returning once each table has got there.
PlayTables = Callable[[Sequence[tuple[uuid.UUID, int]]], None]


class TournamentDirector:
    def __init__(self, service: TableService) -> None:
        self.service = service

    # --- reading ------------------------------------------------------------------

    def tournament(self, tournament_id: uuid.UUID) -> Tournament:
        tournament: Tournament = self.service.load(tournament_id, "tournament")
        return tournament

    def state(self, tournament_id: uuid.UUID) -> TournamentState:
        return self.tournament(tournament_id).state

    def table_ids(self, tournament_id: uuid.UUID) -> dict[str, uuid.UUID]:
        """The tournament's open tables, by name."""
        return {name: Table.create_id(name) for name in self.state(tournament_id).tables}

    def tables(self, tournament_id: uuid.UUID) -> dict[str, TableState]:
        return {name: self.service.state(table_id)
                for name, table_id in self.table_ids(tournament_id).items()}

    def chips(self, tournament_id: uuid.UUID) -> dict[str, int]:
        """Each player in play's chips at their table, their bank included."""
        return {player: table.holding(player)
                for table in self.tables(tournament_id).values() for player in table.players()}

    # --- the process --------------------------------------------------------------

    def create(self, name: str, settings: TournamentSettings, *, command_id: str) -> uuid.UUID:
        tournament_id = Tournament.create_id(name)
        if self.service.answered(command_id) is None:
            tournament = Tournament(name=name, settings=settings.check(), actor=ORGANISER,
                                    command_id=command_id)
            self.service.record(tournament, command_id)
        return tournament_id

    def register(self, tournament_id: uuid.UUID, player: str, *, command_id: str) -> Recorded:
        return self._apply(tournament_id, command_id, lambda t: t.register(
            player=player, actor=ORGANISER, command_id=command_id))

    def draw_seating(self, tournament_id: uuid.UUID, *, command_id: str) -> Recorded:
        """Draw the seats from a secret seed kept sealed in the vault until the finish."""
        seed = self._seed(tournament_id)
        return self._apply(tournament_id, command_id, lambda t: t.draw_seating(
            seed=seed, actor=ORGANISER, command_id=command_id))

    def play_round(self, tournament_id: uuid.UUID, play: PlayTables, *, prefix: str,
                   on_step: Callable[[], None] = lambda: None) -> None:
        """Start a round, play its coups step by step, end it, and balance the tables."""
        self._apply(tournament_id, f"{prefix}:start", lambda t: t.start_round(
            actor=ORGANISER, command_id=f"{prefix}:start"))
        settings = self.state(tournament_id).settings
        for step in range(settings.coups_per_round):
            if not self._step(tournament_id, play, f"{prefix}:{step}"):
                break
            on_step()
        chips = self.chips(tournament_id)
        self._apply(tournament_id, f"{prefix}:end", lambda t: t.end_round(
            chips=chips, actor=ORGANISER, command_id=f"{prefix}:end"))
        self.balance(tournament_id, command_id=f"{prefix}:end:balance")

    def finish(self, tournament_id: uuid.UUID, *, command_id: str) -> Recorded:
        """Award the prizes and reveal the seating seed; every table the tournament opened
        ends its taille and reveals its shoe's seed, so that every card can be checked."""
        seed = self._seed(tournament_id)
        finished = self._apply(tournament_id, command_id, lambda t: t.finish(
            seed=seed, actor=ORGANISER, command_id=command_id))
        state = self.state(tournament_id)
        for number in range(1, state.tables_opened + 1):
            self._close(Table.create_id(state.table_name(number)), f"{command_id}:{number}")
        return finished

    def _close(self, table_id: uuid.UUID, command_id: str) -> None:
        table = self.service.state(table_id)
        if table.phase in (Phase.BETTING, Phase.NO_BANK):
            self.service.execute(table_id, c.EndTaille(command_id=f"{command_id}:end",
                                                       actor=ORGANISER))
        if self.service.state(table_id).phase is Phase.TAILLE_OVER:
            self.service.execute(table_id, c.RevealSeed(command_id=f"{command_id}:reveal",
                                                        actor=ORGANISER))

    def balance(self, tournament_id: uuid.UUID, *, command_id: str) -> Recorded:
        """Break and move as the tournament's plan says; moving bankers retire first."""
        seed = self._seed(tournament_id)
        plan = self.state(tournament_id).balancing_plan(seed)
        movers = {m.player for m in plan if isinstance(m, Move)}
        movers |= {p for b in plan if not isinstance(b, Move) for p in b.players}
        for name, table in self.tables(tournament_id).items():
            if table.banker in movers:
                self._retire(Table.create_id(name), table.banker, f"{command_id}:{name}")
        chips = self.chips(tournament_id)
        return self._apply(tournament_id, command_id, lambda t: t.balance(
            seed=seed, chips=chips, actor=ORGANISER, command_id=command_id))

    def _step(self, tournament_id: uuid.UUID, play: PlayTables, label: str) -> bool:
        """Every table that can play plays one coup; the busted are recorded; balance."""
        before = self.tables(tournament_id)
        targets = [(Table.create_id(name), table.coup_number + 1)
                   for name, table in before.items() if playable(table)]
        if not targets:
            return False
        play(targets)
        minimum = self.state(tournament_id).settings.min_stake
        for name, table in self.tables(tournament_id).items():
            was = before[name]
            busted = [Bust(player=p, chips=was.holding(p) if p in was.players() else 0)
                      for p in table.players() if table.holding(p) < minimum]
            if busted and table.coup_number > was.coup_number:
                self._bust(tournament_id, name, table.coup_number, busted, f"{label}:bust:{name}")
        self.balance(tournament_id, command_id=f"{label}:balance")
        return True

    def _bust(self, tournament_id: uuid.UUID, table: str, coup: int, busted: list[Bust],
              command_id: str) -> None:
        self._apply(tournament_id, command_id, lambda t: t.record_bust_outs(
            table=table, coup=coup, busted=busted, actor=ORGANISER, command_id=command_id))

    # --- mirroring on the tables ----------------------------------------------------

    def _apply(self, tournament_id: uuid.UUID, command_id: str,
               decide: Callable[[Tournament], object]) -> Recorded:
        recorded = self.service.apply_once(tournament_id, "tournament", command_id, decide)
        tournament = self.tournament(tournament_id)
        first = recorded.version - len(recorded.events)
        for event in self.service.events_of(tournament_id, gt=first, lte=recorded.version):
            for order in tournament.table_orders(event):
                self._send(tournament, order)
        return recorded

    def _send(self, tournament: Tournament, order: TableOrder) -> None:
        table_id = Table.create_id(order.table)
        if not self.service.events_of(table_id, lte=1):
            self.service.open_table(order.table, tournament.state.settings.table_settings(),
                                    command_id=f"{tournament.id}/open/{order.table}",
                                    tournament=tournament.state.name, actor=ORGANISER)
        command = order.command
        if isinstance(command, c.LeaveTable):
            self._retire(table_id, command.player, command.command_id)
        self.service.execute(table_id, command)

    def _retire(self, table_id: uuid.UUID, player: str, command_id: str) -> None:
        if self.service.state(table_id).banker == player:
            self.service.execute(table_id, c.RetireBank(command_id=f"{command_id}/retire",
                                                        actor=ORGANISER, player=player))

    def _seed(self, tournament_id: uuid.UUID) -> bytes:
        """The seating seed: drawn and sealed in the vault at the draw, unsealed after."""
        seating = self.state(tournament_id).seating
        if seating is not None:
            return self.service.vault.unseal(seating.commitment)
        seed = self.service.seed_source(tournament_id, 0)
        with suppress(SeedAlreadySealed):  # a retried draw drew the same seed
            self.service.vault.store(commitment(seed), seed)
        return seed
