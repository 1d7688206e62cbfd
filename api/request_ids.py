"""Request ids: every HTTP request has one, in its answer, in its log lines and in its tasks.

`RequestIds` wraps the whole application (routing and refusals included, so a 404 has one
too): it takes a valid incoming `X-Request-ID` (1 to 128 characters among letters, digits and
`-._:`), else makes one (32 hex digits), sends it back in the answer's `X-Request-ID`, and
binds it as `request_id` in structlog's context for the request, so every line logged while
serving it names it, and the tasks its command sends carry it (`workers.logging`). When the
request ends it logs one line through the standard library (JSON on standard error under
`sabot serve`, `workers.logging`; nothing where logging is not configured):

    {"event": "http.request", "method": "POST", "path": "/tables/{table}/commands",
     "status": 200, "duration_ms": 12.4, "request_id": "5d2a...", "level": "info", ...}

`path` is the route's template, never the request's path or query string, and no header is
logged: a token, a body or a store URL never reaches the log.
"""

from __future__ import annotations

import logging
import re
import time
import uuid

import structlog
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Message, Receive, Scope, Send

HEADER = b"x-request-id"
VALID = re.compile(rb"[A-Za-z0-9._:-]{1,128}")

log = logging.getLogger("sabot.api")  # silent where logging is not configured (tests)


def request_id_of(scope: Scope) -> str:
    """The request's valid `X-Request-ID`, else a new one."""
    given = next((value for name, value in scope["headers"] if name.lower() == HEADER), b"")
    return given.decode("ascii") if VALID.fullmatch(given) else uuid.uuid4().hex


class RequestIds:
    """The ASGI wrapper giving each HTTP request its id and its `http.request` log line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        request_id = request_id_of(scope)
        status = 500  # what the client sees if the application ends without answering
        started = time.perf_counter()

        async def answer(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()),
                                      (HEADER, request_id.encode("ascii"))]
            await send(message)

        with structlog.contextvars.bound_contextvars(request_id=request_id):
            try:
                await self.app(scope, receive, answer)
            finally:
                log.info("http.request", extra={
                    "method": scope["method"], "path": scope.get("path_template") or None,
                    "status": status,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1)})
