"""Decision deadlines for tables played through the API.

When a command leaves a table awaiting a decision, and the table has a time limit
(`TableSettings.decision_seconds`), the service records a `Deadline` effect with the command
(`infra.store.outbox`); in the API's process this clock sends it: the worker task that plays the
default move if nobody decides in time (`workers.deadlines`: it acts at most once, and not at
all if the hand decided meanwhile); likewise a turn to bet with a bet clock (`BetDeadline`),
passed if nobody bets in time, and the shoe offered to a player (`BankDeadline`), passed on
if they do not answer in time. Tasks go through the broker of `sabot serve --broker` (else
`$SABOT_BROKER_URL`, else the embedded one); a worker on the same store must run to play
them (the task carries ids only).
"""

from __future__ import annotations

from celery import Celery

from infra.store.outbox import Clock
from workers.app import make_app
from workers.services import send_deadline


class DeadlineClock:
    def __init__(self, broker: Celery | str) -> None:
        self.broker = broker if isinstance(broker, Celery) else make_app(broker)

    def __call__(self, deadline: Clock) -> str:
        """Send the deadline's task (the handler of every `Clock`'s effects)."""
        return send_deadline(deadline, via=self.broker)
