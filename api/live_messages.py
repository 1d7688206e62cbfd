"""The bytes of a live stream (`GET /tables/{table}/events`, server-sent events).

Each event is one unnamed message, `id:` its version and `data:` its JSON on one line (JSON
as encoded holds no line break); a stream the server stops ends with the named `end`
message; a quiet stream gets a `keep-alive` comment. A batch's messages are encoded once for
each view of them (`api.live_readers.Batch`), and those bytes are written as they are to
every stream with that view, so the cost of a subscriber is one write, not one encoding.
"""

from __future__ import annotations

from typing import Any

import msgspec

KEEP_ALIVE = b": keep-alive\r\n\r\n"


def messages(events: list[dict[str, Any]]) -> bytes:
    """The events as SSE messages, one after the other."""
    return b"".join(b"id: %d\r\ndata: %b\r\n\r\n" % (e["originator_version"],
                                                     msgspec.json.encode(e)) for e in events)


def end_message(reason: str, last_event_id: int) -> bytes:
    """The `end` message: why the stream stops, and the last id it sent."""
    return b"event: end\r\ndata: %b\r\n\r\n" % msgspec.json.encode(
        {"reason": reason, "last_event_id": last_event_id})
