"""The read views, on SQLite and on PostgreSQL, fed by real stored events from bot games.

- every view run live (a few coups at a time) equals the same view rebuilt from scratch;
- a runner that fails (an exception) or is killed (SIGKILL, in another process) in the middle
  of a batch leaves the view and its position where the last committed batch put them, and a
  restart applies no event twice and skips none;
- eventsourcing's one-event entry point (and the tracking recorder) refuse an event already
  applied;
- a recalled coup matches the engine's own replay of the table up to that coup;
- rotation: after a banker loses, the shoe is offered to the next player; a passed hand
  returns to the player who would have had it; a lost banco gives the banco suivi;
- standings and auctions agree with the table's own state;
- the CLI brings the views up to date and prints them; a view that cannot apply an event
  is a one-line error, and a rebuild mends it.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar
from uuid import UUID

import pytest
from eventsourcing.persistence import IntegrityError, Tracking

from api.cli import main
from domain.bots import auction_bids, next_command
from domain.game.coup import Outcome, Side
from domain.game.settings import FirstBank, TableSettings, Variant
from domain.table import commands as c
from domain.table.state import Phase, TableState
from infra.services.auctions import AuctionDesk
from infra.services.tables import TableService, seeds_from
from infra.store.opening import Store, open_store
from projections.auctions import banks_held
from projections.recall import RecallMemo, RecallView, recall
from projections.registry import NAMES, VIEWS
from projections.rotation import rotation
from projections.runner import Runner
from projections.standings import standings
from projections.table_fold import Before, Folded
from projections.view import ProjectionFailed

TOURNAMENT = "spring-cup"


@dataclass
class Game:
    """A bot table through the service, auctions included, as `sabot play` drives one (its
    own step, so that these tests do not follow changes to the autoplay helper)."""

    service: TableService
    name: str
    table_id: UUID
    rng: random.Random

    @classmethod
    def open(cls, service: TableService, name: str, variant: Variant, *, players: int = 4,
             tournament: str | None = TOURNAMENT) -> Game:
        service.seed_source = seeds_from(name.encode())
        table_id = service.open_table(name, TableSettings.default(variant),
                                      command_id=f"{name}:open", tournament=tournament).table_id
        for i in range(players):
            player = f"player-{i + 1}"
            side = (Side.RIGHT if i % 2 == 0 else Side.LEFT) \
                if variant is Variant.DEUX_TABLEAUX else None
            service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{player}",
                                                   player=player, chips=1000, side=side))
        return cls(service, name, table_id, random.Random(name))

    @property
    def state(self) -> TableState:
        return self.service.state(self.table_id)

    def step(self) -> None:
        """One command, or one whole bank auction when the table wants its first bank."""
        table = self.service.table(self.table_id)
        state, ids = table.state, f"{self.name}:{table.version}"
        wants_auction = (state.phase is Phase.NO_BANK and state.bank_offered_to is None
                         and state.settings.first_bank is FirstBank.AUCTION)
        bids = auction_bids(state, self.rng) if wants_auction else []
        if bids:
            desk = AuctionDesk(self.service)
            auction_id = desk.open(self.table_id, command_id=f"{ids}:auction")
            for n, (player, amount) in enumerate(bids):
                desk.bid(auction_id, player, amount, command_id=f"{ids}:bid-{n}", actor=player)
            desk.close(auction_id, command_id=f"{ids}:award")
            return
        command = next_command(state, self.rng, lambda label: f"{ids}:{label}")
        self.service.execute(self.table_id, command)

    def command(self, command: c.TableCommand) -> None:
        self.service.execute(self.table_id, command)

    def coups(self, n: int) -> None:
        """Play on until `n` more coups have closed."""
        target = self.state.coup_number + n
        while True:
            state = self.state
            if state.coup_number >= target and state.coup is None:
                return
            self.step()


@pytest.fixture
def service(database_url: str) -> Iterator[TableService]:
    app = TableService(url=database_url, secret_key=b"k" * 32)
    yield app
    app.close()


@pytest.fixture
def store(service: TableService) -> Iterator[Store]:
    with open_store(service.database_url) as opened:
        yield opened


def games(service: TableService) -> list[Game]:
    return [Game.open(service, f"t-{variant.value}", variant) for variant in Variant]


def dump(runner: Runner, name: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of a view's own tables (not its working state), in key order."""
    view = runner.view(name)
    rows = {}
    with runner.database.transaction(write=False) as cursor:
        for table in view.tables:
            found = runner.database.execute(
                cursor, "SELECT * FROM {" + table + "} ORDER BY 1, 2").fetchall()
            rows[table] = [tuple(dict(row).values()) for row in found]
    return rows


def test_live_views_equal_rebuilt_views(service: TableService, store: Store) -> None:
    runner = Runner(store, VIEWS, batch_size=64)
    tables = games(service)
    for _ in range(3):
        for game in tables:
            game.coups(3)
        for name in NAMES:
            runner.catch_up(name)
    live = {name: dump(runner, name) for name in NAMES}
    for name in NAMES:
        assert runner.lag(name).behind == 0
        runner.rebuild(name)
        assert dump(runner, name) == live[name], name
        assert all(live[name].values()), f"{name} wrote no rows"


class Crash(Exception):
    pass


class CrashingRecall(RecallView):
    """The recall view, failing on its `budget`-th event (within a batch)."""

    name = "recall"
    budget: ClassVar[int] = 0

    def observe(self, folded: Folded[RecallMemo], event: Any, before: Before | None) -> None:
        type(self).budget -= 1
        if type(self).budget < 0:
            raise Crash
        super().observe(folded, event, before)


def test_crash_mid_batch_resumes_without_duplicates_or_gaps(service: TableService,
                                                            store: Store) -> None:
    tables = games(service)[:2]
    for game in tables:
        game.coups(4)
    crashing = Runner(store, [CrashingRecall], batch_size=40)
    seen = [n.id for n in store.recorder.select_notifications(
        start=1, limit=100_000, topics=RecallView.topics)]  # the table events, not auctions'
    applied = len(seen) * 2 // 3 | 1
    CrashingRecall.budget = applied  # event applied + 1 fails, inside batch applied // 40 + 1
    with pytest.raises(ProjectionFailed) as failed:
        crashing.catch_up("recall")
    assert isinstance(failed.value.__cause__, Crash)
    # the batches before the failing one are committed, nothing of the failing one is
    assert crashing.lag("recall").position == seen[applied // 40 * 40 - 1]
    for game in tables:
        game.coups(2)
    runner = Runner(store, VIEWS, batch_size=100)
    runner.catch_up("recall")  # a twice-applied event would fail the aggregate's version check
    resumed = dump(runner, "recall")
    runner.rebuild("recall")
    assert dump(runner, "recall") == resumed
    coups = recall(store.database, tables[0].table_id, 100)
    assert [r.coup for r in coups] == list(range(1, 7))


KILLED_RUNNER = """
import sys, time
from infra.store.opening import open_store
from projections.recall import RecallView
from projections.runner import Runner

class Stuck(RecallView):
    name = "recall"
    seen = 0

    def observe(self, folded, event, before):
        Stuck.seen += 1
        if Stuck.seen == int(sys.argv[2]):
            print("stuck", flush=True)
            time.sleep(120)
        super().observe(folded, event, before)

with open_store(sys.argv[1], create=False) as store:
    Runner(store, [Stuck], batch_size=40).catch_up("recall")
"""


def test_runner_killed_mid_batch_resumes(service: TableService, store: Store) -> None:
    tables = games(service)[:2]
    for game in tables:
        game.coups(3)
    seen = [n.id for n in store.recorder.select_notifications(
        start=1, limit=100_000, topics=RecallView.topics)]
    stuck_at = len(seen) // 2 | 1  # inside a batch of 40: the batches before it are committed
    assert stuck_at > 40
    child = subprocess.Popen([sys.executable, "-c", KILLED_RUNNER, service.database_url,
                              str(stuck_at)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "stuck\n"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    runner = Runner(store, VIEWS, batch_size=40)
    assert runner.lag("recall").position == seen[(stuck_at - 1) // 40 * 40 - 1]
    runner.catch_up("recall")
    resumed = dump(runner, "recall")
    runner.rebuild("recall")
    assert dump(runner, "recall") == resumed


def test_concurrent_runners_take_turns(service: TableService, store: Store,
                                       database_url: str) -> None:
    for game in games(service)[:2]:
        game.coups(3)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with open_store(database_url, create=False) as own:
                Runner(own, VIEWS, batch_size=50).catch_up("standings")
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    runner = Runner(store, VIEWS)
    together = dump(runner, "standings")
    runner.rebuild("standings")
    assert dump(runner, "standings") == together


def test_one_event_entry_point_refuses_a_replay(service: TableService, store: Store) -> None:
    game = Game.open(service, "single", Variant.PUNTO_BANCO)
    runner = Runner(store, VIEWS)
    view = runner.view("rotation")
    notification = store.recorder.select_notifications(start=1, limit=1)[0]
    event = store.mapper.to_domain_event(notification)
    view.process_event(event, Tracking("rotation", notification.id))
    with pytest.raises(IntegrityError):
        view.process_event(event, Tracking("rotation", notification.id))
    assert runner.lag("rotation").position == notification.id
    assert runner.tracking.max_tracking_id("rotation") == notification.id
    runner.tracking.wait("rotation", notification.id, timeout=0.1)
    with pytest.raises(IntegrityError):
        runner.tracking.insert_tracking(Tracking("rotation", notification.id))
    found = rotation(store.database, game.table_id)
    assert found is not None and found.seated == []


def test_recall_matches_the_engines_replay(service: TableService, store: Store) -> None:
    tables = games(service)
    for game in tables:
        game.coups(5)
    runner = Runner(store, VIEWS)
    runner.catch_up("recall")
    for game in tables:
        coups = recall(store.database, game.table_id, 3)
        assert [r.coup for r in coups] == [3, 4, 5]
        for record in coups:
            settled = service.repository.get(game.table_id, version=record.closed_version - 1)
            closed = service.repository.get(game.table_id, version=record.closed_version)
            s = settled.state
            assert s.phase is Phase.SETTLED and s.coup is not None
            assert s.settlement is not None
            hands: dict[str, list[str]] = {}
            for card in record.cards:
                hands.setdefault(card.side, []).append(card.card)
            assert hands == {side.value: list(cards) for side, cards in s.coup.hands.items()}
            dealt = s.shoe.dealt if s.shoe else []
            positions = [card.position for card in record.cards]
            assert [dealt[p - len(s.shoe.burned)] for p in positions] == [  # type: ignore[union-attr]
                card.card for card in record.cards]
            assert [(p.player, p.staked, p.net, p.commission) for p in record.payouts] == [
                (p.player, p.staked, p.net, p.commission) for p in s.settlement.payouts]
            assert record.commission == s.settlement.commission
            assert record.outcomes == {k.value: v.value for k, v in s.coup.outcomes.items()}  # type: ignore[union-attr]
            assert {p: line.after for p, line in record.chips.items()} == {
                seat.player: seat.chips for seat in closed.state.seats}
            assert record.bank_after == closed.state.bank or closed.state.banker is None
            assert [step.version for step in record.steps] == list(
                range(record.steps[0].version, record.closed_version + 1))


def notification_of(store: Store, table_id: UUID, version: int) -> int:
    with store.database.transaction(write=False) as cursor:
        row = store.database.execute(
            cursor, "SELECT {nid} AS nid FROM {stored_events}"
            " WHERE originator_id = ? AND originator_version = ?",
            (store.database.to_db_id(table_id), version)).fetchone()
    return int(row["nid"])


def test_rotation_after_a_banker_loses_shows_the_next_player(service: TableService,
                                                             store: Store) -> None:
    game = Game.open(service, "rotating", Variant.CHEMIN_DE_FER, players=5)
    runner = Runner(store, VIEWS)
    seated = game.state.seated()
    checked = 0
    while checked < 2:
        before = game.state
        game.step()
        after = game.state
        if before.banker is not None and after.banker is None and before.coup is not None:
            runner.catch_up("rotation")
            view = rotation(store.database, game.table_id)
            assert view is not None and view.banker is None
            i = seated.index(before.banker)
            assert view.offered_to == seated[(i + 1) % len(seated)]
            assert view.order == seated[i + 1:] + seated[:i + 1]  # the loser comes last
            checked += 1


def test_passed_hand_returns_to_the_player_who_would_have_had_it(
        service: TableService, store: Store) -> None:
    game = Game.open(service, "passing", Variant.CHEMIN_DE_FER, players=4)
    runner = Runner(store, VIEWS)
    while not (game.state.phase is Phase.BETTING and game.state.banker and
               not game.state.stakes and not game.state.banco_calls):
        game.step()
    banker = game.state.banker
    assert banker is not None
    order, bank = game.state.rotation_after(banker), game.state.bank
    game.command(c.RetireBank(command_id="retire", actor=banker, player=banker))
    game.command(c.DeclineBank(command_id="decline", actor=order[0], player=order[0]))
    taker = order[1]
    game.command(c.AwardBank(command_id="take", actor=taker, player=taker,
                             amount=bank))
    runner.catch_up("rotation")
    view = rotation(store.database, game.table_id)
    assert view is not None and view.banker == taker
    assert view.passed_hand is not None
    assert (view.passed_hand.by, view.passed_hand.returns_to) == (banker, order[0])
    while game.state.banker == taker:
        game.step()
    runner.catch_up("rotation")
    view = rotation(store.database, game.table_id)
    assert view is not None and view.passed_hand is None
    assert game.state.banker is None and view.offered_to == order[0]
    runner.catch_up("auctions")
    held = banks_held(store.database, table_id=str(game.table_id))
    assert [(b.player, b.ended, b.final_bank) for b in held[-2:]] == [
        (banker, "retired", bank), (taker, "lost", held[-1].final_bank)]
    assert (held[-1].amount, held[-1].how, held[-1].coups) == (bank, "taken",
                                                               held[-1].coups or 1)


def test_lost_banco_gives_the_banco_suivi(service: TableService, store: Store) -> None:
    game = Game.open(service, "banco", Variant.CHEMIN_DE_FER, players=4)
    runner = Runner(store, VIEWS)
    for attempt in range(40):
        while not (game.state.phase is Phase.BETTING and not game.state.stakes
                   and not game.state.banco_calls):
            game.step()
        state = game.state
        caller = next(p for p in state.rotation_after(state.banker or "")
                      if state.seat_of(p).chips >= state.bank)
        game.command(c.CallBanco(command_id=f"banco-{attempt}", actor=caller, player=caller))
        game.command(c.CloseBetting(command_id=f"close-{attempt}"))
        game.coups(0)
        runner.catch_up("rotation")
        runner.catch_up("recall")
        last = recall(store.database, game.table_id, 1)[0]
        view = rotation(store.database, game.table_id)
        assert view is not None and last.bancos == [caller]
        if last.outcomes[Side.PUNTER.value] == Outcome.BANKER.value:
            assert view.banco_suivi == caller == game.state.banco_suivi
            return
        assert view.banco_suivi is None
    pytest.fail("the bank never beat a banco in 40 coups")


def test_standings_and_banks_agree_with_the_tables(service: TableService,
                                                   store: Store) -> None:
    tables = games(service)
    outsider = Game.open(service, "friendly", Variant.PUNTO_BANCO, tournament=None)
    for game in [*tables, outsider]:
        game.coups(4)
    runner = Runner(store, VIEWS)
    runner.catch_up("standings")
    runner.catch_up("auctions")
    expected: dict[str, int] = {}
    for game in tables:
        s = game.state
        per_table = standings(store.database, table_id=game.table_id)
        own = {seat.player: seat.chips + (s.bank if seat.player == s.banker else 0)
               for seat in s.seats}
        assert {row.player: row.chips for row in per_table} == own
        for player, chips in own.items():
            expected[player] = expected.get(player, 0) + chips
    rows = standings(store.database, tournament=TOURNAMENT)
    assert {row.player: row.chips for row in rows} == expected
    assert [row.chips for row in rows] == sorted(expected.values(), reverse=True)
    for row in rows:
        assert row.rank == 1 + sum(1 for chips in expected.values() if chips > row.chips)
        assert row.coups > 0 and len(row.tables) == len(tables)
    banks = banks_held(store.database)
    for game in tables:
        s = game.state
        mine = [b for b in banks if b.table_id == str(game.table_id)]
        holding = [b for b in mine if b.ended is None]
        if s.banker is None:
            assert holding == []
        else:
            assert [(b.player, b.number) for b in holding] == [(s.banker, len(mine))]
        if game.state.variant is Variant.PUNTO_BANCO:
            assert mine == []
        for bank in mine:
            if bank.how != "auction":
                assert bank.auction is None
                continue
            auction = bank.auction
            assert auction is not None and auction.winner is not None
            assert (auction.winner.player, auction.winner.amount) == (bank.player, bank.amount)
            assert auction.bids[-1] == auction.winner
            assert [b.amount for b in auction.bids] == sorted({b.amount for b in auction.bids})
    assert any(bank.auction for bank in banks)


def test_cli_reads_up_to_date_views(service: TableService, database_url: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    game = Game.open(service, "cli", Variant.CHEMIN_DE_FER)
    game.coups(3)
    db = ["--database", database_url]
    assert main(["recall", "cli", "--last", "2", "--json", *db]) == 0
    coups = json.loads(capsys.readouterr().out)
    assert [coup["coup"] for coup in coups] == [2, 3]
    assert main(["rotation", str(game.table_id), "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out)["banker"] == game.state.banker
    assert main(["standings", TOURNAMENT, "--json", *db]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4
    assert main(["auctions", "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out)[0]["table"] == "cli"
    game.coups(1)
    assert main(["projections", "status", "--json", *db]) == 0
    lags = json.loads(capsys.readouterr().out)
    assert {lag["projection"] for lag in lags} == set(NAMES)
    assert all(lag["behind"] > 0 for lag in lags)
    assert main(["projections", "run", *db]) == 0
    assert main(["projections", "status", "--json", *db]) == 0
    assert all(lag["behind"] == 0 for lag in json.loads(capsys.readouterr().out))
    assert main(["projections", "rebuild", "--json", *db]) == 0
    rebuilt = json.loads(capsys.readouterr().out)
    assert set(rebuilt) == set(NAMES)
    assert all(figures["events"] > 0 for figures in rebuilt.values())
    assert main(["recall", "cli", *db]) == 0
    assert "coup 4" in capsys.readouterr().out
    assert main(["rotation", "cli", *db]) == 0
    assert "passes next to" in capsys.readouterr().out
    assert main(["standings", "--table", "cli", *db]) == 0
    assert "player-1" in capsys.readouterr().out
    assert main(["auctions", "--table", "cli", *db]) == 0
    assert "auction (minimum" in capsys.readouterr().out
    assert main(["recall", "nowhere", *db]) == 1
    assert main(["recall", "cli", "--database", "sqlite:////nonexistent/none.db"]) == 2
    capsys.readouterr()
    with (open_store(database_url) as store,  # a view whose working state was damaged
          store.database.transaction(write=True) as cursor):
        store.database.execute(cursor, "UPDATE {view_recall_tables} SET memo = ?", (b"\xc1",))
    game.coups(1)
    assert main(["recall", "cli", *db]) == 2
    assert "recall cannot apply" in capsys.readouterr().err
    assert main(["projections", "rebuild", "recall", "--json", *db]) == 0
    assert main(["recall", "cli", "--json", *db]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])[-1]["coup"] == 5


def test_views_run_together_equal_each_run_alone(service: TableService, store: Store) -> None:
    runner = Runner(store, VIEWS, batch_size=64)
    tables = games(service)
    for _ in range(2):
        for game in tables:
            game.coups(3)
        applied, stopped = runner.catch_up_together(NAMES)
        assert stopped == {} and all(applied.values()), applied
    together = {name: dump(runner, name) for name in NAMES}
    for name in NAMES:
        assert runner.lag(name).behind == 0
        runner.rebuild(name)
        assert dump(runner, name) == together[name], name


def test_the_views_are_at_the_heads_when_every_one_of_them_is(service: TableService,
                                                               store: Store) -> None:
    runner = Runner(store, VIEWS, batch_size=64)
    games(service)[0].coups(1)
    heads = runner.heads()
    assert not runner.at_heads(NAMES, heads)
    runner.catch_up("recall")
    assert runner.at_heads(["recall"], heads) and not runner.at_heads(NAMES, heads)
    runner.catch_up_together(NAMES)
    assert runner.at_heads(NAMES, heads)
    assert runner.tracking.notification_ids(["recall", "no-such-view"]) == {
        "recall": runner.head(), "no-such-view": 0}


class PoisonedRecall(RecallView):
    """The recall view, unable to apply one event (its table and version)."""

    name = "recall"
    poison: ClassVar[tuple[UUID, int] | None] = None

    def observe(self, folded: Folded[RecallMemo], event: Any, before: Before | None) -> None:
        if (event.originator_id, event.originator_version) == type(self).poison:
            raise Crash
        super().observe(folded, event, before)


def test_a_view_failing_in_a_shared_batch_stops_alone(service: TableService,
                                                      store: Store) -> None:
    tables = games(service)[:2]
    for game in tables:
        game.coups(4)
    seen = store.recorder.select_notifications(start=1, limit=100_000,
                                               topics=RecallView.topics)
    poisoned = seen[len(seen) // 2]
    PoisonedRecall.poison = (poisoned.originator_id, poisoned.originator_version)
    runner = Runner(store, [PoisonedRecall, *(v for v in VIEWS if v.name != "recall")],
                    batch_size=40)
    applied, stopped = runner.catch_up_together(NAMES)
    assert list(stopped) == ["recall"] and "projection recall stopped at event" in str(
        stopped["recall"])
    assert isinstance(stopped["recall"].__cause__, Crash)
    assert runner.lag("recall").position == seen[len(seen) // 2 - 1].id
    assert runner.lag("recall").stopped_at == poisoned.id
    for name in NAMES:
        if name != "recall":
            assert runner.lag(name).behind == 0, name
            assert applied[name] > 0, name
    PoisonedRecall.poison = None  # the cause fixed: the next run passes the event
    applied, stopped = runner.catch_up_together(NAMES)
    assert stopped == {} and runner.lag("recall").behind == 0
    assert runner.lag("recall").stopped_at is None
    resumed = dump(runner, "recall")
    runner.rebuild("recall")
    assert dump(runner, "recall") == resumed
