"""The one way a request's JSON body is decoded: bounded in size and depth before it costs.

`BoundedRequest` is the application's request class: every route that takes `data` (litestar
decodes it through `Request.json`) and every route that reads `await request.json()` goes
through `api.problems.decode_json`, so a body nested thousands deep is a 400 `too-deep`, never
a `RecursionError`; the size is bounded by the application's `request_max_body_size` (413).
Guards run before the body is decoded, so a rate limit kept as a guard (the PIN tries) counts
a refused body too.
"""

from __future__ import annotations

from typing import Any

from litestar import Request
from litestar.types import Empty

from api.problems import decode_json


class BoundedRequest(Request[Any, Any, Any]):
    async def json(self) -> Any:
        if self._json is Empty:
            self._json = decode_json(await self.body())
        return self._json
