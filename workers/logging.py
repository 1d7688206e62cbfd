"""Worker logs: one JSON object a line, with the running task's ids in every line.

structlog renders both its own events and the standard library's records (Celery's "ready",
"received", "succeeded" lines) through the same processors, so a log shipper sees one format.
While a task runs, its `task_id` and `task` name are bound in the log context (and a task
binds the `command_id` it sends), so every line it writes, Celery's own included, names them:

    {"event": "deadline.played", "task_id": "9b1e...", "task": "sabot.expire_decision",
     "command_id": "deadline:4f0c...:12:punter", "events": 1, "level": "info", ...}
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

_SHARED: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.stdlib.add_log_level,
    structlog.stdlib.add_logger_name,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,
]


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
            foreign_pre_chain=_SHARED,
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def bind_task(task_id: str, task: str) -> None:
    """Name the task in every log line until `unbind_task` (called around each task run)."""
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(task_id=task_id, task=task)


def unbind_task() -> None:
    structlog.contextvars.clear_contextvars()
