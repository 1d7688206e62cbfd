"""House presets: the French casino regulation (arrêté of 14 May 2007) over the seeds' rules.

The seeds name the chemin-de-fer cagnotte (001: "les 5% de prélèvement") and no cut card for
à deux tableaux (002: the taille lasts "tant que le banquier n'a pas épuisé les cartes"); the
regulation fixes the rates and the stop card. Tables are played through `TableState`.
"""

from __future__ import annotations

import pytest

from domain.errors import RuleViolation
from domain.game.coup import Outcome, Side
from domain.game.settings import Preset, TableSettings
from domain.table.state import CROUPIER, TableState
from tests.unit.play import play_coup

R, L = Side.RIGHT, Side.LEFT
BOTH_LOSE = ["2s", "2h", "9d", "3s", "3h", "Td"]  # right 5, left 5, banker 9


def regulated(variant: str, preset: Preset, players: dict[str, int],
              sides: dict[str, Side] | None = None) -> TableState:
    """A table under `preset`, its physical shoe shuffled and cut (no burn, for brevity)."""
    settings = TableSettings.default(variant, preset=preset, burn="none")
    state = TableState(settings=settings)
    for player, chips in players.items():
        state.seat(player, chips, (sides or {}).get(player), False)
    state.shuffle(decks=settings.decks, algorithm="", commitment="", physical=True)
    state.cut(CROUPIER, 1)
    return state


@pytest.mark.parametrize(("variant", "from_end"), [("chemin-de-fer", 7), ("deux-tableaux", 10)])
def test_the_stop_card_lies_where_the_regulation_puts_it(variant: str, from_end: int) -> None:
    state = regulated(variant, Preset.FRANCE_2007, {"b": 100, "p": 100},
                      {"b": R, "p": L} if variant == "deux-tableaux" else None)
    assert state.shoe is not None
    assert state.shoe.cut_card_at == state.settings.decks * 52 - from_end


def test_chemin_de_fer_cagnotte_is_5_percent() -> None:
    """001 and the regulation agree: 5% of the bank's winnings."""
    state = regulated("chemin-de-fer", Preset.FRANCE_2007, {"b": 1000, "p": 1000})
    state.award_bank("b", 100)
    state.place_stake("p", Side.PUNTER, 100)
    assert play_coup(state, ["2s", "9h", "3s", "Th"]) == {Side.PUNTER: Outcome.BANKER}
    assert (state.bank, state.commission_total) == (195, 5)


@pytest.mark.parametrize(("preset", "stakes", "commission"), [
    (Preset.FRANCE_2007, 50, 1),  # 2% of 50
    (Preset.FRANCE_2007, 40, 1),  # 2% of 40 is 0.8: a chip, 0.2 kept in the banker's box
    (Preset.FRANCE_2007_BANQUE_OUVERTE, 80, 1),  # 1.25% of 80
])
def test_deux_tableaux_retenue(preset: Preset, stakes: int, commission: int) -> None:
    players = {"b": 1000, "r": 1000, "l": 1000}
    state = regulated("deux-tableaux", preset, players, {"b": R, "r": R, "l": L})
    state.award_bank("b", 500)
    state.place_stake("r", R, stakes // 2)
    state.place_stake("l", L, stakes // 2)
    assert play_coup(state, BOTH_LOSE) == {R: Outcome.BANKER, L: Outcome.BANKER}
    assert state.commission_total == commission
    assert state.bank == 500 + stakes - commission
    exact = stakes * state.settings.commission_bp
    assert state.commission_box.get("b", 0) == commission * 10_000 - exact


def test_a_preset_names_the_variants_it_covers() -> None:
    with pytest.raises(RuleViolation) as error:
        TableSettings.default("simplified", preset=Preset.FRANCE_2007)
    assert error.value.rule == "settings-preset"
    with pytest.raises(RuleViolation):
        TableSettings.default("chemin-de-fer", preset=Preset.FRANCE_2007_BANQUE_OUVERTE)


def test_a_setting_given_beats_the_preset() -> None:
    settings = TableSettings.default("chemin-de-fer", preset="france-2007", cut_card_from_end=16)
    assert (settings.cut_card_from_end, settings.commission_percent) == (16, 5)
