"""Another process writing to a table (as a worker or the director does): `python -m
tests.bench.live_writer URL BROKER TABLE_ID N [RUN]` sends N chip adjustments (command ids
`RUN:n`, `live` by default, so that runs on one table do not repeat each other), each
published on the broker from the outbox, and prints `version wall-clock-time-before-the-write`
for each."""

from __future__ import annotations

import sys
import time
import uuid

from domain.table.commands import AdjustChips
from infra.services.tables import TableService
from infra.store.live_push import RedisWake
from infra.store.outbox import Wake

SECRET = bytes(range(32))


def main(url: str, broker: str, table: str, writes: int, run: str = "live") -> None:
    with TableService(url=url, secret_key=SECRET) as service:
        service.effects.on(Wake, RedisWake(broker))
        table_id = uuid.UUID(table)
        for n in range(writes):
            time.sleep(0.02)
            started = time.time()
            recorded = service.execute(table_id, AdjustChips(
                command_id=f"{run}:{n}", actor="@system", player="alice", delta=1,
                reason="bench"))
            print(recorded.version, started, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), *sys.argv[5:6])
