"""The director through the store: two directors against one tournament, handing the lease
back and forth, play the same tournament as one director alone (same results, the same
events at every table, no command applied twice); a director from an older epoch is
fenced off; a lease held is trusted until half its time is left; a round by minutes runs on
the recorded clock."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from domain.errors import DomainError
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.commands import StartStep
from domain.tournament.formats import Advance, Stage
from domain.tournament.settings import TournamentSettings
from domain.tournament.state import secret_commitment
from infra.services.autoplay import play_coups
from infra.services.direction import Tick
from infra.services.tables import TableService
from infra.services.tournaments import Director, Tournaments
from infra.store.leases import Leases
from tests.integration.test_tournament_run import SETTINGS
from workers.director import Failures, turn

SEED = b"two directors"


def prepared(url: str, settings: TournamentSettings = SETTINGS, players: int = 14,
             key: bytes | None = None) -> tuple[TableService, uuid.UUID]:
    """A tournament registered and started; `key`: the vault's key (a worker's)."""
    service = TableService(url=url, secret_key=key)
    tournaments = Tournaments(service)
    tournament_id = tournaments.create("duo", settings, seed=SEED, command_id="create")
    for n in range(players):
        tournaments.register(tournament_id, f"p{n:02d}", bot=True, command_id=f"reg-{n}")
    tournaments.start(tournament_id, command_id="start")
    return service, tournament_id


def record(service: TableService, tournament_id: uuid.UUID) -> dict[str, Any]:
    """What must not depend on who directed: results, the tournament's decisions, and every
    table's events with their command ids (the clock's readings and epochs aside)."""
    state = Tournaments(service).state(tournament_id)
    decisions = [(type(e).__name__, e.command_id) for e in service.events_of(tournament_id)
                 if not isinstance(e, Tournament.DirectorAppointed)]
    tables = {}
    for number in range(1, state.tables_opened + 1):
        events = service.events_of(Table.create_id(state.table_name(number)))
        tables[number] = [(type(e).__name__, e.command_id) for e in events]
    return {"results": state.results(), "decisions": decisions, "tables": tables}


def test_two_directors_play_the_same_tournament_as_one(sqlite_url: str,
                                                       postgres_url: str) -> None:
    alone, alone_id = prepared(sqlite_url)
    Director(alone).run(alone_id)
    expected = record(alone, alone_id)

    shared, shared_id = prepared(postgres_url)
    errors: list[BaseException] = []
    fenced: list[str] = []
    finished = threading.Event()

    def direct(name: str) -> None:
        service = TableService(url=postgres_url)
        director = Director(service, holder=name, lease_seconds=2.0)
        try:
            turns = 0
            while not finished.is_set():
                try:
                    tick = director.tick(shared_id)
                except DomainError as error:
                    if error.rule != "stale-epoch":
                        raise
                    fenced.append(name)
                    continue
                if tick is Tick.FINISHED:
                    finished.set()
                turns += 1
                if turns % 7 == 0:  # hand the lease over now and then
                    director.leases.release(shared_id, name)
                    finished.wait(0.05)
        except BaseException as error:
            errors.append(error)
            finished.set()
        finally:
            service.close()

    threads = [threading.Thread(target=direct, args=(f"director-{n}",)) for n in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors
    appointed = [e for e in shared.events_of(shared_id)
                 if isinstance(e, Tournament.DirectorAppointed)]
    assert len(appointed) >= 3  # the lease changed hands
    assert {e.actor for e in appointed} == {"@director"}
    got = record(shared, shared_id)
    assert got["results"] == expected["results"]
    assert got["decisions"] == expected["decisions"]
    assert got["tables"] == expected["tables"]
    for events in got["tables"].values():  # each command once: its events are contiguous
        ids = [command_id for _, command_id in events]
        runs = [cid for i, cid in enumerate(ids) if i == 0 or ids[i - 1] != cid]
        assert len(runs) == len(set(runs))


def test_a_director_of_an_older_epoch_is_fenced_off(sqlite_url: str) -> None:
    service, tournament_id = prepared(sqlite_url, players=6)
    first = Director(service, holder="first", lease_seconds=0.0)
    second = Director(service, holder="second", lease_seconds=60.0)
    assert first.tick(tournament_id) is Tick.ACTED  # epoch 1, the lease already expired
    assert second.tick(tournament_id) is Tick.ACTED  # epoch 2
    assert first.tick(tournament_id) is Tick.WAITING  # second holds the lease
    state = Tournaments(service).state(tournament_id)
    with pytest.raises(DomainError) as caught:
        first.tournaments.execute(tournament_id, StartStep(
            coups={}, chips={p: 1 for p in state.in_play()}, actor="@director",
            command_id="late", epoch=1))
    assert caught.value.rule == "stale-epoch"


def test_a_lease_held_is_trusted_until_half_its_time_is_left(sqlite_url: str) -> None:
    service = TableService(url=sqlite_url)
    tournament_id = uuid.uuid4()
    mine, theirs = Leases(service.database), Leases(service.database)
    assert mine.acquire(tournament_id, "mine", 100.0, 10.0) == 1  # until 110
    # another holder takes it on a clock ahead (as if this one had stalled past 110): this
    # holder, trusting its lease until 105, does not ask the store, and the epoch recorded in
    # the tournament is what fences it off
    assert theirs.acquire(tournament_id, "theirs", 111.0, 10.0) == 2
    assert mine.acquire(tournament_id, "mine", 104.9, 10.0) == 1
    assert mine.acquire(tournament_id, "mine", 105.1, 10.0) is None  # asked: it passed on
    assert theirs.acquire(tournament_id, "theirs", 112.0, 10.0) == 2
    theirs.release(tournament_id, "theirs")  # forgotten here too: taken again at once
    assert mine.acquire(tournament_id, "mine", 112.0, 10.0) == 3
    assert theirs.acquire(tournament_id, "theirs", 113.0, 10.0) is None
    assert mine.acquire(tournament_id, "mine", 118.0, 10.0) == 3  # renewed at 118: until 128
    assert theirs.acquire(tournament_id, "theirs", 124.0, 10.0) is None
    service.close()


def test_a_round_by_minutes_ends_on_the_recorded_clock(sqlite_url: str) -> None:
    timed = TournamentSettings(variant="punto-banco", seats_per_table=6, starting_chips=500,
                               min_stake=5, max_stake=50, coups_per_round=1000,
                               minutes_per_round=1, advance=3, prizes=(10000,), buy_in=10)
    service, tournament_id = prepared(sqlite_url, timed, players=6)
    now = [1_000.0]
    director = Director(service, clock=lambda: now[0])
    for _ in range(8):
        director.tick(tournament_id)
    state = Tournaments(service).state(tournament_id)
    assert state.round == 1 and state.seconds_left(now[0]) == 60.0
    steps = state.steps
    now[0] += 61  # a minute passes: the step under way finishes, then the round ends
    while Tournaments(service).state(tournament_id).round == 1 and (
            Tournaments(service).state(tournament_id).phase.value == "running"):
        director.tick(tournament_id)
    state = Tournaments(service).state(tournament_id)
    assert state.phase.value == "between-rounds" and steps <= state.steps <= steps + 1
    started = [e for e in service.events_of(tournament_id)
               if isinstance(e, Tournament.RoundStarted)]
    assert started[0].at == 1_000.0 and started[0].minutes == 1


def tie_on_the_line(tournaments: Tournaments, tournament_id: uuid.UUID) -> tuple[str, str, str]:
    """At a round's end, the second and the third tied above everyone else and the leader
    above them (chips corrected by the organiser): the leader, the second, the third."""
    chips = sorted(tournaments.chips(tournament_id).items(), key=lambda pc: -pc[1])
    (leader, _), (second, at_second), (third, at_third) = chips[:3]
    level = max(at_second, at_third) + 1000
    for player, now in ((second, at_second), (third, at_third)):
        tournaments.intervene(tournament_id, "correct-chips", player, "tie for the test",
                              delta=level - now, command_id=f"tie-{player}")
    if tournaments.chips(tournament_id)[leader] <= level:
        tournaments.intervene(tournament_id, "correct-chips", leader, "lead for the test",
                              delta=level + 1000 - tournaments.chips(tournament_id)[leader],
                              command_id="lead")
    return leader, second, third


def test_a_tie_on_the_line_is_played_off_at_a_table_of_its_own(sqlite_url: str) -> None:
    heats = TournamentSettings(
        variant="punto-banco", seats_per_table=6, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=2, prizes=(10000,), buy_in=10, tie_break="play-off",
        stages=(Stage(name="heats", rounds=1, advance=Advance(overall=2)),
                Stage(name="final", rounds=1)))
    service, tournament_id = prepared(sqlite_url, heats, players=5)
    director = Director(service)
    tournaments = director.tournaments
    while not tournaments.state(tournament_id).round_over(0.0):
        director.tick(tournament_id)
    leader, second, third = tie_on_the_line(tournaments, tournament_id)
    while tournaments.state(tournament_id).stage == 0:
        director.tick(tournament_id)
    events = service.events_of(tournament_id)
    played = [e for e in events if isinstance(e, Tournament.PlayOffPlayed)]
    assert played and set(played[0].chips) == {second, third}
    assert service.events_of(Table.create_id(played[0].table))  # a coup recorded like any other
    state = tournaments.state(tournament_id)
    assert len(state.in_play()) == 2 and leader in state.in_play()
    assert len({second, third} & set(state.in_play())) == 1


def test_a_secret_bet_stays_hidden_until_its_coup_is_dealt(sqlite_url: str) -> None:
    final = TournamentSettings(
        variant="punto-banco", seats_per_table=6, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=3, prizes=(10000,), buy_in=10,
        stages=(Stage(name="final", rounds=2, secret_bet=True),))
    service, tournament_id = prepared(sqlite_url, final, players=4)
    director = Director(service)
    tournaments = director.tournaments
    director.tick(tournament_id)  # the first round starts
    player = tournaments.state(tournament_id).in_play()[0]
    nonce = "5e" * 16
    tournaments.place_secret_bet(tournament_id, player, secret_commitment("tie", 20, nonce),
                                 actor=player, command_id="secret")
    with pytest.raises(DomainError) as caught:
        tournaments.reveal_secret_bet(tournament_id, player, "tie", 20, nonce, actor=player,
                                      command_id="too-soon")
    assert caught.value.rule == "secret-bet-not-dealt"
    table = Table.create_id(tournaments.state(tournament_id).entrant(player).table or "")
    assert not any("tie" in str(vars(e)) for e in service.events_of(table)
                   if type(e).__name__ == "BetPlaced" and getattr(e, "player", "") == player)
    while tournaments.state(tournament_id).steps < 1 or tournaments.state(
            tournament_id).step is not None:
        director.tick(tournament_id)
    before = service.state(table).holding(player)
    tournaments.reveal_secret_bet(tournament_id, player, "tie", 20, nonce, actor=player,
                                  command_id="reveal")
    revealed = [e for e in service.events_of(tournament_id)
                if isinstance(e, Tournament.SecretBetRevealed)]
    assert [(e.player, e.spot, e.amount, e.actor) for e in revealed] == [(player, "tie", 20,
                                                                         player)]
    delta = revealed[0].delta
    assert delta == (160 if revealed[0].outcome == "tie" else -20)
    assert service.state(table).holding(player) == before + delta


def test_with_croupiers_the_director_waits_for_each_table_to_be_dealt(sqlite_url: str) -> None:
    dealt_by_hand = TournamentSettings(
        variant="punto-banco", seats_per_table=6, starting_chips=1000, min_stake=10,
        max_stake=100, coups_per_round=2, prizes=(10000,), buy_in=10, dealing="croupier",
        stages=(Stage(name="only", rounds=1),))
    service, tournament_id = prepared(sqlite_url, dealt_by_hand, players=4)
    director = Director(service)
    state = director.tournaments.state
    while state(tournament_id).step is None:
        assert director.tick(tournament_id) is Tick.ACTED  # the round, then its first step
    table = Table.create_id(state(tournament_id).tables[0])
    assert director.tick(tournament_id) is Tick.WAITING  # nobody dealt: the director waits
    assert service.state(table).coup_number == 0 and state(tournament_id).step is not None
    play_coups(service, table, b"the croupier", "croupier", 1)  # the croupier deals a coup
    assert director.tick(tournament_id) is Tick.ACTED
    assert state(tournament_id).step is None and state(tournament_id).steps == 1
    assert service.state(table).coup_number == 1  # the director dealt nothing itself


def test_a_tournament_whose_steps_fail_is_tried_again_later_not_at_once(
        sqlite_url: str) -> None:
    service, tournament_id = prepared(sqlite_url, players=4)
    director = Director(service)
    director.tournaments.master = lambda _: (_ for _ in ()).throw(OSError("vault gone"))
    failures = Failures(clock=lambda: 0.0)  # frozen: the backoff cannot run out mid-test
    finished: set[uuid.UUID] = set()
    turn(director, finished, failures)  # balancing before the first round needs the seed
    assert failures.waiting(tournament_id) and failures.count[tournament_id] == 1
    version = director.tournaments.tournament(tournament_id).version
    assert turn(director, finished, failures) is False  # not tried again at once
    assert director.tournaments.tournament(tournament_id).version == version
    failures.succeeded(tournament_id)
    assert not failures.waiting(tournament_id)
