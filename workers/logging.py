"""Worker logs: one JSON object a line, with the running task's ids in every line.

structlog renders both its own events and the standard library's records (Celery's "ready",
"received", "succeeded" lines) through the same processors, so a log shipper sees one format.
While a task runs, its `task_id` and `task` name are bound in the log context (and a task
binds the `command_id` it sends), so every line it writes, Celery's own included, names them:

    {"event": "deadline.played", "task_id": "9b1e...", "task": "sabot.expire_decision",
     "command_id": "deadline:4f0c...:12:punter", "request_id": "5d2a...", "events": 1, ...}

A task carries its sender's trail in its message headers (`trace_headers`): the `request_id`
of the HTTP request that caused it (`api.request_ids`), the `command_id` whose outbox sent
it and the `table`. The worker binds them for the task's run (the sender's command id as
`caused_by`, since the task binds its own), so one request id follows a command from the
API's `http.request` line into the worker's lines, and on into the tasks those send.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any

import structlog

_SHARED: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,
]
_FOREIGN: list[Any] = [*_SHARED, structlog.stdlib.ExtraAdder()]  # a record's `extra` fields


def configure_logging(level: int | str = logging.INFO) -> None:
    """Send structlog and standard-library logging to standard error, as JSON lines."""
    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *_SHARED,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=_FOREIGN,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


TRACED = ("request_id", "command_id", "table")
"""The log context a task's message carries from its sender (as headers)."""


def trace_headers(**given: object) -> dict[str, str]:
    """The headers to send a task with: the sender's `TRACED` log context, `given` winning."""
    trail = {**structlog.contextvars.get_contextvars(), **given}
    return {key: str(trail[key]) for key in TRACED if trail.get(key) is not None}


def bind_task(task_id: str, task: str, headers: Mapping[str, Any]) -> None:
    """Name the task and its sender's trail (its message's `headers`) in every log line until
    `unbind_task` (called around each task run)."""
    structlog.contextvars.clear_contextvars()
    trail = {("caused_by" if key == "command_id" else key): str(headers[key])
             for key in TRACED if headers.get(key) is not None}
    structlog.contextvars.bind_contextvars(task_id=task_id, task=task, **trail)


def unbind_task() -> None:
    structlog.contextvars.clear_contextvars()
