"""The formats an organiser starts from: each a whole `TournamentSettings`, to use as it is or
with its common fields overridden (`preset(name, coups_per_round=..., ...)`).

- `punto-banco-heats`: a casino punto-banco event. Heats of two rounds at 7-seat tables, the
  limits rising each round; the top two of each table and two wildcards (the best stacks of
  the rest) go to a one-round semi-final, whose top four play a one-round final, everyone
  restarting level. Players bet in turn, the first bettor one seat to the left each coup,
  with 20 seconds on the bet clock for each turn. A tie on the line of a cut is played off by
  an extra coup. Late registration and one re-entry through the first round; 50/30/20 of the
  pool to the top three.
- `chemin-de-fer-freeze-out`: a chemin-de-fer freeze-out at 8-seat tables: no cut, players
  are out when they cannot cover the round's minimum stake, the limits doubling every round;
  the tables break down to one; after eight rounds the biggest stack wins if more than one
  player is left. Late registration and one re-entry through the second round; 60/40 of the
  pool to the top two; tied positions share their prizes.

Three formats for an evening with people:

- `punto-banco-eight`: house-dealt punto banco heats in the manner of SkyCity's EIGHT.
  No-Commission tables (a banker win on six paid half, `house_rules: no-commission`), 18
  coups a round, players betting in turn (the first bettor one seat to the left each coup)
  with a one-minute bet clock. One heat at 7-seat tables: the top two of each table and four
  wildcards (the best stacks of the rest) play a wildcard round, whose top seven make the
  final table; the final starts everyone level and gives each player one secret bet. A turn
  the bet clock passes costs its player the round's minimum stake (`sitting_out`), so a
  player who never bets cannot win. 50/30/20 of the pool to the top three; a tie on the line
  is played off.
- `chemin-de-fer-croupier`: croupier-dealt chemin de fer at 8-seat tables: two heats of 12
  coups or 40 minutes, the limits rising, the top three of each table and two wildcards to a
  one-round final; 60/40 of the pool.
- `deux-tableaux-croupier`: croupier-dealt baccara à deux tableaux at 10-seat tables: three
  rounds of 10 coups or 40 minutes, the limits rising; the biggest stack wins, tied places
  share; 60/40 of the pool.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.errors import NotFound
from domain.game.settings import BettingOrder, Preset, SittingOut, Variant
from domain.tournament.formats import Advance, ChipRule, Dealing, Limits, Stage, TieBreak
from domain.tournament.settings import TournamentSettings

PRESETS: dict[str, TournamentSettings] = {
    "punto-banco-heats": TournamentSettings(
        variant=Variant.PUNTO_BANCO, seats_per_table=7, starting_chips=10_000, min_stake=100,
        max_stake=1_000, coups_per_round=15, buy_in=100, prizes=(5000, 3000, 2000),
        late_rounds=1, reentries=1, tie_break=TieBreak.PLAY_OFF,
        betting_order=BettingOrder.ROTATING, bet_seconds=20,
        stages=(
            Stage(name="heats", rounds=2,
                  limits=(Limits(min_stake=100, max_stake=1_000),
                          Limits(min_stake=200, max_stake=2_000)),
                  advance=Advance(per_table=2, wildcards=2)),
            Stage(name="semi-final", rounds=1, limits=(Limits(min_stake=300, max_stake=3_000),),
                  advance=Advance(overall=4)),
            Stage(name="final", rounds=1, limits=(Limits(min_stake=500, max_stake=5_000),),
                  chips=ChipRule.RESET, secret_bet=True),
        )),
    "chemin-de-fer-freeze-out": TournamentSettings(
        variant=Variant.CHEMIN_DE_FER, seats_per_table=8, starting_chips=5_000, min_stake=50,
        max_stake=500, coups_per_round=20, buy_in=50, prizes=(6000, 4000), late_rounds=2,
        reentries=1, tie_break=TieBreak.SHARE,
        stages=(
            Stage(name="freeze-out", rounds=8,
                  limits=tuple(Limits(min_stake=50 << n, max_stake=500 << n) for n in range(8))),
        )),
    "punto-banco-eight": TournamentSettings(
        variant=Variant.PUNTO_BANCO, house_rules=Preset.NO_COMMISSION, seats_per_table=7,
        starting_chips=10_000, min_stake=100, max_stake=2_000, coups_per_round=18, buy_in=100,
        prizes=(5000, 3000, 2000), tie_break=TieBreak.PLAY_OFF, dealing=Dealing.AUTOMATIC,
        late_rounds=1, reentries=1,
        betting_order=BettingOrder.ROTATING, bet_seconds=60, sitting_out=SittingOut.MIN_STAKE,
        stages=(
            Stage(name="heats", rounds=1, advance=Advance(per_table=2, wildcards=4)),
            Stage(name="wildcard", rounds=1, advance=Advance(overall=7)),
            Stage(name="final", rounds=1, chips=ChipRule.RESET, secret_bet=True),
        )),
    "chemin-de-fer-croupier": TournamentSettings(
        variant=Variant.CHEMIN_DE_FER, seats_per_table=8, starting_chips=5_000, min_stake=50,
        max_stake=1_000, coups_per_round=12, minutes_per_round=40, buy_in=50,
        prizes=(6000, 4000), dealing=Dealing.CROUPIER,
        stages=(
            Stage(name="heats", rounds=2,
                  limits=(Limits(min_stake=50, max_stake=1_000),
                          Limits(min_stake=100, max_stake=2_000)),
                  advance=Advance(per_table=3, wildcards=2)),
            Stage(name="final", rounds=1, limits=(Limits(min_stake=200, max_stake=4_000),)),
        )),
    "deux-tableaux-croupier": TournamentSettings(
        variant=Variant.DEUX_TABLEAUX, seats_per_table=10, starting_chips=5_000, min_stake=50,
        max_stake=2_000, coups_per_round=10, minutes_per_round=40, buy_in=50,
        prizes=(6000, 4000), dealing=Dealing.CROUPIER, tie_break=TieBreak.SHARE,
        stages=(
            Stage(name="main", rounds=3,
                  limits=tuple(Limits(min_stake=50 << n, max_stake=2_000 << n)
                               for n in range(3))),
        )),
}


def preset(name: str, **overrides: Any) -> TournamentSettings:
    """A preset, its common fields overridden (None: keep the preset's), checked."""
    found = PRESETS.get(name)
    if found is None:
        raise NotFound(f"no preset {name!r} (known: {', '.join(PRESETS)})",
                       rule="unknown-preset")
    given = {k: v for k, v in overrides.items() if v is not None}
    return msgspec.structs.replace(found, **given).check()
