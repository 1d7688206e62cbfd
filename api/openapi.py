"""The OpenAPI document's request bodies, from msgspec's own JSON Schema of the body types.

The tables routes read their bodies themselves (to take the command id from a header and the
actor from the token before msgspec validates), so litestar cannot infer them. Here msgspec
describes `OpenTable`, `LookAhead` and the kind-tagged `TableCommand` union (with its
discriminator); the schemas go into the document's components under `Body.<name>` (at
startup, `add_body_schemas`), and each route's operation points its request body at them. In
the command schemas `actor` is dropped (the token decides it) and `command_id` is optional
(the `Idempotency-Key` header may give it).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import msgspec
from litestar import Litestar
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import (
    Discriminator,
    OpenAPIMediaType,
    OpenAPIResponse,
    Operation,
    Reference,
    RequestBody,
    Schema,
)
from litestar.openapi.spec.enums import OpenAPIFormat, OpenAPIType

from api.problems import MEDIA_TYPE, Problem
from api.schemas import LookAhead, OpenTable
from domain.limits import MAX_COMMAND_ID
from domain.table.commands import TableCommand

PREFIX = "Body."
_TEMPLATE = "#/components/schemas/" + PREFIX + "{name}"
_NAMES = {f.metadata.get("alias", f.name): f.name for f in dataclasses.fields(Schema)}
_ONE = frozenset({"items", "additionalProperties", "propertyNames", "not"})
_MANY = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})


def to_openapi(node: dict[str, Any]) -> Schema | Reference:
    """A JSON Schema (as msgspec writes it) as litestar's OpenAPI spec objects."""
    if "$ref" in node:
        return Reference(ref=node["$ref"])
    fields: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ONE and isinstance(value, dict):
            value = to_openapi(value)
        elif key in _MANY:
            value = [to_openapi(v) for v in value]
        elif key == "properties":
            value = {name: to_openapi(v) for name, v in value.items()}
        elif key == "discriminator":
            value = Discriminator(property_name=value["propertyName"], mapping=value["mapping"])
        elif key == "type":
            value = ([OpenAPIType(t) for t in value] if isinstance(value, list)
                     else OpenAPIType(value))
        elif key == "format":
            value = OpenAPIFormat(value)
        fields[_NAMES[key]] = value
    return Schema(**fields)


def _as_api_body(schema: dict[str, Any]) -> dict[str, Any]:
    """A command's schema as this API takes it: no `actor`, `command_id` optional."""
    properties = {k: v for k, v in schema.get("properties", {}).items() if k != "actor"}
    if "command_id" in properties:
        properties["command_id"] = {**properties["command_id"], "maxLength": MAX_COMMAND_ID,
                                    "description": "the command id, unless the "
                                    "Idempotency-Key header gives it"}
    required = [r for r in schema.get("required", []) if r != "command_id"]
    return {**schema, "properties": properties, "required": required}


def body_schemas() -> dict[str, Schema]:
    (command, *_), parts = msgspec.json.schema_components([TableCommand, OpenTable, LookAhead],
                                                          ref_template=_TEMPLATE)
    parts = {name: _as_api_body(s) if "kind" in s.get("properties", {}) else s
             for name, s in parts.items()}
    # msgspec leaves out the keys of a dict keyed by an enum: the look-ahead's are sides
    parts["LookAhead"]["properties"]["known"]["propertyNames"] = {
        "$ref": _TEMPLATE.format(name="Side")}
    parts["TableCommand"] = command
    schemas = {PREFIX + name: to_openapi(s) for name, s in parts.items()}
    return {name: s for name, s in schemas.items() if isinstance(s, Schema)}  # none is a $ref


def add_body_schemas(app: Litestar) -> None:
    """At startup: litestar 2.25 replaces the configured component schemas with the ones it
    generates, so the body schemas are added to the built document instead."""
    document = app.openapi_schema
    assert document.components is not None and not isinstance(document.components, list)
    document.components.schemas = {**(document.components.schemas or {}), **body_schemas()}
    problem = Reference(ref="#/components/schemas/Problem")
    document.components.schemas.setdefault("Problem", to_openapi(
        msgspec.json.schema(Problem)))  # type: ignore[arg-type]
    for item in (document.paths or {}).values():
        for method in ("get", "post", "put", "patch", "delete"):
            operation = getattr(item, method)
            if operation is not None:
                _refusals(operation, method, problem)
                for parameter in operation.parameters or []:
                    if not isinstance(parameter, Reference) and parameter.name in OPTIONAL_BOUNDS:
                        parameter.schema = OPTIONAL_BOUNDS[parameter.name]


def _refusals(operation: Operation, method: str, problem: Reference) -> None:
    """Every refusal an operation may give, as problem details: litestar's own 400 (a
    parameter that does not fit) on every route, 422 on every write; a refusal litestar
    documented as `application/json` is `application/problem+json`."""
    responses = operation.responses if operation.responses is not None else {}
    needed = [400] if method == "get" else [400, 422]
    for code in needed:
        responses.setdefault(str(code), OpenAPIResponse(
            description=_MEANINGS[code],
            content={MEDIA_TYPE: OpenAPIMediaType(schema=problem)}))
    for status, response in responses.items():
        if (status.isdigit() and int(status) >= 400 and not isinstance(response, Reference)
                and response.content and MEDIA_TYPE not in response.content):
            response.content = {MEDIA_TYPE: OpenAPIMediaType(schema=problem)}
    operation.responses = responses


OPTIONAL_BOUNDS = {"after": Schema(type=OpenAPIType.INTEGER, minimum=0,
                                   description="stream the events after this version")}
"""Bounds of optional query parameters, which litestar drops from `int | None` (a query
string cannot hold a null, so the parameter is the bounded integer, or absent)."""


_MEANINGS = {
    400: "the body is not JSON, or a header is malformed",
    401: "no token where one is needed, or a token never issued",
    403: "the token's role may not do this",
    404: "no such table (or player)",
    409: "out of turn, a lost race, or an Idempotency-Key whose request still runs",
    413: "the body is too large",
    422: "a field of the wrong type or value, a rule of the game refused, or a command id "
         "already used on another table",
    429: "too many live streams or tries from this client address (see Retry-After)",
    503: "the view is not yet at the position asked (`at`), the store does not answer, the "
         "table is written by another process for too long (`aggregate-busy`), or the "
         "server holds as many live streams as it may: try again after Retry-After",
}


BEARER: list[dict[str, list[str]]] = [{"bearer": []}]
"""The security of a route that needs a token."""
BEARER_OR_ANONYMOUS: list[dict[str, list[str]]] = [{"bearer": []}, {}]
"""The security of a route anyone may call, showing more to a token (`{}`: no token)."""


def problems(*statuses: int) -> dict[int, ResponseSpec]:
    """The RFC 9457 problem answers a route may give."""
    return {s: ResponseSpec(Problem, description=_MEANINGS[s], media_type=MEDIA_TYPE,
                            generate_examples=False) for s in statuses}


def _body(name: str) -> RequestBody:
    schema = Reference(ref=_TEMPLATE.format(name=name))
    return RequestBody(content={"application/json": OpenAPIMediaType(schema=schema)},
                       required=True)


def with_body(name: str) -> type[Operation]:
    """The class of an operation whose request body is the body schema `name`."""

    @dataclasses.dataclass
    class WithBody(Operation):
        def __post_init__(self) -> None:
            self.request_body = _body(name)

    return WithBody


@dataclasses.dataclass
class CsvToo(Operation):
    """An operation that also answers its 200 as `text/csv` (`Accept: text/csv`,
    `api.csv_files`): the route documents its JSON 200 with `ok(...)`, and this adds CSV."""

    def __post_init__(self) -> None:
        answer = (self.responses or {}).get("200")
        assert isinstance(answer, OpenAPIResponse) and answer.content is not None
        answer.content["text/csv"] = OpenAPIMediaType(schema=Schema(
            type=OpenAPIType.STRING, description="the same rows as CSV, headed by the fields"))


def ok(body: type, description: str) -> dict[int, ResponseSpec]:
    """A route's 200 as JSON `body` (for a route whose handler may also answer otherwise)."""
    return {200: ResponseSpec(body, description=description, generate_examples=False)}


CommandOperation = with_body("TableCommand")
"""`POST /tables/{table}/commands`: its body is one `TableCommand`."""
OpenTableOperation = with_body("OpenTable")
"""`POST /tables`: its body is an `OpenTable`."""
LookAheadOperation = with_body("LookAhead")
"""`POST /tables/{table}/tableau`: its body is a `LookAhead`."""
