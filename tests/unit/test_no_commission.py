"""No-Commission punto banco (setting `banker_win: six-pays-half`, preset `no-commission`):
a banker win pays even money without commission, half when the banker wins on six; its
payouts at a table, its secret bets, its exact odds against an independent count, and the
settings it refuses."""

from __future__ import annotations

import random
from fractions import Fraction

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.cli import main
from domain.bots import next_command
from domain.errors import RuleViolation
from domain.game.coup import Outcome, Side
from domain.game.odds import Outcome as OddsOutcome
from domain.game.odds import exact_odds
from domain.game.payouts import Bet, Spot, house_bets
from domain.game.settings import BankerWin, Preset, TableSettings, Variant
from domain.table import commands as c
from domain.table.aggregate import Table
from domain.tournament.aggregate import Tournament
from domain.tournament.commands import PlaceSecretBet, RevealSecretBet, StartRound
from domain.tournament.formats import Stage
from domain.tournament.state import secret_commitment
from tests.unit.test_formats import LEVELS, Run, fmt
from tests.unit.test_odds import dealt_card_by_card
from tests.unit.test_table_aggregate import SeededCards

NO_COMMISSION = TableSettings.default(Variant.PUNTO_BANCO, preset=Preset.NO_COMMISSION)


def test_the_preset_sets_no_commission_and_a_six_paid_half() -> None:
    assert NO_COMMISSION.commission_bp == 0
    assert NO_COMMISSION.banker_pays is BankerWin.SIX_PAYS_HALF
    assert TableSettings.default(Variant.PUNTO_BANCO).banker_pays is BankerWin.LESS_COMMISSION


def test_an_unset_rule_is_left_out_of_the_record() -> None:
    """Tables opened before the setting existed encode (and so hash) as they did."""
    encoded = msgspec.msgpack.decode(msgspec.msgpack.encode(
        TableSettings.default(Variant.PUNTO_BANCO)))
    assert "banker_win" not in encoded
    assert msgspec.msgpack.decode(msgspec.msgpack.encode(NO_COMMISSION))["banker_win"] == (
        "six-pays-half")


@pytest.mark.parametrize("overrides", [
    {"variant": Variant.PUNTO_BANCO, "banker_win": BankerWin.SIX_PAYS_HALF},  # 5% commission
    {"variant": Variant.CHEMIN_DE_FER, "banker_win": BankerWin.SIX_PAYS_HALF,
     "commission_percent": 0},  # no house banker bet
])
def test_a_six_paid_half_replaces_the_commission_on_the_house_banker_bet(
        overrides: dict[str, object]) -> None:
    variant = overrides.pop("variant")
    assert isinstance(variant, Variant)
    with pytest.raises(RuleViolation) as refused:
        TableSettings.default(variant, **overrides)
    assert refused.value.rule == "settings-banker-win"


@pytest.mark.parametrize(("point", "expected"), [(6, 50), (7, 100), (9, 100)])
def test_a_banker_win_pays_half_on_six_and_in_full_otherwise(point: int, expected: int) -> None:
    """004: "Les mains gagnantes sont payées 1:1", and names no commission: No-Commission
    keeps that but for a banker's winning six, paid half."""
    placed = [Bet("b", Spot.BANKER, 100), Bet("p", Spot.PUNTER, 100)]
    settlement = house_bets(NO_COMMISSION, Outcome.BANKER, placed, banker_point=point)
    assert {p.player: p.net for p in settlement.payouts} == {"b": expected, "p": -100}
    assert settlement.commission == 0 and settlement.boxes == {}


def test_the_odd_chip_of_a_half_paid_six_stays_with_the_house() -> None:
    settlement = house_bets(NO_COMMISSION, Outcome.BANKER, [Bet("b", Spot.BANKER, 101)],
                            banker_point=6)
    assert settlement.net_of("b") == 50 and settlement.house_net == -50


def test_a_banker_bet_cannot_be_paid_without_the_banker_point() -> None:
    with pytest.raises(RuleViolation) as refused:
        house_bets(NO_COMMISSION, Outcome.BANKER, [Bet("b", Spot.BANKER, 10)])
    assert refused.value.rule == "banker-point-unknown"


@settings(max_examples=100, deadline=None)
@given(outcome=st.sampled_from(Outcome), point=st.integers(0, 9),
       placed=st.lists(st.builds(Bet, st.sampled_from("abc"), st.sampled_from(Spot),
                                 st.integers(1, 10_000)), max_size=8))
def test_no_commission_conserves_chips_and_takes_none(outcome: Outcome, point: int,
                                                      placed: list[Bet]) -> None:
    settlement = house_bets(NO_COMMISSION, outcome, placed, banker_point=point)
    assert settlement.commission == 0
    for bet, payout in zip(placed, settlement.payouts, strict=True):
        if bet.spot is Spot.BANKER and outcome is Outcome.BANKER:
            assert payout.net == (bet.amount // 2 if point == 6 else bet.amount)
        else:  # every other bet as at a commission table
            assert payout.net == house_bets(
                TableSettings.default(Variant.PUNTO_BANCO), outcome, [bet]).payouts[0].net


def test_a_table_pays_its_banker_bets_by_the_banker_point() -> None:
    """Bots play coups through `execute`; every banker-bet payout follows the recorded point."""
    table = Table(name="t", settings=NO_COMMISSION, tournament=None, actor="@organiser",
                  command_id="open")
    cards, rng = SeededCards(), random.Random(6)
    for i in range(4):
        table.execute(c.SeatPlayer(command_id=f"seat-{i}", player=f"p{i}", chips=100_000),
                      cards)
    for n in range(3000):
        table.execute(next_command(table.state, rng, lambda label, n=n: f"{n}:{label}"), cards)
    events = table.collect_events()
    settled = {e.coup: e for e in events if isinstance(e, Table.CoupSettled)}
    paid = [(e, settled[e.coup]) for e in events if isinstance(e, Table.PayoutMade)
            and e.payout.reason == "bet on banker"
            and settled[e.coup].outcomes[Side.PUNTER] is Outcome.BANKER]
    on_six = [e for e, s in paid if s.points[Side.BANKER] == 6]
    assert on_six and len(paid) > len(on_six)  # both kinds of banker win were paid
    for e, s in paid:
        amount = e.payout.staked
        assert e.payout.net == (amount // 2 if s.points[Side.BANKER] == 6 else amount)
        assert e.payout.commission == 0


def test_a_secret_bet_on_the_banker_is_paid_half_on_six() -> None:
    run = Run(fmt(Stage(name="final", rounds=1, limits=LEVELS, secret_bet=True),
                  house_rules=Preset.NO_COMMISSION), 4).start()
    run.do(StartRound, at=0.0)
    players = run.s.in_play()
    for n, player in enumerate(players[:2]):
        run.do(PlaceSecretBet, player=player, table=run.s.entrant(player).table, coup=1,
               commitment=secret_commitment("banker", 100, f"{n:02d}"))
    for n, (player, point) in enumerate(zip(players[:2], (6, 7), strict=True)):
        run.do(RevealSecretBet, player=player, spot="banker", amount=100, nonce=f"{n:02d}",
               outcome=Outcome.BANKER, banker_point=point)
    revealed = [(e.player, e.delta) for e in run.t.collect_events()
                if isinstance(e, Tournament.SecretBetRevealed)]
    assert revealed == [(players[0], 50), (players[1], 100)]


def test_the_banker_edge_is_the_published_figure() -> None:
    """8 decks: a banker bet loses about 1.46% (the Wizard of Odds: 1.4581%), the player
    bet's 1.2351% and the tie's are those of the commission table."""
    odds = exact_odds(NO_COMMISSION)
    commission = exact_odds(TableSettings.default(Variant.PUNTO_BANCO))
    banker = odds.edge(OddsOutcome.BANKER)
    assert banker is not None
    assert round(float(banker) * 100, 4) == 1.4581
    assert (odds.banker, odds.player, odds.tie) == (
        commission.banker, commission.player, commission.tie)
    assert odds.edge(OddsOutcome.PLAYER) == commission.edge(OddsOutcome.PLAYER)
    assert odds.edge(OddsOutcome.TIE) == commission.edge(OddsOutcome.TIE)


@pytest.mark.parametrize("decks", [1, 2])
def test_the_banker_edge_matches_a_card_by_card_count(decks: int) -> None:
    settings_ = TableSettings.default(Variant.PUNTO_BANCO, preset=Preset.NO_COMMISSION,
                                      decks=decks)
    counted = dealt_card_by_card(settings_)
    odds = exact_odds(settings_)
    assert (odds.banker, odds.player, odds.tie, odds.banker_six) == counted
    total = sum(counted[:3])
    banker, player, _, six = (Fraction(n, total) for n in counted)
    assert odds.edge(OddsOutcome.BANKER) == -(banker - six / 2 - player)


def test_sabot_odds_prints_the_no_commission_edge(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "punto-banco", "--preset", "no-commission", "--json"]) == 0
    data = msgspec.json.decode(capsys.readouterr().out)
    assert round(data["edges"]["banker"] * 100, 4) == 1.4581
    assert data["banker_win"] == "six-pays-half"
    assert data["banker_six"] == exact_odds(NO_COMMISSION).banker_six
    assert main(["odds", "punto-banco", "--preset", "no-commission"]) == 0
    table = capsys.readouterr().out
    assert "1.4581 %" in table and "six paid half" in table
