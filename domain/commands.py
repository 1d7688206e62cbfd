"""Commands: what an actor asks an aggregate to do, in the imperative.

Each command carries a `command_id` chosen by the caller (a retried command is applied
once) and the `actor` who asks (a player id, or an official such as `@croupier`). They
are msgspec structs tagged by `kind`, so one JSON body decodes to the right command. Each
aggregate's commands live with it (`domain.table.commands`, `domain.tournament.commands`,
`domain.auction.commands`, `domain.dispute.commands`).
"""

from __future__ import annotations

import msgspec

from domain.errors import RuleViolation
from domain.limits import CommandId


class Command(msgspec.Struct, kw_only=True, tag_field="kind"):
    command_id: CommandId
    actor: str = "@croupier"


def require_known(command: object, known: tuple[type[Command], ...], taker: str) -> None:
    """Refuse, by its name, a command that is none of `known` (what `taker` takes)."""
    # The command's own class first: isinstance asks a struct class's metaclass (its
    # `__instancecheck__`), one class of `known` after another.
    if type(command) not in known and not isinstance(command, known):
        raise RuleViolation(f"{taker} takes no {type(command).__name__} command",
                            rule="unknown-command")
