"""`OPTIONS` lists every method of its path in `Allow`.

litestar makes the `OPTIONS` handler of a path when its first handler is registered, and that
handler lists the methods the path had then: on a path whose methods come from two routers
(`/tables`: `POST` from the tables controller, `GET` from the views), or from two handlers of
one controller (`/tournaments`, `/disputes`), later methods are missing. `allow_every_method`,
a hook on every answer, writes the `Allow` of an answer to `OPTIONS` again from the methods the
app serves on the matched path, read from its routes.
"""

from __future__ import annotations

from litestar import Litestar
from litestar.types import Message, Scope

ALLOW = b"allow"


async def allow_every_method(message: Message, scope: Scope) -> None:
    """The `before_send` hook: an `OPTIONS` answer's `Allow`, every method of its path."""
    if (message["type"] != "http.response.start" or scope.get("method") != "OPTIONS"
            or not scope.get("path_template")):
        return
    headers = list(message.get("headers", ()))
    if not any(name.lower() == ALLOW for name, _ in headers):
        return
    app: Litestar = scope["litestar_app"]
    methods = {method for route in app.routes if route.path_format == scope["path_template"]
               for method in route.methods}
    if not methods:
        return
    message["headers"] = [*((name, value) for name, value in headers if name.lower() != ALLOW),
                          (ALLOW, ", ".join(sorted(methods)).encode("ascii"))]
