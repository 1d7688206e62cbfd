"""The store, on SQLite and on PostgreSQL: typed round trips, snapshots, command ids, races.

The toy aggregate below carries a field of each kind the mapper must type back: a StrEnum,
a msgspec.Struct, a tuple of Structs, a dict, an optional UUID, an optional datetime.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import msgspec
import pytest
from eventsourcing.domain import Aggregate, event
from eventsourcing.persistence import IntegrityError, StoredEvent, Tracking
from eventsourcing.utils import get_topic

from infra.audit.verify import verify
from infra.errors import DuplicateCommand, RecordedCommand, StoreError, UnsupportedDatabaseURL
from infra.services.application import SabotApplication, open_service
from infra.settings import DEFAULT_DATABASE_URL, load_settings
from infra.store.mapper import MsgspecMapper, UnmappableState
from infra.store.opening import open_store
from infra.store.recorders import (
    ChainedPostgresApplicationRecorder,
    ChainedSQLiteApplicationRecorder,
)
from infra.store.urls import store_env


class Suit(StrEnum):
    HEARTS = "h"
    SPADES = "s"


class Card(msgspec.Struct, frozen=True):
    rank: str
    suit: Suit


class Toy(Aggregate):
    name: str
    suit: Suit
    cards: tuple[Card, ...]
    stakes: dict[str, int]
    owner: UUID | None
    closed_at: datetime | None

    @event("Created")
    def __init__(self, name: str, suit: Suit) -> None:
        self.name = name
        self.suit = suit
        self.cards = ()
        self.stakes = {}
        self.owner = None
        self.closed_at = None

    @event("Dealt")
    def deal(self, card: Card) -> None:
        self.cards = (*self.cards, card)

    @event("Staked")
    def stake(self, stakes: dict[str, int], owner: UUID | None) -> None:
        self.stakes = {**self.stakes, **stakes}
        self.owner = owner

    @event("Closed")
    def close(self, at: datetime) -> None:
        self.closed_at = at


class Sloppy(Aggregate):
    """An aggregate that forgot to annotate an attribute: its snapshots must be refused."""

    @event("Created")
    def __init__(self) -> None:
        self.count = 0


class Versioned(Aggregate):
    """Version 2 added `suit`; version 1 states are upcast, then typed."""

    class_version = 2
    name: str
    suit: Suit

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        state["name"] += "!"  # not idempotent: upcasting twice would show
        state["suit"] = "s"

    class Renamed(Aggregate.Event):
        class_version = 2
        name: str
        suit: Suit

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["suit"] = "h"

    @event("Created")
    def __init__(self, name: str) -> None:
        self.name = name
        self.suit = Suit.SPADES

    @event(Renamed)
    def rename(self, name: str, suit: Suit) -> None:
        self.name = name
        self.suit = suit


class ToyApp(SabotApplication):
    pass


class SnapshottingToyApp(SabotApplication):
    snapshotting_intervals = {Toy: 2}  # noqa: RUF012 - eventsourcing's declared ClassVar


@pytest.fixture
def app(database_url: str) -> Iterator[ToyApp]:
    application = ToyApp(url=database_url)
    yield application
    application.close()


def a_toy() -> Toy:
    toy = Toy("first", Suit.HEARTS)
    toy.deal(Card("9", Suit.SPADES))
    toy.stake({"anna": 100, "bob": 5}, uuid4())
    toy.close(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    return toy


def a_toy_saved_twice(app: SabotApplication) -> Toy:
    """`a_toy()` saved at version 2, then at 4: a snapshot at each, every 2 events."""
    toy = Toy("first", Suit.HEARTS)
    toy.deal(Card("9", Suit.SPADES))
    app.save(toy)
    toy.stake({"anna": 100, "bob": 5}, uuid4())
    toy.close(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    app.save(toy)
    return toy


def assert_typed_like(loaded: Toy, original: Toy) -> None:
    assert loaded.suit is Suit.HEARTS
    assert loaded.cards == original.cards
    assert isinstance(loaded.cards, tuple)
    assert isinstance(loaded.cards[0], Card)
    assert loaded.cards[0].suit is Suit.SPADES
    assert loaded.stakes == {"anna": 100, "bob": 5}
    assert isinstance(loaded.owner, UUID)
    assert loaded.owner == original.owner
    assert loaded.closed_at == original.closed_at
    assert isinstance(loaded.created_on, datetime)
    assert loaded.created_on == original.created_on
    assert loaded.version == original.version


def test_events_round_trip_typed(database_url: str) -> None:
    toy = a_toy()
    with ToyApp(url=database_url) as writer:
        writer.save(toy, command_id="c-1")
    with ToyApp(url=database_url) as reader:
        assert_typed_like(reader.repository.get(toy.id), toy)
        events = list(reader.events.get(toy.id))
    assert [type(e).__name__ for e in events] == ["Created", "Dealt", "Staked", "Closed"]
    dealt, staked = events[1], events[2]
    assert isinstance(dealt.card, Card)  # type: ignore[attr-defined]
    assert isinstance(staked.owner, UUID)  # type: ignore[attr-defined]
    assert events[0].timestamp.tzinfo is not None  # type: ignore[attr-defined]


def test_state_is_messagepack(app: ToyApp) -> None:
    app.save(a_toy())
    notification = app.recorder.select_notifications(start=1, limit=1)[0]
    state = msgspec.msgpack.decode(notification.state)
    assert state["name"] == "first"
    assert state["suit"] == "h"


def test_snapshot_round_trip(database_url: str) -> None:
    with SnapshottingToyApp(url=database_url) as writer:
        toy = a_toy_saved_twice(writer)
        assert writer.snapshots is not None
        snapshots = list(writer.snapshots.get(toy.id))
    assert [s.originator_version for s in snapshots] == [2, 4]
    state: dict[str, Any] = snapshots[-1].state  # type: ignore[attr-defined]
    assert state["suit"] is Suit.HEARTS
    assert isinstance(state["cards"][0], Card)
    assert isinstance(state["owner"], UUID)
    assert isinstance(state["_modified_on"], datetime)
    with SnapshottingToyApp(url=database_url) as reader:
        assert_typed_like(snapshots[-1].mutate(None), toy)  # type: ignore[attr-defined]
        loaded = reader.repository.get(toy.id)
        assert_typed_like(loaded, toy)
        loaded.deal(Card("A", Suit.HEARTS))
        reader.save(loaded)  # version 5: no snapshot, so loading is snapshot 4 + event 5
    with SnapshottingToyApp(url=database_url) as again:
        final = again.repository.get(toy.id)
    assert final.version == 5
    assert final.cards == (Card("9", Suit.SPADES), Card("A", Suit.HEARTS))
    assert final.suit is Suit.HEARTS


class EveryThreeToyApp(SabotApplication):
    snapshotting_intervals = {Toy: 3}  # noqa: RUF012 - eventsourcing's declared ClassVar


def test_a_save_past_a_multiple_of_the_interval_snapshots_the_aggregate_as_saved(
        database_url: str) -> None:
    toy = a_toy()  # versions 1 to 4 in one save, past the multiple 3
    with EveryThreeToyApp(url=database_url) as writer:
        writer.save(toy)
        assert writer.snapshots is not None
        snapshots = list(writer.snapshots.get(toy.id))
    assert [s.originator_version for s in snapshots] == [4]  # not 3: nothing read back
    assert_typed_like(snapshots[0].mutate(None), toy)  # type: ignore[attr-defined]


def test_snapshots_are_not_chained(database_url: str) -> None:
    toy = a_toy()
    with SnapshottingToyApp(url=database_url) as writer:
        writer.save(toy)
    report = verify(database_url)
    assert report.ok
    assert report.events == 4


def test_unannotated_aggregate_attribute_is_refused_at_snapshot() -> None:
    sloppy = Sloppy()
    snapshot = Sloppy.Snapshot.take(sloppy)
    with pytest.raises(UnmappableState, match="count"):
        MsgspecMapper().to_stored_event(snapshot)


def test_states_of_an_older_class_version_are_upcast_then_typed() -> None:
    mapper = MsgspecMapper()
    oid, now = uuid4(), datetime.now(UTC)
    old_event = StoredEvent(
        originator_id=oid,
        originator_version=2,
        topic=get_topic(Versioned.Renamed),
        state=msgspec.msgpack.encode({"timestamp": now, "name": "old"}),
    )
    renamed: Any = mapper.to_domain_event(old_event)
    assert (renamed.name, renamed.suit, renamed.timestamp) == ("old", Suit.HEARTS, now)
    assert "class_version" not in vars(renamed)

    current = Versioned("new")
    current.rename(name="newer", suit=Suit.HEARTS)
    for e in current.collect_events():
        assert vars(mapper.to_domain_event(mapper.to_stored_event(e))) == vars(e)

    old_state = {"_created_on": now, "_modified_on": now, "name": "old"}
    old_snapshot = StoredEvent(
        originator_id=oid,
        originator_version=2,
        topic=get_topic(Versioned.Snapshot),
        state=msgspec.msgpack.encode(
            {"timestamp": now, "topic": get_topic(Versioned), "state": old_state}
        ),
    )
    aggregate: Any = mapper.to_domain_event(old_snapshot).mutate(None)  # type: ignore[attr-defined]
    assert (aggregate.name, aggregate.suit, aggregate.version) == ("old!", Suit.SPADES, 2)


def test_duplicate_command_raises_and_writes_nothing(app: ToyApp) -> None:
    toy = Toy("first", Suit.HEARTS)
    toy.deal(Card("9", Suit.SPADES))
    app.save(toy, command_id="open-1")
    assert app.recorded_command("open-1") == RecordedCommand(toy.id, 1, 2)
    assert app.recorded_command("never") is None
    before = app.recorder.max_notification_id()

    again = app.repository.get(toy.id)
    again.deal(Card("K", Suit.HEARTS))
    with pytest.raises(DuplicateCommand) as raised:
        app.save(again, command_id="open-1")

    assert raised.value.command_id == "open-1"
    assert raised.value.recorded == (toy.id, 1, 2)
    assert app.recorder.max_notification_id() == before
    assert app.repository.get(toy.id).version == 2
    assert verify(app.database_url).events == 2


def test_version_conflict_is_integrity_error_and_logs_no_command(database_url: str) -> None:
    with ToyApp(url=database_url) as first, ToyApp(url=database_url) as second:
        toy = Toy("first", Suit.HEARTS)
        first.save(toy, command_id="open")
        mine, theirs = first.repository.get(toy.id), second.repository.get(toy.id)
        mine.deal(Card("9", Suit.SPADES))
        theirs.deal(Card("K", Suit.HEARTS))
        first.save(mine, command_id="mine")
        with pytest.raises(IntegrityError):
            second.save(theirs, command_id="theirs")
        assert second.recorded_command("theirs") is None
        assert second.repository.get(toy.id).cards == (Card("9", Suit.SPADES),)
    assert verify(database_url).ok


def race(apps: dict[str, ToyApp], toy_id: UUID, round_number: int) -> dict[str, str]:
    """Each app loads the same version, then all save at once: who won, who lost."""
    barrier = threading.Barrier(len(apps))
    outcomes: dict[str, str] = {}

    def write(name: str, app: ToyApp) -> None:
        mine = app.repository.get(toy_id)
        mine.deal(Card(name[0].upper(), Suit.SPADES))
        barrier.wait()
        try:
            app.save(mine, command_id=f"{name}-{round_number}")
            outcomes[name] = "won"
        except IntegrityError:
            outcomes[name] = "lost"

    threads = [threading.Thread(target=write, args=item) for item in apps.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return outcomes


def test_concurrent_writers_exactly_one_wins(database_url: str) -> None:
    rounds = 8
    with ToyApp(url=database_url) as first, ToyApp(url=database_url) as second:
        toy = Toy("raced", Suit.HEARTS)
        first.save(toy)
        for round_number in range(rounds):
            outcomes = race({"first": first, "second": second}, toy.id, round_number)
            assert sorted(outcomes.values()) == ["lost", "won"], outcomes
            loser = next(name for name, outcome in outcomes.items() if outcome == "lost")
            assert first.recorded_command(f"{loser}-{round_number}") is None
        assert first.repository.get(toy.id).version == 1 + rounds
    report = verify(database_url)
    assert report.ok, report.first_break
    assert report.events == 1 + rounds


def test_applications_of_one_database_share_one_chain(database_url: str) -> None:
    class Other(SabotApplication):
        pass

    with ToyApp(url=database_url) as toys, Other(url=database_url) as other:
        toys.save(Toy("one", Suit.HEARTS))
        other.save(Toy("two", Suit.SPADES))
        assert isinstance(toys.mapper, MsgspecMapper)
        assert isinstance(
            other.recorder, ChainedSQLiteApplicationRecorder | ChainedPostgresApplicationRecorder
        )
        assert other.recorder.max_notification_id() == 2
    report = verify(database_url)
    assert (report.ok, report.events, report.streams) == (True, 2, 2)


def test_process_recorder_tracks_and_chains(database_url: str) -> None:
    with open_store(database_url) as store:
        recorder = store.factory.process_recorder()
        stored = [store.mapper.to_stored_event(e) for e in a_toy().collect_events()]
        recorder.insert_events(stored, tracking=Tracking("upstream", 5))
        assert recorder.max_tracking_id("upstream") == 5  # type: ignore[attr-defined]
        with pytest.raises(IntegrityError):  # the same upstream position twice
            more = [store.mapper.to_stored_event(e) for e in a_toy().collect_events()]
            recorder.insert_events(more, tracking=Tracking("upstream", 5))
    report = verify(database_url)
    assert (report.ok, report.events) == (True, 4)


@pytest.mark.parametrize(
    "url",
    [
        "mysql://user@host/db",
        "sqlite://relative.db",
        "sqlite:///",
        "sqlite:///x.db?mode=ro",
        "postgresql://postgres:hunter2@127.0.0.1:5432",
        "postgresql://postgres:hunter2@127.0.0.1:5432/test?colour=red",
        "postgresql://postgres@127.0.0.1:port/test",
        "just-a-path.db",
    ],
)
def test_bad_url_is_one_clear_line(url: str) -> None:
    with pytest.raises(UnsupportedDatabaseURL) as raised:
        store_env(url)
    message = str(raised.value)
    assert isinstance(raised.value, StoreError)
    assert "\n" not in message
    assert "hunter2" not in message


def test_open_store_refuses_missing_sqlite_file_when_not_creating(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no SQLite database"):
        open_store(f"sqlite:///{tmp_path}/absent.db", create=False)


def test_memory_url_is_one_private_database_per_application() -> None:
    with ToyApp(url="sqlite:///:memory:") as app:
        toy = a_toy()
        app.save(toy)
        assert app.repository.get(toy.id).version == 4


def test_open_service_uses_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path}/env.db"
    monkeypatch.setenv("SABOT_DATABASE_URL", url)
    with open_service(ToyApp) as app:
        assert app.database_url == url


def test_settings_explicit_arguments_win_over_the_environment(tmp_path: Path) -> None:
    environ = {
        "SABOT_DATABASE_URL": "postgresql://env@host/db",
        "SABOT_BROKER_URL": "redis://env",
        "SABOT_SECRET_KEY": "00" * 32,
        "SABOT_LOG_JSON": "yes",
    }
    from_env = load_settings(environ=environ, home=tmp_path)
    assert from_env.database_url == "postgresql://env@host/db"
    assert from_env.broker_url == "redis://env"
    assert from_env.secret_key == bytes(32)
    assert from_env.log_json is True
    explicit = load_settings(
        database_url="sqlite:///cli.db", log_json=False, environ=environ, home=tmp_path
    )
    assert explicit.database_url == "sqlite:///cli.db"
    assert explicit.log_json is False
    assert "00" * 32 not in repr(explicit)


def test_settings_defaults(tmp_path: Path) -> None:
    settings = load_settings(environ={}, home=tmp_path / ".sabot")
    assert settings.database_url == DEFAULT_DATABASE_URL == "sqlite:///.sabot/sabot.db"
    assert settings.broker_url == ""
    assert settings.log_json is False
    assert len(settings.secret_key) == 32


def test_unreachable_database_is_one_clear_line() -> None:
    url = "postgresql://postgres:hunter2@127.0.0.1:1/test?connect_timeout=1"
    with pytest.raises(StoreError) as raised:
        open_store(url)
    message = str(raised.value)
    assert message.startswith("cannot open postgresql://postgres:***@127.0.0.1:1/test")
    assert "\n" not in message
    assert "hunter2" not in message
