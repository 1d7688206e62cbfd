"""The tournament: whole tournaments on four tables, the seating draw, ties, prizes, refusals.

`Simulation` plays a tournament through the Tournament aggregate with a fake chip process: at
every table, each coup, one player at random takes stakes (sometimes all-in) from the others,
so chips only move between players. The tables are real `TableState`s driven by the table
orders the tournament gives for each event, so a move's chips leave one table and arrive at
the other as chip adjustments. After every bust-out and every round the tables are balanced and
checked; at the end every finishing position is taken once and every chip is on the winner or
with a player cut at a round's end.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import msgspec
import pytest
from eventsourcing.domain import Snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.errors import DomainError, NotFound, OutOfTurn, RuleViolation
from domain.game.settings import Variant
from domain.game.shoe import commitment
from domain.table.commands import AdjustChips, LeaveTable, SeatPlayer
from domain.table.state import TableState
from domain.tournament.aggregate import Tournament
from domain.tournament.commands import (
    BalanceTables,
    DrawSeating,
    EndRound,
    FinishTournament,
    RecordBustOuts,
    ReenterPlayer,
    RegisterPlayer,
    StartRound,
    TournamentCommand,
    UnregisterPlayer,
)
from domain.tournament.entrants import Bust, Status
from domain.tournament.prizes import prize_table, shares
from domain.tournament.records import Phase, Seating
from domain.tournament.seating import deal, shuffled
from domain.tournament.settings import BASIS_POINTS, TournamentSettings
from domain.tournament.table_orders import table_orders
from infra.store.mapper import MsgspecMapper

SEED = bytes(range(32))
OTHER_SEED = bytes(range(1, 33))
ORGANISER = "@organiser"


def execute(tournament: Tournament, command: TournamentCommand, seed: bytes = SEED) -> None:
    """Execute a command, the seating seed `seed` (the service's vault port, here a constant)."""
    tournament.execute(command, lambda: seed)


def org(command_id: str) -> dict[str, str]:
    """An organiser's command's `actor` and `command_id`."""
    return {"actor": ORGANISER, "command_id": command_id}


def structure(**overrides: Any) -> TournamentSettings:
    base: dict[str, Any] = {
        "variant": Variant.CHEMIN_DE_FER, "seats_per_table": 8, "starting_chips": 1000,
        "min_stake": 10, "max_stake": 500, "coups_per_round": 12, "minutes_per_round": 30,
        "prizes": (5000, 3000, 2000), "buy_in": 101,
    }
    return msgspec.convert({**base, **overrides}, TournamentSettings)


def payload(recorded: Any) -> tuple[str, dict[str, Any]]:
    """An event without its timestamp, for comparing two runs."""
    fields = {k: v for k, v in vars(recorded).items() if k != "timestamp"}
    return type(recorded).__qualname__, msgspec.to_builtins(fields)


class Simulation:
    """A tournament of `players` played to the end with a fake chip process from `seed`."""

    def __init__(self, settings: TournamentSettings, players: int, seed: int,
                 draw_seed: bytes = SEED) -> None:
        self.rng = random.Random(seed)
        self.draw_seed = draw_seed
        self.settings = settings
        self.tournament = Tournament(name="cup", settings=settings, **org("create"))
        self.events: list[Any] = []
        self.tables: dict[str, TableState] = {}
        self.coups: dict[str, int] = {}
        self.retired = 0  # chips taken away by players cut at a round's end
        self.balance_checks = 0
        self.names = iter(f"p{i:03}" for i in range(10_000))
        self.reentered: set[str] = set()
        for _ in range(players):
            self.command(RegisterPlayer, player=next(self.names))

    def command(self, command: Callable[..., TournamentCommand], **fields: Any) -> None:
        execute(self.tournament, command(**org(f"c{len(self.events)}"),
                                         **fields), self.draw_seed)
        for recorded in self.tournament.collect_events():
            self.events.append(recorded)
            for order in table_orders(self.tournament, recorded):
                self.execute(order.table, order.command)

    def execute(self, name: str, command: Any) -> None:
        table = self.tables.setdefault(
            name, TableState(settings=self.settings.table_settings()))
        match command:
            case SeatPlayer(player=player, chips=chips, side=side, standing=standing):
                table.seat(player, chips, side, standing)
            case AdjustChips(player=player, delta=delta):
                table.adjust_chips(player, delta)
            case LeaveTable(player=player):
                self.retired += table.leave(player)

    @property
    def state(self) -> Any:
        return self.tournament.state

    def chips(self) -> dict[str, int]:
        return {seat.player: seat.chips for t in self.tables.values() for seat in t.seats}

    def run(self) -> Simulation:
        self.command(DrawSeating)
        self.check_tables()
        while not self.state.decided:
            self.command(StartRound)
            for _ in range(self.settings.coups_per_round):
                for table in list(self.state.tables):
                    if table in self.state.tables and not self.state.decided:
                        self.play_coup(table)
                self.late_arrivals()
            if self.state.decided:
                break
            in_play = {p: c for p, c in self.chips().items() if p in self.state.in_play()}
            self.command(EndRound, chips=in_play)
            self.rebalance()
        self.command(FinishTournament)
        return self

    def play_coup(self, name: str) -> None:
        """One coup of the fake game: a random player takes stakes from the others."""
        seats = self.tables[name].seats
        if len(seats) < 2:
            return
        self.coups[name] = self.coups.get(name, 0) + 1
        at_start = {s.player: s.chips for s in seats}
        winner = self.rng.choice(seats)
        for seat in seats:
            if seat is winner:
                continue
            stake = seat.chips if self.rng.random() < 0.25 else self.rng.randint(
                1, max(1, seat.chips // 5))
            seat.chips -= stake
            winner.chips += stake
        busted = [Bust(player=s.player, chips=at_start[s.player]) for s in seats if not s.chips]
        if busted:
            self.command(RecordBustOuts, table=name, coup=self.coups[name], busted=busted)
            self.rebalance()

    def late_arrivals(self) -> None:
        """While registration is open, now and then a newcomer arrives or a busted player
        buys in again (once)."""
        if not self.state.registration_open or self.state.phase is Phase.REGISTRATION:
            return
        if self.rng.random() < 0.2:
            self.command(RegisterPlayer, player=next(self.names))
            self.rebalance()
        out = [e.player for e in self.state.entrants.values()
               if e.status is Status.OUT and e.player not in self.reentered]
        if out and self.settings.reentries and self.rng.random() < 0.5:
            player = self.rng.choice(out)
            self.reentered.add(player)
            self.command(ReenterPlayer, player=player)
            self.rebalance()

    def rebalance(self) -> None:
        self.command(BalanceTables, chips=self.chips())
        self.check_tables()

    def check_tables(self) -> None:
        """Balanced within the tolerance, no table that could break, the tables' seats are the
        tournament's, and every chip issued is on a table or was taken away by a cut."""
        state = self.state
        sizes = state.table_sizes()
        seats = self.settings.seats_per_table
        assert max(sizes.values()) - min(sizes.values()) <= self.settings.tolerance
        assert max(sizes.values()) <= seats
        if len(sizes) > 1:
            assert sum(sizes.values()) > (len(sizes) - 1) * seats
        for name in state.tables:
            assert {e.player for e in state.seated_at(name)} == set(self.tables[name].players())
        assert sum(self.chips().values()) + self.retired == state.chips_issued
        self.balance_checks += 1


FOUR_TABLES = {
    "freezeout": {},
    "late-registration-and-re-entry": {"late_rounds": 1, "reentries": 1},
    "cut-to-twelve": {"advance": 12, "coups_per_round": 6, "tolerance": 2},
}


@pytest.mark.parametrize("shape", FOUR_TABLES)
@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(25, 32))
def test_a_four_table_tournament_ends_with_one_winner(shape: str, seed: int,
                                                      players: int) -> None:
    sim = Simulation(structure(**FOUR_TABLES[shape]), players, seed).run()
    state = sim.state
    assert sim.events[1 + players].__class__ is Tournament.SeatingDrawn
    assert len([e for e in sim.events if isinstance(e, Tournament.TableBroken)]) >= 3
    assert state.phase is Phase.FINISHED
    results = state.results()
    winners = [r for r in results if r.position == 1]
    assert len(winners) == 1 and winners[0].tied == 1
    check_places(results, len(state.entrants))
    # every chip on the winner or taken away by a cut; every prize paid, the pool exactly
    assert sim.chips() == {winners[0].player: state.chips_issued - sim.retired}
    assert sum(r.prize for r in results) == state.pool == state.entries * 101
    awarded = [e for e in sim.events if isinstance(e, Tournament.PrizeAwarded)]
    assert sum(e.amount for e in awarded) == state.pool
    finished = sim.events[-1]
    assert isinstance(finished, Tournament.TournamentFinished)
    assert finished.winners == [winners[0].player] and finished.seed == SEED.hex()
    check_moves(sim.events)


def check_places(results: list[Any], players: int) -> None:
    """Every finishing position 1 .. players taken once: `tied` players at a position cover
    position .. position + tied - 1 together."""
    covered: list[int] = []
    for position in {r.position for r in results}:
        tied = [r for r in results if r.position == position]
        assert all(r.tied == len(tied) for r in tied)
        covered += range(position, position + len(tied))
    assert len(results) == players
    assert sorted(covered) == list(range(1, players + 1))


def check_moves(events: list[Any]) -> None:
    """Replaying the events: a broken table's players are reseated in the seed's order; any
    other move takes, from its table, a player moved least so far, earliest drawn on a tie."""
    replayed: Any = None
    for recorded in events:
        if isinstance(recorded, Tournament.TableBroken):
            assert recorded.order == shuffled(SEED, "cup", f"break/{recorded.table}",
                                              recorded.players)
        if (isinstance(recorded, Tournament.PlayerMoved)
                and recorded.from_table in replayed.state.tables):
            at = replayed.state.seated_at(recorded.from_table)
            first = min(at, key=lambda e: (e.moves, e.draw_rank))
            assert recorded.player == first.player
        replayed = recorded.mutate(replayed)


def test_the_same_seeds_give_the_same_tournament() -> None:
    first = Simulation(structure(late_rounds=1, reentries=1), 30, 7).run()
    again = Simulation(structure(late_rounds=1, reentries=1), 30, 7).run()
    assert [payload(e) for e in first.events] == [payload(e) for e in again.events]
    other = Simulation(structure(late_rounds=1, reentries=1), 30, 7, OTHER_SEED).run()
    assert [payload(e) for e in first.events] != [payload(e) for e in other.events]


def test_the_events_replay_to_the_same_tournament_and_survive_the_store_mapper() -> None:
    sim = Simulation(structure(late_rounds=1, reentries=1, advance=12), 29, 3).run()
    mapper = MsgspecMapper()
    replayed: Any = None
    for recorded in sim.events:
        decoded = mapper.to_domain_event(mapper.to_stored_event(recorded))
        assert payload(decoded) == payload(recorded)
        replayed = decoded.mutate(replayed)
    assert msgspec.to_builtins(replayed.state) == msgspec.to_builtins(sim.state)
    snapshot = mapper.to_domain_event(mapper.to_stored_event(Snapshot.take(sim.tournament)))
    restored: Any = snapshot.mutate(None)
    assert msgspec.to_builtins(restored.state) == msgspec.to_builtins(sim.state)


# --- the seating draw ---------------------------------------------------------------------


def registered(players: int, **overrides: Any) -> Tournament:
    tournament = Tournament(name="cup", settings=structure(**overrides), **org("create"))
    for i in range(players):
        execute(tournament, RegisterPlayer(player=f"p{i:03}", **org(f"r{i}")))
    return tournament


def test_the_seating_draw_is_reproducible_from_its_seed() -> None:
    tournament = registered(31)
    execute(tournament, UnregisterPlayer(player="p030", **org("unregister")))
    expected = tournament.state.drawn_seating(SEED)
    assert expected == tournament.state.drawn_seating(SEED)
    assert expected != tournament.state.drawn_seating(OTHER_SEED)
    execute(tournament, DrawSeating(**org("draw")), SEED)
    events = tournament.collect_events()
    drawn = next(e for e in events if isinstance(e, Tournament.SeatingDrawn))
    assert drawn.commitment == commitment(SEED) and drawn.algorithm == "sabot-seating-v1"
    assert SEED.hex() not in repr(events)
    seated = [Seating(player=e.player, table=e.table, seat=e.seat)
              for e in events if isinstance(e, Tournament.PlayerSeatedAt)]
    # anyone holding the revealed seed recomputes the draw from the recorded entrants
    order = shuffled(SEED, "cup", "draw", drawn.entrants)
    assert seated == deal(order, drawn.tables, lambda n: f"cup-table-{n}") == expected
    assert {s.table for s in seated} == {f"cup-table-{n}" for n in range(1, 5)}
    assert sorted(tournament.state.table_sizes().values()) == [7, 7, 8, 8]
    tournament.state.verify(SEED)


def test_a_draw_that_is_not_the_seeds_is_caught_when_the_seed_is_revealed() -> None:
    tournament = registered(12)
    execute(tournament, DrawSeating(**org("draw")), SEED)
    seats = tournament.state.seating.seats
    seats[0], seats[1] = seats[1], seats[0]
    with pytest.raises(RuleViolation) as refused:
        tournament.state.verify(SEED)
    assert refused.value.rule == "seating-mismatch"
    with pytest.raises(RuleViolation) as refused:
        tournament.state.verify(OTHER_SEED)
    assert refused.value.rule == "seating-commitment"


@settings(max_examples=50, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), players=st.integers(2, 60))
def test_the_stream_orders_every_player_once(seed: bytes, players: int) -> None:
    names = [f"p{i}" for i in range(players)]
    order = shuffled(seed, "cup", "draw", names)
    assert sorted(order) == sorted(names)
    assert order == shuffled(seed, "cup", "draw", names)


# --- positions and prizes -----------------------------------------------------------------


def one_table(players: int = 4, **overrides: Any) -> Tournament:
    tournament = registered(players, **{"seats_per_table": players, **overrides})
    execute(tournament, DrawSeating(**org("draw")), SEED)
    execute(tournament, StartRound(**org("round")))
    return tournament


def bust(tournament: Tournament, coup: int, **chips: int) -> list[Any]:
    execute(tournament, RecordBustOuts(
        table="cup-table-1", coup=coup, busted=[Bust(player=p, chips=c) for p, c in chips.items()],
        **org(f"bust{coup}")))
    return [e for e in tournament.collect_events() if isinstance(e, Tournament.PlayerEliminated)]


def test_players_busted_in_one_coup_rank_by_their_chips_at_its_start() -> None:
    tournament = one_table(5)
    eliminated = bust(tournament, 1, p000=300, p001=900, p002=500)
    assert [(e.player, e.position, e.tied) for e in eliminated] == [
        ("p001", 3, 1), ("p002", 4, 1), ("p000", 5, 1)]
    assert all(e.coup == 1 and e.table == "cup-table-1" for e in eliminated)


def test_equal_chips_tie_and_share_the_prizes_of_the_places_they_cover() -> None:
    # pool 4 x 101 = 404: 50% 202, 30% 121 (121.2), 20% 80 (80.8); the chip left over goes
    # to first place, 203. p001 and p002 tie for 2nd-3rd and share 121 + 80 = 201: 101 to the
    # one drawn first, 100 to the other.
    tournament = one_table(4)
    assert [(e.player, e.position, e.tied) for e in bust(tournament, 1, p003=50)] == [
        ("p003", 4, 1)]
    eliminated = bust(tournament, 2, p001=700, p002=700)
    assert [(e.player, e.position, e.tied) for e in eliminated] == [
        ("p001", 2, 2), ("p002", 2, 2)]
    assert tournament.state.decided
    refused(tournament, lambda: execute(tournament, FinishTournament(**org("finish")), OTHER_SEED),
            RuleViolation, "seating-commitment")
    execute(tournament, FinishTournament(**org("finish")), SEED)
    events = tournament.collect_events()
    prizes = {e.player: e.amount for e in events if isinstance(e, Tournament.PrizeAwarded)}
    first_drawn = min(("p001", "p002"), key=lambda p: tournament.state.entrants[p].draw_rank or 0)
    assert prizes == {"p000": 203, first_drawn: 101,
                      ({"p001", "p002"} - {first_drawn}).pop(): 100}
    assert sum(prizes.values()) == tournament.state.pool == 404
    winner = tournament.state.results()[0]
    assert (winner.player, winner.position, winner.tied) == ("p000", 1, 1)


def test_everyone_busting_at_once_ties_the_ones_with_the_most_chips_for_first() -> None:
    tournament = one_table(3, prizes=(7000, 3000))
    eliminated = bust(tournament, 1, p000=400, p001=400, p002=200)
    assert [(e.position, e.tied) for e in eliminated] == [(1, 2), (1, 2), (3, 1)]
    execute(tournament, FinishTournament(**org("finish")), SEED)
    finished = tournament.collect_events()[-1]
    assert isinstance(finished, Tournament.TournamentFinished)
    assert finished.winners == sorted(["p000", "p001"],
                                      key=lambda p: tournament.state.entrants[p].draw_rank or 0)
    assert sum(r.prize for r in tournament.state.results()) == 303


def test_bust_outs_during_late_registration_are_placed_when_it_closes() -> None:
    tournament = one_table(4, late_rounds=1, reentries=1, seats_per_table=6)
    assert bust(tournament, 1, p000=1000) == []  # a late entrant could still finish below
    assert bust(tournament, 2, p001=1000) == []
    execute(tournament, ReenterPlayer(player="p000", **org("again")))
    execute(tournament, RegisterPlayer(player="late", **org("late")))
    seated = [e for e in tournament.collect_events() if isinstance(e, Tournament.PlayerSeatedAt)]
    assert [(e.player, e.chips) for e in seated] == [("p000", 1000), ("late", 1000)]
    with pytest.raises(RuleViolation) as refused:
        execute(tournament, ReenterPlayer(player="p000", **org("twice")))
    assert refused.value.rule == "not-busted"
    chips = {p: 1000 for p in tournament.state.in_play()}
    execute(tournament, EndRound(chips=chips, **org("end")))
    eliminated = [e for e in tournament.collect_events()
                  if isinstance(e, Tournament.PlayerEliminated)]
    assert [(e.player, e.position, e.round) for e in eliminated] == [("p001", 5, 1)]
    assert tournament.state.entries == 6 and tournament.state.pool == 606


def test_a_round_cut_keeps_the_chip_leaders_and_ties_on_the_line_go_on() -> None:
    tournament = registered(12, advance=4, seats_per_table=6)
    execute(tournament, DrawSeating(**org("draw")), SEED)
    execute(tournament, StartRound(**org("round")))
    players = tournament.state.in_play()
    chips = {p: 1000 for p in players}
    chips.update({players[0]: 5000, players[1]: 3000, players[2]: 2000})  # 4th place: a tie
    tournament.collect_events()
    execute(tournament, EndRound(chips=chips, **org("end")))
    eliminated = [e for e in tournament.collect_events()
                  if isinstance(e, Tournament.PlayerEliminated)]
    assert eliminated == []  # nine players tied on the line all go on
    chips = {p: 1000 - i for i, p in enumerate(players)}
    execute(tournament, StartRound(**org("round2")))
    execute(tournament, EndRound(chips=chips, **org("end2")))
    eliminated = [e for e in tournament.collect_events()
                  if isinstance(e, Tournament.PlayerEliminated)]
    assert [(e.player, e.position, e.coup) for e in eliminated] == [
        (p, 5 + i, None) for i, p in enumerate(players[4:])]


@settings(max_examples=200, deadline=None)
@given(pool=st.integers(0, 10**9),
       cuts=st.lists(st.integers(1, BASIS_POINTS - 1), max_size=8, unique=True))
def test_prizes_add_up_to_the_pool(pool: int, cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), BASIS_POINTS]
    prizes = sorted((b - a for a, b in pairwise(bounds)), reverse=True)
    table = prize_table(pool, prizes)
    assert sum(table) == pool and min(table) >= 0
    assert table[0] - pool * prizes[0] // BASIS_POINTS < len(prizes)
    for players in range(1, 5):
        split = shares(sum(table[:players]), players)
        assert sum(split) == sum(table[:players]) and max(split) - min(split) <= 1


# --- refusals: a rule key, and nothing changed --------------------------------------------


def refused(tournament: Tournament, step: Callable[[], object], error: type[DomainError],
            rule: str) -> None:
    before = msgspec.to_builtins(tournament.state)
    version = tournament.version
    with pytest.raises(error) as caught:
        step()
    assert caught.value.rule == rule
    assert msgspec.to_builtins(tournament.state) == before
    assert tournament.version == version


@pytest.mark.parametrize(("overrides", "rule"), [
    ({"min_stake": 600}, "tournament-stakes"),
    ({"min_stake": 0}, "tournament-stakes"),
    ({"max_stake": 5000, "min_stake": 2000}, "tournament-stakes"),
    ({"seats_per_table": 1}, "tournament-seats"),
    ({"prizes": (6000, 3000)}, "tournament-prizes"),
    ({"prizes": (3000, 7000)}, "tournament-prizes"),
    ({"reentries": 1}, "tournament-late"),
    ({"tolerance": 0}, "tournament-tolerance"),
    ({"coups_per_round": 0}, "tournament-round"),
])
def test_a_structure_no_tournament_can_play_is_refused(overrides: dict[str, Any],
                                                       rule: str) -> None:
    with pytest.raises(RuleViolation) as caught:
        Tournament(name="cup", settings=structure(**overrides), **org("create"))
    assert caught.value.rule == rule


def test_bad_input_is_refused_and_changes_nothing() -> None:
    tournament = registered(9, late_rounds=1)
    refused(tournament, lambda: execute(tournament, RegisterPlayer(player="p001", **org("again"))),
            RuleViolation, "already-registered")
    refused(tournament, lambda: execute(tournament, RegisterPlayer(player="@croupier",
            **org("official"))),
            RuleViolation, "player-id")
    refused(tournament, lambda: execute(tournament, UnregisterPlayer(player="ghost",
            **org("ghost"))),
            NotFound, "unknown-player")
    refused(tournament, lambda: execute(tournament, StartRound(**org("early"))),
            OutOfTurn, "out-of-turn")
    execute(tournament, DrawSeating(**org("draw")), SEED)
    refused(tournament, lambda: execute(tournament, UnregisterPlayer(player="p001",
            **org("late"))),
            OutOfTurn, "out-of-turn")
    refused(tournament, lambda: execute(tournament, ReenterPlayer(player="p001", **org("reenter"))),
            RuleViolation, "not-busted")
    refused(tournament, lambda: execute(tournament, BalanceTables(chips={}, **org("bal")),
            OTHER_SEED),
            RuleViolation, "seating-commitment")
    execute(tournament, StartRound(**org("round")))
    at_1 = [e.player for e in tournament.state.seated_at("cup-table-1")]
    at_2 = [e.player for e in tournament.state.seated_at("cup-table-2")]
    refused(tournament, lambda: execute(tournament, RecordBustOuts(table="cup-table-1", coup=1,
            busted=[Bust(player=at_2[0], chips=5)], **org("wrong table"))),
        RuleViolation, "bust-players")
    refused(tournament, lambda: execute(tournament, RecordBustOuts(table="cup-table-9", coup=1,
            busted=[Bust(player=at_1[0], chips=5)], **org("no table"))),
        NotFound, "unknown-table")
    refused(tournament, lambda: execute(tournament, RecordBustOuts(table="cup-table-1", coup=1,
            busted=[Bust(player="ghost", chips=5)], **org("ghost"))),
        NotFound, "unknown-player")
    refused(tournament, lambda: execute(tournament, ReenterPlayer(player=at_1[0],
            **org("reenter"))),
            RuleViolation, "not-busted")
    refused(tournament, lambda: execute(tournament, EndRound(chips={at_1[0]: 10}, **org("end"))),
            RuleViolation, "round-chips")
    refused(tournament, lambda: execute(tournament, FinishTournament(**org("finish")), SEED),
            OutOfTurn, "not-decided")
    chips = {p: 1000 for p in tournament.state.in_play()}
    execute(tournament, EndRound(chips=chips, **org("end")))  # registration closes
    refused(tournament, lambda: execute(tournament, RegisterPlayer(player="late",
            **org("too late"))),
            OutOfTurn, "registration-closed")


def test_a_moved_player_without_known_chips_is_refused_before_anything_is_recorded() -> None:
    tournament = registered(9)
    execute(tournament, DrawSeating(**org("draw")), SEED)
    execute(tournament, StartRound(**org("round")))
    at_2 = [e.player for e in tournament.state.seated_at("cup-table-2")]
    execute(tournament, RecordBustOuts(
        table="cup-table-2", coup=1, busted=[Bust(player=p, chips=1000) for p in at_2[:2]],
        **org("bust")))
    assert tournament.state.balancing_plan(SEED)
    refused(tournament, lambda: execute(tournament, BalanceTables(chips={}, **org("bal")), SEED),
            NotFound, "unknown-chips")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 60), seats=st.integers(3, 10),
       tolerance=st.integers(1, 3), late_rounds=st.integers(0, 2), advance=st.integers(0, 9),
       variant=st.sampled_from([v for v in Variant if v is not Variant.SIMPLIFIED]))
def test_any_structure_stays_balanced_and_ends_with_every_place_taken(
        seed: int, players: int, seats: int, tolerance: int, late_rounds: int, advance: int,
        variant: Variant) -> None:
    """Every variant but the family game, whose table refuses to let a duellist leave even
    between coups (`TableState.committed` counts the duel stake), so a duellist cannot move."""
    prizes = (6000, 4000)
    sim = Simulation(structure(variant=variant, seats_per_table=seats, tolerance=tolerance,
                               late_rounds=late_rounds, reentries=min(late_rounds, 1),
                               advance=advance, coups_per_round=4, prizes=prizes),
                     players, seed).run()
    results = sim.state.results()
    check_places(results, len(sim.state.entrants))
    assert sum(r.prize for r in results) == sim.state.pool
    assert sum(sim.chips().values()) + sim.retired == sim.state.chips_issued
    check_moves(sim.events)


def test_an_unknown_command_is_refused_by_name() -> None:
    tournament = Tournament(name="cup", settings=structure(), **org("create"))
    before = tournament.version
    with pytest.raises(RuleViolation) as refused_:
        execute(tournament, SeatPlayer(command_id="x", player="p1",
                chips=10))  # type: ignore[arg-type]
    assert refused_.value.rule == "unknown-command"
    assert str(refused_.value) == "a tournament takes no SeatPlayer command"
    assert tournament.version == before and not tournament.state.entrants
