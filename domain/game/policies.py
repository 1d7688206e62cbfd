"""Default policies: the move a bot, or an expired deadline, makes at each decision point.

Where the drawing table fixes the move, the policy is that move. Where the rules leave a
choice, the documented default is:
- the punters' hand on 5 stands (000: "s'il a 5 il s'y tiendra. Mieux vaut s'y tenir"),
  unless the table's `punter_draws_on_five` setting says otherwise;
- the family game's Banque on 5 stands, unless `banker_draws_on_five`;
- chemin de fer's optional banker cases (3 against a 9, 5 against a 4) follow 001's table;
- the à deux tableaux banker, who is free, takes the move with the better exact expectation
  over both tableaux (`domain.game.banker_expectation`).
- the à deux tableaux banker offers a card ("Je donne", 002) and never shows down early.
"""

from __future__ import annotations

from domain.game.drawing import Rule
from domain.game.settings import TableSettings
from domain.game.variants import banker_rule, punter_rule, rules_for


def punter_draws(settings: TableSettings, point: int) -> bool:
    """Whether the punters' hand draws on a two-card point of 0-7 under the default policy."""
    rule = punter_rule(settings, point)
    if rule is Rule.CHOICE:
        return settings.punter_draws_on_five
    return rule is Rule.DRAW


def banker_draws(settings: TableSettings, point: int, given: int | None) -> bool:
    """Whether the banker draws under the default policy (all variants but à deux tableaux)."""
    rule = banker_rule(settings, point, given)
    if rule is not Rule.CHOICE:
        return rule is Rule.DRAW
    return rules_for(settings).drawing.banker_default(settings, point, given)
