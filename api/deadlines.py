"""Decision deadlines for tables played through the API.

After a command leaves a table awaiting a decision, and the table has a time limit
(`TableSettings.decision_seconds`), the API schedules the worker task that plays the default
move if nobody decides in time (`workers.deadlines`: it acts at most once, and not at all if
the hand decided meanwhile). Tasks go through the broker of `sabot serve --broker` (else
`$SABOT_BROKER_URL`, else the embedded one); a worker must run to play them.
"""

from __future__ import annotations

import uuid

from celery import Celery

from domain.table import TableState
from workers.app import make_app
from workers.deadlines import schedule_deadline


class DeadlineClock:
    def __init__(self, database_url: str, broker: Celery | str) -> None:
        self.database_url = database_url
        self.broker = broker if isinstance(broker, Celery) else make_app(broker)

    def after(self, table_id: uuid.UUID, state: TableState) -> str | None:
        """Schedule the awaited decision's deadline, if the table has a time limit."""
        seconds = state.settings.decision_seconds
        if not seconds:
            return None
        return schedule_deadline(self.database_url, table_id, state, seconds=seconds,
                                 via=self.broker)
