"""Exact odds (domain.game.odds) and `sabot odds`: published figures, consistency, the CLI's
output."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import msgspec
import pytest

from api.cli import main
from domain.errors import RuleViolation
from domain.game.cards import value_counts
from domain.game.odds import Odds, Outcome, exact_odds, on_five
from domain.game.policies import banker_draws, punter_draws
from domain.game.settings import PunterFive, TableSettings, Variant

# Punto banco, 5% commission, tie 8 to 1: the Wizard of Odds tables of every ordered six-card
# sequence (8 decks also in RULES.md's brief). total = banker + player + tie = N!/(N-6)!.
PUBLISHED = {
    8: (2_292_252_566_437_888, 2_230_518_282_592_256, 475_627_426_473_216, 4_998_398_275_503_360),
    6: (403_095_751_234_560, 392_220_492_728_832, 83_552_962_932_288, 878_869_206_895_680),
}
PUBLISHED_4_DECKS = (34_543_624_867_840, 33_608_344_225_792)  # banker, player

# The same tables give the 8-deck house edges to four decimals of a percent.
PUBLISHED_EDGES_8_DECKS = {Outcome.BANKER: 1.0579, Outcome.PLAYER: 1.2351, Outcome.TIE: 14.3596}

VARIANTS = (Variant.PUNTO_BANCO, Variant.CHEMIN_DE_FER, Variant.SIMPLIFIED)


def sequences(decks: int) -> int:
    cards = 52 * decks
    return cards * (cards - 1) * (cards - 2) * (cards - 3) * (cards - 4) * (cards - 5)


def odds(variant: Variant, **overrides: Any) -> Odds:
    return exact_odds(TableSettings.default(variant, **overrides))


def offered(result: Odds, bet: Outcome) -> Fraction:
    edge = result.edge(bet)
    assert edge is not None, f"{result.variant} offers no {bet} bet"
    return edge


def dealt_card_by_card(settings: TableSettings) -> tuple[int, int, int, int]:
    """An independent count: every ordered deal P, B, P, B, then the third cards, no shortcuts;
    banker wins, player wins, ties, and the banker's wins on six."""
    shoe = value_counts(settings.decks)
    cards = sum(shoe)
    wins = {Outcome.BANKER: 0, Outcome.PLAYER: 0, Outcome.TIE: 0}
    on_six = 0

    def settle(punter: int, banker: int, weight: int, used: int) -> None:
        nonlocal on_six
        for position in range(used, 6):
            weight *= cards - position
        if banker > punter:
            wins[Outcome.BANKER] += weight
            on_six += weight if banker == 6 else 0
        elif punter > banker:
            wins[Outcome.PLAYER] += weight
        else:
            wins[Outcome.TIE] += weight

    def take(v: int, weight: int) -> int:
        weight *= shoe[v]
        shoe[v] -= 1
        return weight

    for p1 in range(10):
        w1 = take(p1, 1)
        for b1 in range(10):
            w2 = take(b1, w1)
            for p2 in range(10):
                w3 = take(p2, w2)
                for b2 in range(10):
                    w4 = take(b2, w3)
                    punter, banker = (p1 + p2) % 10, (b1 + b2) % 10
                    if w4 == 0:
                        pass
                    elif punter >= 8 or banker >= 8:
                        settle(punter, banker, w4, 4)
                    elif punter_draws(settings, punter):
                        for given in range(10):
                            w5 = take(given, w4)
                            final = (punter + given) % 10
                            if banker_draws(settings, banker, given):
                                for third in range(10):
                                    w6 = take(third, w5)
                                    settle(final, (banker + third) % 10, w6, 6)
                                    shoe[third] += 1
                            else:
                                settle(final, banker, w5, 5)
                            shoe[given] += 1
                    elif banker_draws(settings, banker, None):
                        for third in range(10):
                            w5 = take(third, w4)
                            settle(punter, (banker + third) % 10, w5, 5)
                            shoe[third] += 1
                    else:
                        settle(punter, banker, w4, 4)
                    shoe[b2] += 1
                shoe[p2] += 1
            shoe[b1] += 1
        shoe[p1] += 1
    return wins[Outcome.BANKER], wins[Outcome.PLAYER], wins[Outcome.TIE], on_six


@pytest.mark.parametrize("decks", sorted(PUBLISHED))
def test_punto_banco_reproduces_the_published_counts_to_every_digit(decks: int) -> None:
    result = odds(Variant.PUNTO_BANCO, decks=decks)
    assert (result.banker, result.player, result.tie, result.total) == PUBLISHED[decks]


def test_punto_banco_four_decks_reproduces_the_published_counts() -> None:
    result = odds(Variant.PUNTO_BANCO, decks=4)
    assert (result.banker, result.player) == PUBLISHED_4_DECKS


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("decks", range(1, 9))
def test_counts_sum_to_every_ordered_six_card_sequence(variant: Variant, decks: int) -> None:
    result = odds(variant, decks=decks)
    assert result.banker + result.player + result.tie == result.total == sequences(decks)
    assert sum(result.probability(outcome) for outcome in Outcome) == 1


@pytest.mark.parametrize(
    ("variant", "overrides"),
    [
        (Variant.PUNTO_BANCO, {}),
        (Variant.CHEMIN_DE_FER, {}),
        (Variant.CHEMIN_DE_FER, {"punter_draws_on_five": True}),
        (Variant.SIMPLIFIED, {}),
        (Variant.SIMPLIFIED, {"banker_draws_on_five": True}),
    ],
)
def test_one_deck_matches_a_card_by_card_deal(variant: Variant, overrides: dict[str, Any]) -> None:
    settings = TableSettings.default(variant, decks=1, **overrides)
    result = exact_odds(settings)
    assert (result.banker, result.player, result.tie, result.banker_six) == dealt_card_by_card(
        settings)


def test_punto_banco_edges_match_the_published_counts_and_percentages() -> None:
    banker, player, tie, total = PUBLISHED[8]
    p_banker, p_player, p_tie = (Fraction(n, total) for n in (banker, player, tie))
    expected = {
        Outcome.BANKER: -(p_banker * Fraction(95, 100) - p_player),
        Outcome.PLAYER: -(p_player - p_banker),
        Outcome.TIE: -(8 * p_tie - (1 - p_tie)),
    }
    result = odds(Variant.PUNTO_BANCO)
    for bet, edge in expected.items():
        computed = result.edge(bet)
        assert computed == edge
        assert float(computed) == pytest.approx(float(edge), abs=1e-12)
        assert round(float(computed) * 100, 4) == PUBLISHED_EDGES_8_DECKS[bet]


def test_punto_banco_settings_move_the_edges() -> None:
    nine_to_one = odds(Variant.PUNTO_BANCO, tie_pays=9)
    tie = nine_to_one.probability(Outcome.TIE)
    assert nine_to_one.edge(Outcome.TIE) == 1 - 10 * tie
    assert round(float(1 - 10 * tie) * 100, 2) == 4.84
    no_commission = odds(Variant.PUNTO_BANCO, commission_percent=0)
    edge = offered(no_commission, Outcome.BANKER)
    assert edge < 0  # without the cagnotte the banker bet beats the house
    assert edge == -offered(no_commission, Outcome.PLAYER)


def test_fewer_decks_favour_the_banker_bet_and_hurt_the_tie_bet() -> None:
    shoes = [odds(Variant.PUNTO_BANCO, decks=d) for d in (1, 4, 6, 8)]
    banker = [offered(result, Outcome.BANKER) for result in shoes]
    tie = [offered(result, Outcome.TIE) for result in shoes]
    assert banker == sorted(banker)
    assert tie == sorted(tie, reverse=True)


def test_chemin_de_fer_has_no_tie_bet_and_edges_follow_the_commission() -> None:
    result = odds(Variant.CHEMIN_DE_FER)
    assert result.decks == 6
    assert result.edge(Outcome.TIE) is None
    p_banker = result.probability(Outcome.BANKER)
    p_player = result.probability(Outcome.PLAYER)
    assert result.edge(Outcome.BANKER) == -(p_banker * Fraction(95, 100) - p_player)
    assert result.edge(Outcome.PLAYER) == -(p_player - p_banker)
    # The banker's optional cases default to 001's fixed table: the same coups.
    with_options = odds(Variant.CHEMIN_DE_FER, banker_options=True)
    assert (with_options.banker, with_options.player, with_options.tie) == (
        result.banker,
        result.player,
        result.tie,
    )


def test_family_game_is_symmetric_and_a_tie_loses_the_duel_bets() -> None:
    result = odds(Variant.SIMPLIFIED)
    assert result.banker == result.player  # both hands play the same rule, blind to the other
    p_banker, p_player, p_tie = (result.probability(o) for o in Outcome)
    assert (
        result.edge(Outcome.BANKER) == result.edge(Outcome.PLAYER) == -(p_banker - p_player - p_tie)
    )
    assert result.edge(Outcome.TIE) == -(5 * p_tie - (1 - p_tie))


def test_deux_tableaux_is_refused() -> None:
    with pytest.raises(RuleViolation):
        odds(Variant.DEUX_TABLEAUX)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["odds", *argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    decoded: dict[str, Any] = msgspec.json.decode(out)
    return decoded


def test_cli_json_punto_banco(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "punto-banco")
    assert list(data) == [
        "variant",
        "decks",
        "counts",
        "total",
        "probabilities",
        "edges",
        "probabilities_exact",
        "edges_exact",
    ]
    banker, player, tie, total = PUBLISHED[8]
    assert data["variant"] == "punto-banco"
    assert data["decks"] == 8
    assert data["counts"] == {"banker": banker, "player": player, "tie": tie}
    assert data["total"] == total
    for outcome, count in data["counts"].items():
        exact = Fraction(data["probabilities_exact"][outcome])
        assert exact == Fraction(count, total)
        assert data["probabilities"][outcome] == float(exact)
        assert data["edges"][outcome] == float(Fraction(data["edges_exact"][outcome]))
    assert data["edges"]["banker"] == pytest.approx(0.010579, abs=5e-7)
    assert data["edges"]["player"] == pytest.approx(0.012351, abs=5e-7)
    assert data["edges"]["tie"] == pytest.approx(0.143596, abs=5e-7)


def test_cli_json_settings_and_other_variants(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "punto-banco", "--decks", "6", "--commission", "4", "--tie-pays", "9")
    assert data["total"] == PUBLISHED[6][3]
    expected = odds(Variant.PUNTO_BANCO, decks=6, commission_percent=4, tie_pays=9)
    assert Fraction(data["edges_exact"]["banker"]) == expected.edge(Outcome.BANKER)
    assert Fraction(data["edges_exact"]["tie"]) == expected.edge(Outcome.TIE)

    chemin = run_json(capsys, "chemin-de-fer")
    assert chemin["decks"] == 6
    assert chemin["edges"]["tie"] is None and chemin["edges_exact"]["tie"] is None

    family = run_json(capsys, "simplified", "--decks", "1")
    assert family["decks"] == 1
    assert family["counts"]["banker"] == family["counts"]["player"]
    assert family["total"] == sequences(1)


def test_cli_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["odds", "punto-banco"]) == 0
    out = capsys.readouterr().out
    for count in PUBLISHED[8]:
        assert f"{count:,}" in out
    assert "1.0579 %" in out and "14.3596 %" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["odds", "baccarat"],
        ["odds", "deux-tableaux", "--tie-pays", "8"],
        ["odds", "punto-banco", "--decks", "0"],
        ["odds", "punto-banco", "--decks", "9"],
        ["odds", "punto-banco", "--commission", "-1"],
        ["odds", "punto-banco", "--tie-pays", "-8"],
        ["odds", "chemin-de-fer", "--tie-pays", "8"],
    ],
)
def test_cli_bad_input_is_one_line_and_exit_code_2(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("sabot: ") and captured.err.count("\n") == 1


def test_cli_unparsable_number_exits_2() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["odds", "punto-banco", "--decks", "eight"])
    assert exit_info.value.code == 2


# --- the punters' choice on 5 (001: "5 Facultatif / au choix") --------------------------


def test_chemin_de_fer_gives_the_figures_for_standing_and_drawing_on_five() -> None:
    """001's punter table: "5 Facultatif / au choix". Against 001's banker table, drawing on
    5 serves the punters better than standing (000's "Mieux vaut s'y tenir")."""
    five = on_five(TableSettings.default(Variant.CHEMIN_DE_FER))
    assert five is not None
    assert five.stand == odds(Variant.CHEMIN_DE_FER)  # the default policy stands on 5
    assert five.draw == odds(Variant.CHEMIN_DE_FER, punter_draws_on_five=True)
    stand, draw = five.stand.edge(Outcome.PLAYER), five.draw.edge(Outcome.PLAYER)
    assert stand is not None and draw is not None and draw < stand
    assert five.better is PunterFive.DRAW
    assert float(stand) == pytest.approx(0.015477, abs=5e-7)
    assert float(draw) == pytest.approx(0.012020, abs=5e-7)


@pytest.mark.parametrize("rule", [PunterFive.DRAW, PunterFive.STAND])
def test_a_house_rule_on_five_leaves_no_choice_to_weigh(rule: PunterFive) -> None:
    settings = TableSettings.default(Variant.CHEMIN_DE_FER, punter_five=rule)
    assert on_five(settings) is None
    expected = odds(Variant.CHEMIN_DE_FER, punter_draws_on_five=rule is PunterFive.DRAW)
    assert (exact_odds(settings).banker, exact_odds(settings).player) == (expected.banker,
                                                                          expected.player)


def test_cli_shows_the_choice_on_five(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "chemin-de-fer")
    five = data["punter_on_five"]
    assert five["better"] == "draw"
    assert Fraction(five["stand"]["edges_exact"]["player"]) == Fraction(
        data["edges_exact"]["player"])
    assert "punter_on_five" not in run_json(capsys, "chemin-de-fer", "--punter-five", "stand")
    assert main(["odds", "chemin-de-fer"]) == 0
    out = capsys.readouterr().out
    assert "punters stand on 5" in out and "better for the punters: draw on 5" in out
    assert "1.2020 %" in out and "1.5477 %" in out


def test_cli_deux_tableaux_shows_what_the_book_costs(capsys: pytest.CaptureFixture[str]) -> None:
    """`sabot odds deux-tableaux`: the free banker has no fixed table to enumerate, so it
    weighs 000's book against the exact optimum (domain.game.banker_book)."""
    data = run_json(capsys, "deux-tableaux")
    assert data["decks"] == 3
    assert [(c["given"], c["banker"], c["book"], c["optimum"]) for c in data["cells"]] == [
        (0, 3, "stand", "draw"), (4, 5, "draw", "stand")]
    assert Fraction(data["book_cost_per_coup_exact"]) == sum(
        Fraction(c["probability_exact"]) * Fraction(c["cost_exact"]) for c in data["cells"])
    assert main(["odds", "deux-tableaux"]) == 0
    out = capsys.readouterr().out
    assert "000's book against the exact optimum" in out and "0.0963 %" in out
