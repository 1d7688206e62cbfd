"""MessagePack, the stored events' encoding, decoding only: `unpack` one value (a timestamp
becomes ISO 8601 text), and `readable`, an event's signed state as the JSON its `fields` must
equal."""

from __future__ import annotations

import json
import struct
from datetime import UTC, datetime, timedelta
from typing import Any


def unpack(data: bytes) -> Any:
    """Decode one MessagePack value that fills `data`; a timestamp becomes ISO 8601 text."""
    value, end = _unpack(data, 0)
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes after the value")
    return value


def _unpack(data: bytes, i: int) -> tuple[Any, int]:
    b = data[i]
    i += 1
    if b <= 0x7F:
        return b, i
    if b >= 0xE0:
        return b - 0x100, i
    if 0x80 <= b <= 0x8F:
        return _map(data, i, b & 0x0F)
    if 0x90 <= b <= 0x9F:
        return _array(data, i, b & 0x0F)
    if 0xA0 <= b <= 0xBF:
        return _text(data, i, b & 0x1F)
    fixed: dict[int, tuple[str, Any]] = {
        0xC0: ("", None), 0xC2: ("", False), 0xC3: ("", True),
        0xCA: (">f", None), 0xCB: (">d", None), 0xCC: (">B", None), 0xCD: (">H", None),
        0xCE: (">I", None), 0xCF: (">Q", None), 0xD0: (">b", None), 0xD1: (">h", None),
        0xD2: (">i", None), 0xD3: (">q", None),
    }
    if b in fixed:
        fmt, constant = fixed[b]
        if not fmt:
            return constant, i
        size = struct.calcsize(fmt)
        return struct.unpack_from(fmt, data, i)[0], i + size
    sized = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4, 0xDC: 2, 0xDD: 4,
             0xDE: 2, 0xDF: 4, 0xC7: 1, 0xC8: 2, 0xC9: 4}
    if b in sized:
        width = sized[b]
        n = int.from_bytes(data[i : i + width], "big")
        i += width
        if b in (0xC4, 0xC5, 0xC6):
            return data[i : i + n].hex(), i + n
        if b in (0xD9, 0xDA, 0xDB):
            return _text(data, i, n)
        if b in (0xDC, 0xDD):
            return _array(data, i, n)
        if b in (0xDE, 0xDF):
            return _map(data, i, n)
        return _ext(data[i], data[i + 1 : i + 1 + n]), i + 1 + n
    fixext = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}
    if b in fixext:
        n = fixext[b]
        return _ext(data[i], data[i + 1 : i + 1 + n]), i + 1 + n
    raise ValueError(f"MessagePack byte 0x{b:02x} is not used")


def _text(data: bytes, i: int, n: int) -> tuple[str, int]:
    if i + n > len(data):
        raise ValueError("a string runs past the end")
    return data[i : i + n].decode(), i + n


def _array(data: bytes, i: int, n: int) -> tuple[list[Any], int]:
    items = []
    for _ in range(n):
        item, i = _unpack(data, i)
        items.append(item)
    return items, i


def _map(data: bytes, i: int, n: int) -> tuple[dict[Any, Any], int]:
    items = {}
    for _ in range(n):
        key, i = _unpack(data, i)
        items[key], i = _unpack(data, i)
    return items, i


def _ext(code: int, body: bytes) -> str:
    if code != 0xFF:
        raise ValueError(f"MessagePack extension {code} is not a timestamp")
    if len(body) == 4:
        seconds, nanos = int.from_bytes(body, "big"), 0
    elif len(body) == 8:
        word = int.from_bytes(body, "big")
        seconds, nanos = word & (2**34 - 1), word >> 34
    elif len(body) == 12:
        nanos, seconds = struct.unpack(">Iq", body)
    else:
        raise ValueError("a timestamp of the wrong size")
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=seconds,
                                                          microseconds=nanos // 1000)
    return moment.isoformat().replace("+00:00", "Z")


def readable(state: bytes) -> Any:
    """An event's signed state as the JSON its `fields` must equal."""
    return json.loads(json.dumps(unpack(state)))
