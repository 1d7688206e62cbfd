"""The outbox: a command's follow-up effects are written in its own transaction and
dispatched by the service whichever adapter sent it; a broker outage delays them, never the
command."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import msgspec
import pytest
import structlog
from redis import Redis

import infra.store.outbox
from domain.bots import next_command
from domain.errors import OutOfTurn
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from infra.services.tables import TableService, seeds_from
from infra.store import migrations
from infra.store.live_push import RedisWake, channel_of
from infra.store.outbox import Deadline, Dispatcher, Effect, Wake
from tests.integration.test_workers import at_the_punters_decision
from workers.logging import trace_headers

KEY = bytes(range(32))


def a_service(url: str) -> TableService:
    service = TableService(url=url, secret_key=KEY)
    service.seed_source = seeds_from(b"outbox")
    return service


def outbox(service: TableService, *, pending: bool = False) -> list[dict[str, Any]]:
    database = service.database
    where = " WHERE NOT dispatched" if pending else ""
    with database.transaction(write=False) as cursor:
        rows = database.execute(cursor, "SELECT command_id, kind, effect, dispatched FROM"
                                " {outbox}" + where + " ORDER BY id").fetchall()
    return [{"command_id": r["command_id"], "kind": r["kind"], "dispatched": bool(r["dispatched"]),
             "effect": msgspec.msgpack.decode(bytes(r["effect"]), type=Effect)} for r in rows]


def a_table(service: TableService, name: str, **overrides: Any) -> uuid.UUID:
    settings = TableSettings.default(Variant.PUNTO_BANCO, **overrides)
    table_id = service.open_table(name, settings, command_id=f"{name}:open").table_id
    service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat", player="p0", chips=100))
    return table_id


def test_effects_are_recorded_with_their_command_and_a_refusal_records_none(
        database_url: str) -> None:
    with a_service(database_url) as service:
        table_id = a_table(service, "fx")
        seated = service.recorded_command("fx:seat")
        assert seated is not None
        [row] = outbox(service)
        assert (row["command_id"], row["kind"]) == ("fx:seat", "wake")
        assert row["effect"] == Wake(table_id, seated.last_version)
        assert not row["dispatched"]  # no handler in this process: left for one that has
        with pytest.raises(OutOfTurn):
            service.execute(table_id, c.DealCard(command_id="fx:early"))
        assert len(outbox(service)) == 1


def test_a_deadline_is_recorded_when_a_timed_table_awaits_a_decision(
        sqlite_url: str, tmp_path: Any) -> None:
    with a_service(sqlite_url) as service:
        sent: list[Deadline] = []
        service.effects.on(Deadline, sent.append)
        at_the_punters_decision(service)
        untimed = [r for r in outbox(service) if r["kind"] == "deadline"]
        assert untimed == [] and sent == []  # no time limit: no deadline
    with a_service(f"sqlite:///{tmp_path}/timed.db") as service:
        sent = []
        service.effects.on(Deadline, sent.append)
        with_limit = TableSettings.default(Variant.CHEMIN_DE_FER, decision_seconds=30)
        table_id = service.open_table("deadline", with_limit, command_id="o").table_id
        for i in range(3):
            service.execute(table_id, c.SeatPlayer(command_id=f"s{i}", player=f"p{i}",
                                                   chips=1000))
        at_the_punters_decision_on(service, table_id)
        state = service.state(table_id)
        assert sent[-1] == Deadline(table_id, state.coup_number, state.coup.to_act(), 30)  # type: ignore[union-attr,arg-type]
        deadlines = [r for r in outbox(service) if r["kind"] == "deadline"]
        assert deadlines and all(r["dispatched"] for r in deadlines)


def at_the_punters_decision_on(service: TableService, table_id: uuid.UUID) -> None:
    rng = random.Random(5)
    for n in range(1000):
        state = service.state(table_id)
        if state.coup is not None and state.coup.to_act() is not None:
            return
        service.execute(table_id, next_command(state, rng, lambda label, n=n: f"b{n}:{label}"))
    raise AssertionError("no decision reached")


def test_a_broker_outage_delays_the_wake_up_but_never_fails_the_command(
        postgres_url: str, redis_url: str) -> None:
    with a_service(postgres_url) as service:
        table_id = a_table(service, f"outage-{uuid.uuid4().hex[:8]}")
        subscriber = Redis.from_url(redis_url).pubsub()
        subscriber.subscribe(channel_of(table_id))
        service.effects.on(Wake, RedisWake("redis://127.0.0.1:1/0"))  # nothing listens there
        recorded = service.execute(table_id, c.ShuffleShoe(command_id="during-outage"))
        assert [e["type"] for e in recorded.events] == ["ShoeShuffled"]
        [pending] = outbox(service, pending=True)[-1:]
        assert pending["command_id"] == "during-outage"

        service.effects.on(Wake, RedisWake(redis_url))  # the broker is back
        cut = service.execute(table_id, c.CutShoe(command_id="after", actor="p0", player="p0",
                                                  position=30))
        assert outbox(service, pending=True) == []  # the late one was relayed first
        versions = []
        deadline = time.monotonic() + 10
        while len(versions) < 2 and time.monotonic() < deadline:
            message = subscriber.get_message(timeout=1)
            if message and message["type"] == "message":
                versions.append(msgspec.json.decode(message["data"])["version"])
        subscriber.close()
        # the shuffle's (during the outage; it says all the seat's wake-up said), the cut's
        assert versions == [recorded.version, cut.version]
        assert outbox(service)[0]["command_id"].endswith(":seat")
        assert all(row["dispatched"] for row in outbox(service))


def test_an_effect_is_sent_under_its_command_id_and_a_relayed_one_without_the_request_id(
        sqlite_url: str) -> None:
    """The trail a task's headers carry (`workers.logging.trace_headers`): the command that
    recorded the effect, and the request id only of the request that sent that command."""
    with a_service(sqlite_url) as service:
        table_id = a_table(service, "trail")
        sent: list[dict[str, str]] = []
        down = [True]

        def wake(effect: Wake) -> None:
            if down[0]:
                raise ConnectionError("the broker is down")
            sent.append(trace_headers(table=effect.table_id))

        service.effects.on(Wake, wake)
        with structlog.contextvars.bound_contextvars(request_id="first"):
            service.execute(table_id, c.ShuffleShoe(command_id="shuffled"))
        down[0] = False
        with structlog.contextvars.bound_contextvars(request_id="second"):
            service.execute(table_id, c.CutShoe(command_id="cut", actor="p0", player="p0",
                                                position=30))
        assert sent == [{"command_id": "shuffled", "table": str(table_id)},  # relayed
                        {"command_id": "cut", "table": str(table_id), "request_id": "second"}]


class Clock:
    """The dispatcher's clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_dispatched_effects_expire_after_the_retention_and_pending_ones_never(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(infra.store.outbox, "EXPIRY_BATCH", 1)  # each effect in its own batch
    clock = Clock()
    with a_service(database_url) as service:
        service.effects = Dispatcher(service.database, retention=3600.0, clock=clock)
        woken: list[Wake] = []
        service.effects.on(Wake, woken.append)
        table_id = a_table(service, "expiry")  # the seat's wake-up, dispatched at t0

        def broken(_: Wake) -> None:
            raise ConnectionError("broker down")

        service.effects.on(Wake, broken)
        service.execute(table_id, c.ShuffleShoe(command_id="pending"))
        assert [(r["command_id"], r["dispatched"]) for r in outbox(service)] == [
            ("expiry:seat", True), ("pending", False)]

        clock.now += 3599
        assert service.effects.expire() == 0  # within the retention
        clock.now += 2
        assert service.effects.expire() == 1
        assert [(r["command_id"], r["dispatched"]) for r in outbox(service)] == [
            ("pending", False)]  # pending: kept, however old
        clock.now += 10 * 3600
        assert service.effects.expire() == 0
        assert [r["command_id"] for r in outbox(service, pending=True)] == ["pending"]

        service.effects.on(Wake, woken.append)  # the broker is back: the dispatch relays it
        service.execute(table_id, c.CutShoe(command_id="cut", actor="p0", player="p0",
                                            position=30))
        assert [(r["command_id"], r["dispatched"]) for r in outbox(service)] == [
            ("pending", True), ("cut", True)]
        clock.now += 3601  # the next dispatch, an hour on, expires what it dispatched before
        service.execute(table_id, c.BurnCard(command_id="burn"))
        assert [(r["command_id"], r["dispatched"]) for r in outbox(service)] == [("burn", True)]


def test_an_outbox_made_before_expiry_gets_the_dispatch_time_and_its_old_rows_expire(
        database_url: str) -> None:
    clock = Clock()
    with a_service(database_url) as service:
        a_table(service, "legacy")
        database = service.database
        with database.transaction(write=True) as cursor:  # the outbox as it was made before,
            database.execute(cursor, "DROP INDEX {outbox_dispatched}")
            database.execute(cursor, "ALTER TABLE {outbox} DROP COLUMN dispatched_at")
            database.execute(cursor, "UPDATE {outbox} SET dispatched = ?", (True,))
            for table in ("schema_version", "api_token_generation", "partition_homes"):
                database.execute(cursor, "DROP TABLE {" + table + "}")
        migrations.upgrade(database)
        dispatcher = Dispatcher(database, retention=3600.0, clock=clock)
        assert dispatcher.expire() == 1  # dispatched before the time was kept: expired
        assert outbox(service) == []
