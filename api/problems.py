"""RFC 9457 problem details: every refusal of the API is one `application/problem+json` body.

    {"type": "urn:sabot:rule:stake-below-minimum", "title": "Unprocessable Content",
     "status": 422, "detail": "the minimum stake is 10", "rule": "stake-below-minimum",
     "field": "amount"}

`type` names the rule as a URN (stable, not meant to be fetched); `rule` repeats it for
clients that read keys, and `field` names the request's field when one is at fault. Domain
errors keep their own status (422 a broken rule, 409 out of turn or a lost race, 404 unknown);
a body that is not JSON is 400; a body that does not fit its type is 422 naming the field; a
store that does not answer, or a command whose aggregate another process writes for too long
(`aggregate-busy`), is 503 with `Retry-After`. Nothing else escapes as a traceback: an
unexpected error is a bare 500 problem, logged.
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any

import msgspec
from eventsourcing.persistence import ConnectionUnavailableError, OperationalError
from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.types import ExceptionHandlersMap

from domain.errors import DomainError
from infra.store.aggregate_locks import AggregateBusy

MEDIA_TYPE = "application/problem+json"

log = logging.getLogger("sabot.api")


class Problem(msgspec.Struct, omit_defaults=True):
    type: str
    title: str
    status: int
    detail: str
    rule: str | None = None
    field: str | None = None


class ApiProblem(Exception):
    """A refusal decided by the API itself (authentication, a malformed body, a header)."""

    def __init__(self, status: int, detail: str, *, rule: str, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.rule = rule
        self.field = field
        self.headers = headers or {}


def problem(status: int, detail: str, rule: str | None = None, field: str | None = None,
            headers: dict[str, str] | None = None) -> Response[Problem]:
    body = Problem(type=f"urn:sabot:rule:{rule}" if rule else "about:blank",
                   title=HTTPStatus(status).phrase, status=status, detail=detail, rule=rule,
                   field=field)
    return Response(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


_AT = re.compile(r" - at `\$\.?(?P<path>[^`]*)`$")
_NAMED = re.compile(r"(?:missing required|contains unknown) field `(?P<name>[^`]+)`")


def field_of(error: msgspec.ValidationError | str, prefix: str = "") -> str | None:
    """The dotted field a msgspec validation error (or its message) is about (`amount`,
    `settings.decks`)."""
    message = str(error)
    at = _AT.search(message)
    parts = [prefix] if prefix else []
    if at and at.group("path"):
        parts.append(at.group("path"))
    named = _NAMED.search(message)
    if named:
        parts.append(named.group("name"))
    return ".".join(parts) or None


def invalid(error: msgspec.ValidationError, prefix: str = "") -> ApiProblem:
    """A body that decoded as JSON but does not fit its type."""
    return ApiProblem(422, str(error), rule="invalid-field", field=field_of(error, prefix))


MAX_DEPTH = 16
"""A command nests two or three levels; anything deeper than this is not one."""


def decode_json(body: bytes) -> Any:
    """JSON text (UTF-8, at most `MAX_DEPTH` levels deep) to plain values; else a 400."""
    try:
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError) as error:
        raise ApiProblem(400, f"the body is not valid UTF-8 JSON: {error}",
                         rule="malformed-json") from None
    except RecursionError:
        raise _too_deep() from None
    if _deeper_than(value, MAX_DEPTH):
        raise _too_deep()
    return value


def _too_deep() -> ApiProblem:
    return ApiProblem(400, f"the body nests deeper than {MAX_DEPTH} levels", rule="too-deep")


def _deeper_than(value: Any, limit: int) -> bool:
    level: list[Any] = [value] if isinstance(value, dict | list) else []
    for _ in range(limit + 1):
        level = [child for node in level
                 for child in (node.values() if isinstance(node, dict) else node)
                 if isinstance(child, dict | list)]
        if not level:
            return False
    return True


def _api_problem(_: Request[Any, Any, Any], error: ApiProblem) -> Response[Problem]:
    return problem(error.status, error.detail, error.rule, error.field, error.headers)


def _domain_error(_: Request[Any, Any, Any], error: DomainError) -> Response[Problem]:
    return problem(error.status, error.message, error.rule)


def _http_exception(_: Request[Any, Any, Any], error: HTTPException) -> Response[Problem]:
    rule = {404: "not-found", 405: "method-not-allowed",
            413: "body-too-large"}.get(error.status_code, "bad-request")
    detail, field = str(error.detail), None
    if isinstance(error.extra, list) and error.extra and isinstance(error.extra[0], dict):
        first = error.extra[0]  # litestar's own validation of a header or path parameter
        field = first.get("key")
        if first.get("source") == "header" and field:
            field = field.replace("_", "-").title()  # the parameter's header: Idempotency-Key
        detail = f"{detail}: {first.get('message', '')}".rstrip(": ")
    return problem(error.status_code, detail, rule, field, error.headers)


def _store_unavailable(_: Request[Any, Any, Any], error: Exception) -> Response[Problem]:
    log.warning("the store is unavailable: %s", error)
    return problem(503, "the store does not answer; try again shortly", "store-unavailable",
                   headers={"Retry-After": "5"})


def _aggregate_busy(_: Request[Any, Any, Any], error: AggregateBusy) -> Response[Problem]:
    return problem(503, f"{error}; nothing was recorded, try again", "aggregate-busy",
                   headers={"Retry-After": "1"})


def _unexpected(request: Request[Any, Any, Any], error: Exception) -> Response[Problem]:
    log.exception("unexpected error on %s %s", request.method, request.url.path,
                  exc_info=error)
    return problem(500, "the server failed on this request; it has been logged",
                   "internal-error")


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    ApiProblem: _api_problem,
    DomainError: _domain_error,
    HTTPException: _http_exception,
    AggregateBusy: _aggregate_busy,
    OperationalError: _store_unavailable,
    ConnectionUnavailableError: _store_unavailable,
    Exception: _unexpected,
}
