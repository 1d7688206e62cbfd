"""The seeds' rules through the service's commands and the store (SQLite and PostgreSQL): the
à deux tableaux banker's offer and show-down (002), a tied chemin-de-fer coup played again
(001), the commission box (004, 001), each replayed from the stored events."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from domain.commands import Command
from domain.errors import RuleViolation
from domain.game.coup import Side
from domain.game.payouts import Spot
from domain.game.settings import TableSettings
from domain.table import commands as c
from domain.table.state import Phase
from infra.services.tables import TableService, seeds_from

R, L, P = Side.RIGHT, Side.LEFT, Side.PUNTER


@pytest.fixture
def service(database_url: str) -> Iterator[TableService]:
    svc = TableService(url=database_url, secret_key=bytes(range(32)))
    svc.seed_source = seeds_from(b"sabot-seed-commands")
    yield svc
    svc.close()


class Croupier:
    """Sends one table's commands with fresh command ids."""

    def __init__(self, service: TableService, variant: str, players: dict[str, Side | None],
                 **overrides: Any) -> None:
        self.service, self.sent = service, 0
        settings = TableSettings.default(variant, burn="none", cut_card_from_end=0, **overrides)
        self.table = service.open_table(f"seed-{variant}-{uuid.uuid4().hex[:8]}", settings,
                                        command_id=f"{uuid.uuid4()}").table_id
        for player, side in players.items():
            self(c.SeatPlayer, player=player, chips=1000, side=side)
        self(c.ShuffleShoe, physical=True)
        self(c.CutShoe, player="@croupier", position=1)

    def __call__(self, command: type[Command], **fields: Any) -> None:
        self.sent += 1
        self.service.execute(self.table, command(  # type: ignore[arg-type]
            command_id=f"{self.table}:{self.sent}", **fields))

    def deal(self, *cards: str) -> None:
        for code in cards:
            self(c.DealCard, card=code)


def test_the_banker_shows_down_through_the_commands(service: TableService) -> None:
    """002: "Quel que soit son jeu ... le banquier a le droit d'abattre son jeu du premier
    coup", and "Les pontes ne peuvent tirer une carte que sur l'offre du banquier"."""
    table = Croupier(service, "deux-tableaux", {"b": R, "r": R, "l": L})
    table(c.AwardBank, player="b", amount=100)
    table(c.PlaceStake, actor="r", player="r", tableau=R, amount=10)
    table(c.PlaceStake, actor="l", player="l", tableau=L, amount=10)
    table(c.CloseBetting)
    table.deal("3s", "6h", "2d", "Ts", "Th", "3d")  # right 3, left 6, banker 5
    table(c.ShowNaturals)
    with pytest.raises(RuleViolation) as refused:
        table(c.Decide, actor="r", side=R, draw=True)
    assert refused.value.rule == "no-offer"
    table(c.ShowDown, actor="b")
    table(c.SettleCoup)
    table(c.PayCoup)
    state = service.state(table.table)
    assert {p: state.seat_of(p).chips for p in ("r", "l")} == {"r": 990, "l": 1010}
    kinds = [type(e).__name__ for e in service.events_of(table.table)]
    assert "BankerShowedDown" in kinds and "CardOffered" not in kinds


def test_the_banker_offers_through_the_commands(service: TableService) -> None:
    table = Croupier(service, "deux-tableaux", {"b": R, "r": R, "l": L})
    table(c.AwardBank, player="b", amount=100)
    table(c.PlaceStake, actor="r", player="r", tableau=R, amount=10)
    table(c.CloseBetting)
    table.deal("3s", "6h", "2d", "Ts", "Th", "3d")
    table(c.ShowNaturals)
    table(c.OfferCard, actor="b")
    table(c.Decide, actor="r", side=R, draw=True)
    assert service.state(table.table).coup.awaiting_card is R  # type: ignore[union-attr]
    kinds = [type(e).__name__ for e in service.events_of(table.table)]
    assert kinds.count("CardOffered") == 1


def test_a_tie_is_played_again_with_its_stakes(service: TableService) -> None:
    """001: "si les deux points sont identiques il y a égalité, on refait le coup en donnant
    de nouvelles cartes"."""
    table = Croupier(service, "chemin-de-fer", {"p0": None, "p1": None, "p2": None})
    table(c.AwardBank, player="p0", amount=100)
    table(c.PlaceStake, actor="p1", player="p1", tableau=P, amount=60)
    table(c.CloseBetting)
    table.deal("9s", "9h", "Ts", "Th")
    table(c.ShowNaturals)
    table(c.SettleCoup)
    table(c.PayCoup)
    state = service.state(table.table)
    assert state.phase is Phase.BETTING and state.tie_replay and len(state.stakes) == 1
    table(c.CloseBetting)
    table.deal("9s", "2h", "Ts", "3h")  # the punter's 9 against 5
    table(c.ShowNaturals)
    table(c.SettleCoup)
    table(c.PayCoup)
    state = service.state(table.table)
    assert state.seat_of("p1").chips == 1060
    assert state.coup_number == 2


def test_small_banker_wins_pay_their_commission(service: TableService) -> None:
    """Punto banco at 5%: two Banker wins of 10 chips pay one chip in all, 5% of 20."""
    table = Croupier(service, "punto-banco", {"b": None})
    for deal in (("2s", "9h", "3s", "Th"), ("2c", "9d", "3c", "Td")):
        table(c.PlaceBet, actor="b", player="b", spot=Spot.BANKER, amount=10)
        table(c.CloseBetting)
        table.deal(*deal)
        table(c.ShowNaturals)
        table(c.SettleCoup)
        table(c.PayCoup)
        state = service.state(table.table)
        assert state.coup is None
    assert (state.seat_of("b").chips, state.commission_total) == (1019, 1)
    assert state.commission_box == {"b": 0}
