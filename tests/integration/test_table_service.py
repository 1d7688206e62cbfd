"""Tables through the store, on SQLite and PostgreSQL: whole bot games of every variant, replay,
commands applied once, refused commands that write nothing, racing services, physical shoes,
and tampering caught by the chain and by the shoe audit.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest

from domain.bots import next_command, playable
from domain.errors import DomainError, NotFound, OutOfTurn, RuleViolation
from domain.game.cards import Card
from domain.game.coup import Side
from domain.game.payouts import Spot
from domain.game.settings import TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.table.state import CROUPIER, Phase, TableState
from infra.audit.shoes import ShoeAudit
from infra.audit.verify import Problem, verify
from infra.services.tables import Conflict, TableService, seeds_from

SECRET = bytes(range(32))
MASTER = b"sabot-test-tables"
COUPS = 20
# One deck per shoe, so that a short game ends a taille and reveals its seed.
SMALL_SHOE = {"decks": 1}


def a_service(url: str) -> TableService:
    service = TableService(url=url, secret_key=SECRET)
    service.seed_source = seeds_from(MASTER)
    return service


@pytest.fixture
def service(database_url: str) -> Iterator[TableService]:
    svc = a_service(database_url)
    yield svc
    svc.close()


def open_table(service: TableService, name: str, variant: Variant, *, players: int = 4,
               chips: int = 1000, **overrides: Any) -> uuid.UUID:
    settings = TableSettings.default(variant, **overrides)
    table_id = service.open_table(name, settings, command_id=f"{name}:open").table_id
    for i in range(players):
        side = None
        if variant is Variant.DEUX_TABLEAUX:
            side = Side.RIGHT if i % 2 == 0 else Side.LEFT
        service.execute(table_id, c.SeatPlayer(command_id=f"{name}:seat:{i}", player=f"p{i}",
                                               chips=chips, side=side))
    return table_id


def play(service: TableService, table_id: uuid.UUID, coups: int, *, seed: int = 7,
         prefix: str = "bot") -> int:
    """Bots play until `coups` coups are closed (and a finished taille is revealed)."""
    rng = random.Random(seed)
    state = service.state(table_id)
    sent = 0
    while (state.coup_number < coups or state.coup is not None
           or state.phase is Phase.TAILLE_OVER):
        if state.coup is None and not playable(state):
            break
        command = next_command(state, rng, lambda label, n=sent: f"{prefix}:{n}:{label}")
        service.execute(table_id, command)
        sent += 1
        state = service.state(table_id)
    return sent


def stored(service: TableService) -> int:
    return service.recorder.max_notification_id() or 0


def builtins(state: TableState) -> Any:
    return msgspec.to_builtins(state)


def replayed(events: list[Any]) -> Table:
    """The aggregate folded from its events alone: no snapshot, no cache."""
    table: Any = None
    for event in events:
        table = event.mutate(table)
    assert isinstance(table, Table)
    return table


# --- whole games ------------------------------------------------------------------------


@pytest.mark.parametrize("variant", list(Variant))
def test_bot_game_replays_to_the_same_table(database_url: str, variant: Variant) -> None:
    name = f"game-{variant.value}"
    with a_service(database_url) as service:
        table_id = open_table(service, name, variant, **SMALL_SHOE)
        play(service, table_id, COUPS)
        live = service.table(table_id)
        assert live.state.coup_number >= COUPS
        assert live.state.taille >= 2  # a taille ended and its seed was revealed
        events = service.events_of(table_id)
    assert len(events) == live.version > 100

    with a_service(database_url) as fresh:  # a new process: snapshot + later events
        loaded = fresh.table(table_id)
        assert loaded.version == live.version
        assert builtins(loaded.state) == builtins(live.state)
        assert fresh.snapshots is not None
        snapshots = list(fresh.snapshots.get(table_id))
    assert snapshots and snapshots[-1].originator_version % 100 == 0

    from_scratch = replayed(events)  # every event, no snapshot
    assert from_scratch.version == live.version
    assert builtins(from_scratch.state) == builtins(live.state)
    at_snapshot = snapshots[-1].mutate(None)  # type: ignore[attr-defined]
    upto = replayed(events[: snapshots[-1].originator_version])
    assert builtins(at_snapshot.state) == builtins(upto.state)

    report = verify(database_url, extra_checks=[shoes := ShoeAudit()])
    assert report.ok, (report.first_break, report.findings)
    assert report.events == len(events)
    assert len(shoes.result.checked) >= 1
    assert shoes.result.cards > 0


def test_chips_are_conserved_in_a_house_banked_game(service: TableService) -> None:
    table_id = open_table(service, "conserved", Variant.PUNTO_BANCO, **SMALL_SHOE)
    play(service, table_id, 12)
    state = service.state(table_id)
    assert sum(s.chips for s in state.seats) + state.house_result == 4 * 1000


# --- commands applied once --------------------------------------------------------------


def test_a_command_sent_again_records_nothing_and_answers_the_same(
    service: TableService,
) -> None:
    table_id = open_table(service, "once", Variant.PUNTO_BANCO)
    play(service, table_id, 1)
    bet = c.PlaceBet(command_id="bet-once", actor="p0", player="p0", spot=Spot.BANKER,
                     amount=25)
    first = service.execute(table_id, bet)
    assert [e["type"] for e in first.events] == ["BetPlaced"]
    before = stored(service)
    again = service.execute(table_id, bet)
    assert again == first
    # the same id with another body is still the first command's answer
    other = c.PlaceBet(command_id="bet-once", actor="p1", player="p1", spot=Spot.PUNTER,
                       amount=5)
    assert service.execute(table_id, other) == first
    with a_service(service.database_url) as elsewhere:  # another process sees it too
        assert elsewhere.execute(table_id, bet) == first
    assert stored(service) == before
    assert service.state(table_id).bets[-1].amount == 25
    opened = service.open_table("once", TableSettings.default(Variant.PUNTO_BANCO),
                                command_id="once:open")
    assert opened.version == 1 and opened.events[0]["type"] == "Opened"
    assert stored(service) == before


# --- refused commands write nothing -----------------------------------------------------


def refused(service: TableService, table_id: uuid.UUID, command: c.TableCommand,
            error: type[DomainError], rule: str) -> None:
    before = stored(service)
    version = service.table(table_id).version
    with pytest.raises(error) as raised:
        service.execute(table_id, command)
    assert raised.value.rule == rule, raised.value
    assert stored(service) == before
    assert service.table(table_id).version == version
    assert service.recorded_command(command.command_id) is None


def to_phase(service: TableService, table_id: uuid.UUID, phase: Phase,
             prefix: str = "to") -> TableState:
    """Bots move the table on until it reaches `phase`."""
    rng = random.Random(3)
    state = service.state(table_id)
    for n in range(500):
        if state.phase is phase:
            return state
        command = next_command(state, rng, lambda label, n=n: f"{prefix}:{n}:{label}")
        service.execute(table_id, command)
        state = service.state(table_id)
    raise AssertionError(f"the table never reached {phase}")


def test_refused_commands_write_nothing(service: TableService) -> None:
    table_id = open_table(service, "refusals", Variant.PUNTO_BANCO, chips=100)
    refused(service, table_id, c.DealCard(command_id="deal-early"), OutOfTurn, "out-of-turn")
    to_phase(service, table_id, Phase.BETTING)
    refused(service, table_id, c.PlaceBet(command_id="too-much", actor="p0", player="p0",
                                          spot=Spot.PUNTER, amount=101),
            RuleViolation, "chips-short")
    refused(service, table_id, c.PlaceBet(command_id="for-another", actor="p1", player="p0",
                                          spot=Spot.PUNTER, amount=10),
            OutOfTurn, "not-your-stake")
    refused(service, table_id, c.DealCard(command_id="deal-while-betting"), OutOfTurn,
            "out-of-turn")
    refused(service, table_id, c.PayCoup(command_id="pay-nothing"), OutOfTurn, "out-of-turn")
    refused(service, table_id, c.RevealSeed(command_id="reveal-early"), OutOfTurn,
            "out-of-turn")
    refused(service, table_id, c.ShuffleShoe(command_id="reshuffle"), OutOfTurn,
            "out-of-turn")
    refused(service, table_id, c.DealCard(command_id="rng-card", card=Card("Ah")),
            OutOfTurn, "out-of-turn")
    service.execute(table_id, c.PlaceBet(command_id="fine", actor="p0", player="p0",
                                         spot=Spot.PUNTER, amount=10))
    to_phase(service, table_id, Phase.PLAYING)
    refused(service, table_id, c.PlaceBet(command_id="late-bet", actor="p1", player="p1",
                                          spot=Spot.PUNTER, amount=10),
            OutOfTurn, "out-of-turn")
    refused(service, table_id, c.DealCard(command_id="rng-card-2", card=Card("Ah")),
            RuleViolation, "card-given")
    refused(service, table_id, c.SettleCoup(command_id="settle-early"), OutOfTurn,
            "out-of-turn")
    state = to_phase(service, table_id, Phase.SETTLED)
    assert state.settlement is not None
    refused(service, table_id, c.PlaceBet(command_id="bet-settled", actor="p1", player="p1",
                                          spot=Spot.BANKER, amount=10),
            OutOfTurn, "out-of-turn")
    refused(service, table_id, c.SettleCoup(command_id="settle-twice"), OutOfTurn,
            "out-of-turn")
    refused(service, table_id, c.SeatPlayer(command_id="seat-twice", player="p0", chips=5),
            RuleViolation, "already-seated")
    assert verify(service.database_url).ok


def test_entropy_that_is_not_hex_is_refused(service: TableService) -> None:
    """Accepted, it would leave a shoe whose order nobody can compute: no card could come."""
    table_id = open_table(service, "entropy", Variant.PUNTO_BANCO)
    to_phase(service, table_id, Phase.SHUFFLED)
    for n, text in enumerate(("zz", "0g", "ab cd", "\u00e9\u00e9")):
        refused(service, table_id, c.ContributeEntropy(command_id=f"entropy-{n}", actor="p0",
                                                       player="p0", entropy=text),
                RuleViolation, "shoe-contribution")
    service.execute(table_id, c.ContributeEntropy(command_id="entropy-ok", actor="p0",
                                                  player="p0", entropy="C0FFEE"))
    assert service.state(table_id).shoe.contributions == ["c0ffee"]  # type: ignore[union-attr]
    state = to_phase(service, table_id, Phase.BETTING)
    assert state.shoe is not None and state.shoe.burned


def test_unknown_table_is_not_found(service: TableService) -> None:
    before = stored(service)
    with pytest.raises(NotFound) as raised:
        service.execute(uuid.uuid4(), c.ShuffleShoe(command_id="nowhere"))
    assert raised.value.rule == "unknown-table"
    with pytest.raises(NotFound):
        service.state(Table.create_id("never-opened"))
    assert stored(service) == before
    assert service.recorded_command("nowhere") is None


def test_a_table_is_opened_once(service: TableService) -> None:
    open_table(service, "twice", Variant.SIMPLIFIED, players=0)
    before = stored(service)
    with pytest.raises(RuleViolation) as raised:
        service.open_table("twice", TableSettings.default(Variant.SIMPLIFIED),
                           command_id="twice:open-again")
    assert raised.value.rule == "table-exists"
    assert stored(service) == before


def test_a_table_s_name_differs_in_more_than_case_and_width(service: TableService,
                                                              database_url: str) -> None:
    """Issue 35: names are compared by their NFKC case fold, tables' too: "FRIDAY-1" and the
    fullwidth "ｆriday-1" are the open "friday-1", for this service and for another process's
    (the names are read from the store)."""
    open_table(service, "friday-1", Variant.SIMPLIFIED, players=0)
    before = stored(service)
    other = a_service(database_url)
    try:
        for opener, taken in ((service, "FRIDAY-1"), (other, "ｆriday-1"), (other, "Friday-1")):
            with pytest.raises(RuleViolation) as raised:
                opener.open_table(taken, TableSettings.default(Variant.SIMPLIFIED),
                                  command_id=f"open-{taken}")
            assert raised.value.rule == "table-exists" and "'friday-1'" in raised.value.message
    finally:
        other.close()
    assert stored(service) == before
    open_table(service, "friday-2", Variant.SIMPLIFIED, players=0)  # another name still opens


# --- physical shoes ---------------------------------------------------------------------


class Croupier:
    """Drives a physical-shoe table: the bots decide, the croupier gives each card."""

    def __init__(self, service: TableService, table_id: uuid.UUID, prefix: str) -> None:
        self.service, self.table_id, self.prefix = service, table_id, prefix
        self.rng = random.Random(11)
        self.n = 0

    def send(self, command: c.TableCommand) -> list[dict[str, Any]]:
        self.n += 1
        return self.service.execute(self.table_id, command).events

    def label(self, text: str) -> str:
        return f"{self.prefix}:{self.n}:{text}"

    def until_card(self, stop: Callable[[TableState], bool] = lambda s: False) -> TableState:
        """Bot commands until the table needs a card (or `stop` says so)."""
        while True:
            state = self.service.state(self.table_id)
            command = next_command(state, self.rng, self.label)
            if stop(state) or isinstance(command, c.BurnCard | c.DealCard):
                return state
            self.send(command)


def physical_table(service: TableService, name: str) -> tuple[uuid.UUID, Croupier]:
    table_id = open_table(service, name, Variant.PUNTO_BANCO, players=2, decks=1)
    croupier = Croupier(service, table_id, name)
    croupier.send(c.ShuffleShoe(command_id=f"{name}:shuffle", physical=True))
    refused(service, table_id, c.ContributeEntropy(command_id=f"{name}:entropy", actor="p0",
                                                   player="p0", entropy="abcd"),
            RuleViolation, "physical-shoe")
    croupier.send(c.CutShoe(command_id=f"{name}:cut", actor=CROUPIER, player=CROUPIER,
                            position=20))
    refused(service, table_id, c.BurnCard(command_id=f"{name}:no-card"), RuleViolation,
            "card-missing")
    refused(service, table_id, c.BurnCard(command_id=f"{name}:bad-card", card=Card("Zz")),
            RuleViolation, "card-code")
    burned = croupier.send(c.BurnCard(command_id=f"{name}:burn-1", card=Card("Ah")))
    assert burned[0]["card"] == "Ah" and burned[0]["position"] == 0
    croupier.send(c.BurnCard(command_id=f"{name}:burn-2", card=Card("Kc")))  # ace: one more
    assert service.state(table_id).phase is Phase.BETTING
    return table_id, croupier


def test_physical_shoe_coup_with_the_croupiers_cards(service: TableService) -> None:
    table_id, croupier = physical_table(service, "physical")
    cards = [Card(x) for x in ("2h", "3d", "4s", "Tc", "5h", "6d")]
    given: list[str] = []
    while True:
        state = croupier.until_card(lambda s: s.phase is Phase.SETTLED)
        if state.phase is Phase.SETTLED:
            break
        card = cards[len(given)]
        events = croupier.send(c.DealCard(command_id=croupier.label("deal"), card=card))
        given.append(events[0]["card"])
    state = service.state(table_id)
    assert state.coup is not None and state.shoe is not None
    assert given == cards[: len(given)] and len(given) >= 4
    assert state.shoe.dealt == given
    assert state.shoe.burned == ["Ah", "Kc"]
    croupier.send(c.PayCoup(command_id="physical:pay"))
    state = service.state(table_id)
    assert state.phase is Phase.BETTING and state.coup_number == 1
    dealt = [e for e in service.events_of(table_id)
             if isinstance(e, Table.CardDealt | Table.ThirdCardDrawn)]
    assert [(e.card, e.position) for e in dealt] == [(g, i + 2) for i, g in enumerate(given)]
    report = verify(service.database_url, extra_checks=[shoes := ShoeAudit()])
    assert report.ok
    assert [t.physical for t in shoes.result.physical] == [True]
    assert shoes.result.pending == [] and shoes.result.checked == []


def test_physical_shoe_refuses_a_card_it_cannot_hold(service: TableService) -> None:
    table_id, croupier = physical_table(service, "one-deck")
    croupier.until_card()
    croupier.send(c.DealCard(command_id="one-deck:d1", card=Card("7s")))
    refused(service, table_id, c.DealCard(command_id="one-deck:d2", card=Card("7s")),
            RuleViolation, "card-count")
    refused(service, table_id, c.DealCard(command_id="one-deck:d3", card=Card("Ah")),
            RuleViolation, "card-count")  # burned already, one deck holds one


def test_a_draw_the_rules_forbid_is_refused(service: TableService) -> None:
    """Punto banco: the punter stands on 7, so asking for a card is refused."""
    table_id, croupier = physical_table(service, "seven")
    croupier.until_card()
    for n, code in enumerate(("3c", "2d", "4c", "3d")):  # punter 3+4 = 7, banker 2+3 = 5
        croupier.send(c.DealCard(command_id=f"seven:deal-{n}", card=Card(code)))
    croupier.send(c.ShowNaturals(command_id="seven:naturals"))
    assert service.state(table_id).points() == {Side.PUNTER: 7, Side.BANKER: 5}
    refused(service, table_id,
            c.Decide(command_id="seven:draw", side=Side.PUNTER, draw=True),
            RuleViolation, "punter-draw-forbidden")
    refused(service, table_id,
            c.Decide(command_id="seven:banker-first", side=Side.BANKER, draw=True),
            OutOfTurn, "out-of-turn")
    croupier.send(c.Decide(command_id="seven:stand", side=Side.PUNTER, draw=False))


def test_a_decision_by_someone_else_is_refused(service: TableService) -> None:
    table_id = open_table(service, "holder", Variant.SIMPLIFIED, players=3)
    state = to_phase(service, table_id, Phase.PLAYING)
    rng = random.Random(5)
    for n in range(300):
        command = next_command(state, rng, lambda label, n=n: f"holder:{n}:{label}")
        if isinstance(command, c.Decide):
            intruder = next(p for p in state.players() if p != command.actor)
            refused(service, table_id, msgspec.structs.replace(
                command, command_id="holder:intruder", actor=intruder),
                OutOfTurn, "not-your-turn")
            service.execute(table_id, command)
            return
        service.execute(table_id, command)
        state = service.state(table_id)
    raise AssertionError("no decision came up")


# --- racing services --------------------------------------------------------------------


@pytest.mark.parametrize("shared", [False, True], ids=["two-services", "one-service"])
def test_two_services_racing_on_one_table(database_url: str, shared: bool) -> None:
    """Two threads bet at once on one table, through two services (two processes, say) or
    through one shared service (an API server's worker threads, one aggregate cache)."""
    rounds = 6
    with a_service(database_url) as first, a_service(database_url) as other:
        second = first if shared else other
        table_id = open_table(first, "raced", Variant.PUNTO_BANCO, players=2, chips=10_000)
        to_phase(first, table_id, Phase.BETTING)
        second.table(table_id)  # warm the second service on the same table
        outcomes: list[dict[str, str]] = []
        for r in range(rounds):
            barrier = threading.Barrier(2)
            outcome: dict[str, str] = {}

            def bet(service: TableService, player: str, r: int = r,
                    outcome: dict[str, str] = outcome,
                    barrier: threading.Barrier = barrier) -> None:
                command = c.PlaceBet(command_id=f"race-{r}-{player}", actor=player,
                                     player=player, spot=Spot.BANKER, amount=10)
                barrier.wait()
                try:
                    service.execute(table_id, command)
                    outcome[player] = "applied"
                except Conflict:
                    outcome[player] = "conflict"

            threads = [threading.Thread(target=bet, args=(first, "p0")),
                       threading.Thread(target=bet, args=(second, "p1"))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            outcomes.append(outcome)
            assert sorted(outcome) == ["p0", "p1"], outcome
            assert "applied" in outcome.values()
            for player, result in outcome.items():
                recorded = first.recorded_command(f"race-{r}-{player}")
                assert (recorded is not None) == (result == "applied")
            state = first.state(table_id)
            applied = sum(v == "applied" for v in outcome.values())
            assert len(state.bets) == applied
            first.execute(table_id, c.CloseBetting(command_id=f"race-{r}-close"))
            to_phase(first, table_id, Phase.BETTING, prefix=f"race-{r}")
        events = first.events_of(table_id)
        assert [e.originator_version for e in events] == list(range(1, len(events) + 1))
        bets = [e for e in events if isinstance(e, Table.BetPlaced)]
        assert len({e.command_id for e in bets}) == len(bets)
        assert builtins(second.state(table_id)) == builtins(first.state(table_id))
    report = verify(database_url)
    assert report.ok, report.first_break
    assert report.events == len(events)


# --- tampering --------------------------------------------------------------------------


def test_an_altered_card_breaks_the_chain(database_url: str) -> None:
    from tests.integration.test_audit import db_id, sql

    with a_service(database_url) as service:
        table_id = open_table(service, "altered", Variant.PUNTO_BANCO, players=2, **SMALL_SHOE)
        play(service, table_id, 8)
        assert service.state(table_id).taille >= 2
        dealt = next(e for e in service.events_of(table_id) if isinstance(e, Table.CardDealt))
    (state,), = sql(database_url, "SELECT state FROM stored_events WHERE originator_id = ?"
                    " AND originator_version = ?",
                    (db_id(database_url, table_id), dealt.originator_version))
    fields = msgspec.msgpack.decode(bytes(state))
    fields["card"] = "Kh" if dealt.card != "Kh" else "Qh"
    sql(database_url, "UPDATE stored_events SET state = ? WHERE originator_id = ?"
        " AND originator_version = ?",
        (msgspec.msgpack.encode(fields), db_id(database_url, table_id),
         dealt.originator_version))
    finding = verify(database_url).first_break
    assert finding is not None
    assert (finding.problem, finding.originator_id, finding.originator_version) == (
        Problem.STATE_ALTERED, table_id, dealt.originator_version)
