"""The embedded broker: kombu's filesystem transport, with messages written atomically.

kombu's own `filesystem://` transport creates a message's file under its final name and then
writes into it, while a consumer may already move and read it: a half-written message
(JSONDecodeError, kombu issue 1551) kills the worker. Here a message is written to a hidden
temporary file of the same folder (which consumers do not pick: its name does not end with
`.<queue>.msg`), flushed to disk, then renamed to its final name in one step, so a consumer
sees either no message or all of it. The transport is registered as `sabotfs://`.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

import msgspec
from kombu.exceptions import ChannelError
from kombu.transport import TRANSPORT_ALIASES, filesystem

SCHEME = "sabotfs"


class Channel(filesystem.Channel):
    def _put(self, queue: Any, message: Any, **_: Any) -> None:  # type: ignore[override]
        """Put `message` onto `queue`: written aside, then renamed into the queue's folder."""
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        draft = os.path.join(self.data_folder_out, f".{uuid.uuid4().hex}.tmp")
        try:
            with open(draft, "wb") as file:
                file.write(msgspec.json.encode(message))
                file.flush()
                os.fsync(file.fileno())
            os.replace(draft, final)
        except OSError as error:
            raise ChannelError(f"cannot add {final!r} to the queue") from error


class Transport(filesystem.Transport):
    Channel = Channel


TRANSPORT_ALIASES[SCHEME] = f"{__name__}:Transport"
