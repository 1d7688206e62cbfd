"""Decision deadlines: a player who does not decide in time gets the default move.

When a command leaves a table with a time limit awaiting a decision (`state.coup.to_act()`),
the service records a `Deadline` with it (`infra.store.outbox`) and its process sends the task
(`workers.services.send_deadline`); `schedule_deadline` sends one by hand for a table as it
stands. When the deadline comes, `expire_decision`
sends `PlayDefault(coup, side)` with the deterministic command id
`deadline:{table_id}:{coup}:{side}`:

- the player decided in time: `PlayDefault` finds the decision made and records nothing;
- the task is delivered twice (a redelivery, a duplicate send): the second answers what the
  first recorded, since the service applies a command id once;
- the default was played and the next decision is now awaited (the banker after the
  punter): its deadline, recorded in the outbox with the command (`infra.store.outbox`), is sent
  by this worker's service once the command commits.

A turn to bet with a bet clock (a rotating betting order, `domain.table.betting_order`) works the
same way: when its `BetDeadline` comes, `expire_bet_turn` sends `PassBetTurn(coup, player,
reason clock)` with the command id `bet-deadline:{table_id}:{coup}:{player}`, which records
nothing if the player bet (or passed) in time; the next player's turn, and its deadline,
follow from the outbox. The shoe offered to a player (chemin de fer) runs on the decision
clock likewise: when its `BankDeadline` comes, `expire_bank_offer` sends `DeclineBank(player,
coup)` as the clock's with the command id `bank-deadline:{table_id}:{coup}:{player}`, which
records nothing if the player took the shoe or let it pass in time.

A pause of the table's tournament stops its clocks: a deadline that comes during the pause
plays nothing (the resume sends every clock the tables await again, with the time it had left:
`infra.services.tables.TableService.restart_clocks`), and one that comes after a pause
that fell within its time finds time left (`TableService.clock_left`) and is sent again for
that time.

The message carries ids only (table, coup, side or player): the worker plays it on its own store
(`workers.services.worker_database_url`), so producer and worker must share that store.
"""

from __future__ import annotations

import time
import uuid

import msgspec
import structlog
from celery import Celery, Task

from domain.game.coup import Side
from domain.table.betting_order import PassReason
from domain.table.commands import DeclineBank, PassBetTurn, PlayDefault, TableCommand
from domain.table.defaults import (
    CLOCK,
    bank_deadline_command_id,
    bet_deadline_command_id,
    deadline_command_id,
)
from domain.table.room import RoundOver, TournamentPaused
from domain.table.state import TableState
from infra.store.outbox import BankDeadline, BetDeadline, Clock, Deadline
from workers.app import EXPIRE_BANK_OFFER, EXPIRE_BET_TURN, EXPIRE_DECISION, app
from workers.services import send_deadline, table_service
from workers.transient import RETRY_OPTIONS

DECISION_SECONDS = 30.0
ACTOR = CLOCK
LATE = 0.5  # seconds: a deadline this early (the broker's countdown) is on time

log = structlog.get_logger("sabot.workers.deadlines")


def schedule_deadline(table_id: uuid.UUID, state: TableState, *,
                      seconds: float = DECISION_SECONDS, via: Celery = app) -> str | None:
    """Schedule the default for the decision `state` awaits, `seconds` from now.

    Returns the task id, or None when the table awaits no decision. `via` is the Celery app
    (the broker) to send through.
    """
    side = state.coup.to_act() if state.coup is not None else None
    if side is None:
        return None
    return send_deadline(Deadline(table_id, state.coup_number, side, seconds), via=via)


@app.task(name=EXPIRE_DECISION, bind=True, **RETRY_OPTIONS)
def expire_decision(self: Task, table_id: str, coup: int, side: str, *,
                    seconds: float = DECISION_SECONDS) -> int:
    """Play the default for `side` in coup `coup` unless it was decided; events recorded. The
    next decision's deadline, if the table has a time limit, follows from the outbox."""
    command_id = deadline_command_id(table_id, coup, side)
    command = PlayDefault(command_id=command_id, actor=ACTOR, coup=coup, side=Side(side))
    clock = Deadline(uuid.UUID(table_id), coup, Side(side), seconds)
    return _expire(self, clock, command, "deadline.decided-in-time", "deadline.played",
                   coup=coup, side=side, seconds=seconds)


@app.task(name=EXPIRE_BET_TURN, bind=True, **RETRY_OPTIONS)
def expire_bet_turn(self: Task, table_id: str, coup: int, player: str, *,
                    seconds: float = 0.0) -> int:
    """Pass `player`'s turn to bet on coup `coup` (the bet clock ran out) unless they bet or
    passed in time; events recorded. The next turn's deadline follows from the outbox."""
    command_id = bet_deadline_command_id(table_id, coup, player)
    command = PassBetTurn(command_id=command_id, actor=ACTOR, player=player, coup=coup,
                          reason=PassReason.CLOCK)
    clock = BetDeadline(uuid.UUID(table_id), coup, player, seconds)
    return _expire(self, clock, command, "deadline.bet-in-time", "deadline.turn-passed",
                   coup=coup, player=player, seconds=seconds)


@app.task(name=EXPIRE_BANK_OFFER, bind=True, **RETRY_OPTIONS)
def expire_bank_offer(self: Task, table_id: str, coup: int, player: str, *,
                      seconds: float = 0.0) -> int:
    """Let the shoe offered to `player` after coup `coup` pass on (their clock ran out)
    unless they took it or let it pass in time; events recorded. The next offer's deadline
    follows from the outbox."""
    command = DeclineBank(command_id=bank_deadline_command_id(table_id, coup, player),
                          actor=ACTOR, player=player, coup=coup)
    clock = BankDeadline(uuid.UUID(table_id), coup, player, seconds)
    return _expire(self, clock, command, "deadline.bank-in-time", "deadline.bank-passed",
                   coup=coup, player=player, seconds=seconds)


def _expire(task: Task, clock: Clock, command: TableCommand, in_time: str,
            played: str, **awaited: object) -> int:
    """Send an expired deadline's command once; log `in_time` when it found nothing left to
    do, `played` when it recorded events. A clock a pause stopped for a while has time left:
    it is sent again with that time."""
    structlog.contextvars.bind_contextvars(command_id=command.command_id)
    service = table_service(via=task.app)
    table_id = str(clock.table_id)
    if service.room_of(service.table(clock.table_id)).paused:  # the resume sends it again
        log.info("deadline.paused", table_id=table_id, **awaited)
        return 0
    left = service.clock_left(clock, time.time()) if clock.seconds else None
    if left is not None and left > LATE:
        send_deadline(msgspec.structs.replace(clock, seconds=left), via=task.app)
        log.info("deadline.paused-for-a-while", table_id=table_id, left=round(left, 1),
                 **awaited)
        return 0
    first = service.recorded_command(command.command_id) is None
    try:
        recorded = service.execute(clock.table_id, command)
    except TournamentPaused:  # the room is stopped: no default is played while paused
        log.info("deadline.paused", table_id=table_id, **awaited)
        return 0
    except RoundOver:  # betting closes on the next round's coup once it starts
        log.info("deadline.round-over", table_id=table_id, **awaited)
        return 0
    if not recorded.events:
        log.info(in_time, table_id=table_id, **awaited)
        return 0
    if not first:
        log.info("deadline.already-played", table_id=table_id, **awaited)
        return 0
    log.info(played, table_id=table_id, **awaited,
             events=[event["type"] for event in recorded.events])
    return len(recorded.events)
