"""The msgspec mapper: domain events to stored bytes (MessagePack) and back, typed.

eventsourcing's default mapper writes JSON and reads back plain dicts and strings; this one
writes MessagePack and decodes each field to the type its event class declares (read with
`typing.get_type_hints`): UUID, datetime, int, str, bool, enums, tuples, lists, dicts,
Optional, `msgspec.Struct`... A decoder is built once per event class and cached.

Snapshots (eventsourcing `Snapshot` events, whose `state` is the aggregate's `__dict__`) are
typed from the aggregate class's annotations, plus the base attributes `_id`, `_version`,
`_created_on` and `_modified_on`. An aggregate attribute without a class-level annotation
makes taking a snapshot fail loudly, rather than come back untyped when it is loaded.

Upcasting still works as in eventsourcing: a state written by an older `class_version` is
read untyped, passed through the class's `upcast_vN_vN+1` methods, then converted to the
current types.

Wiring: `MAPPER_TOPIC=infra.store.mapper:MsgspecMapper` and
`TRANSCODER_TOPIC=infra.store.mapper:MsgpackTranscoder` (set by `infra.store.urls.store_env`).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Hashable
from datetime import datetime
from functools import cache
from typing import Any, ClassVar, cast, get_origin
from uuid import UUID

import msgspec
from eventsourcing.domain import CanSnapshotAggregate, DomainEventProtocol
from eventsourcing.persistence import (
    Cipher,
    Compressor,
    Mapper,
    MapperDeserialisationError,
    StoredEvent,
    Transcoder,
    find_id_convertor,
)
from eventsourcing.utils import get_topic, resolve_topic

AGGREGATE_BASE_FIELDS: dict[str, Any] = {
    "_id": UUID,
    "_version": int,
    "_created_on": datetime,
    "_modified_on": datetime,
}
# Attributes every event carries outside its encoded state (they are StoredEvent columns).
_ENVELOPE = frozenset({"originator_id", "originator_version"})


class UnmappableState(TypeError):
    """A domain event or aggregate whose state the mapper cannot encode and decode typed."""


class MsgpackTranscoder(Transcoder):
    """Untyped MessagePack, for states read before upcasting (the typed path is the mapper's)."""

    def __init__(self) -> None:
        self._encoder = msgspec.msgpack.Encoder()
        self._decoder = msgspec.msgpack.Decoder()

    def encode(self, obj: Any) -> bytes:
        return self._encoder.encode(obj)

    def decode(self, data: bytes) -> Any:
        return self._decoder.decode(data)


class _Schema:
    """The typed decoder of one class's state: every field optional, absent ones left out."""

    def __init__(self, name: str, hints: dict[str, Any]) -> None:
        fields = [(key, hint | msgspec.UnsetType, msgspec.UNSET) for key, hint in hints.items()]
        fields.append(("class_version", int | msgspec.UnsetType, msgspec.UNSET))
        self.struct = msgspec.defstruct(name, fields, kw_only=True)
        self.names = frozenset(self.struct.__struct_fields__)
        self.decoder = msgspec.msgpack.Decoder(self.struct)

    def decode(self, data: bytes) -> dict[str, Any]:
        return self.to_dict(self.decoder.decode(data))

    def convert(self, state: dict[str, Any]) -> dict[str, Any]:
        return self.to_dict(msgspec.convert(state, self.struct))

    @staticmethod
    def to_dict(obj: Any) -> dict[str, Any]:
        return {
            key: value
            for key in obj.__struct_fields__
            if (value := getattr(obj, key)) is not msgspec.UNSET
        }


def _field_hints(cls: type) -> dict[str, Any]:
    try:
        hints = typing.get_type_hints(cls)
    except Exception as error:
        message = f"cannot read the type hints of {cls.__qualname__}: {error}"
        raise UnmappableState(message) from error
    return {
        key: hint
        for key, hint in hints.items()
        if key not in _ENVELOPE and get_origin(hint) is not ClassVar
    }


@cache
def event_schema(cls: type) -> _Schema:
    """The schema of an event class's state (a snapshot's `state` stays raw, see below)."""
    hints = _field_hints(cls)
    if issubclass(cls, CanSnapshotAggregate):
        hints["state"] = msgspec.Raw
    return _Schema(f"{cls.__qualname__}State", hints)


@cache
def aggregate_schema(cls: type) -> _Schema:
    """The schema of an aggregate's `__dict__` as a snapshot records it."""
    hints = {**AGGREGATE_BASE_FIELDS, **_field_hints(cls)}
    hints.pop("INITIAL_VERSION", None)
    return _Schema(f"{cls.__qualname__}SnapshotState", hints)


class MsgspecMapper(Mapper[UUID]):
    """eventsourcing's `Mapper` with a typed msgspec codec; cipher and compressor still apply."""

    def __init__(
        self,
        transcoder: Transcoder | None = None,
        compressor: Compressor | None = None,
        cipher: Cipher | None = None,
    ) -> None:
        untyped = transcoder if isinstance(transcoder, MsgpackTranscoder) else MsgpackTranscoder()
        super().__init__(transcoder=untyped, compressor=compressor, cipher=cipher)
        self._encoder = msgspec.msgpack.Encoder()

    def to_stored_event(self, domain_event: DomainEventProtocol[UUID]) -> StoredEvent:
        cls = type(domain_event)
        state = dict(vars(domain_event))
        originator_id = state.pop("originator_id")
        originator_version = state.pop("originator_version")
        class_version: int = getattr(cls, "class_version", 1)
        if class_version > 1:
            state["class_version"] = class_version
        _check_fields(cls.__qualname__, state, event_schema(cls).names)
        if isinstance(domain_event, CanSnapshotAggregate):
            aggregate_cls = resolve_topic(domain_event.topic)
            _check_fields(
                f"{aggregate_cls.__qualname__} (snapshot)",
                domain_event.state,
                aggregate_schema(aggregate_cls).names,
            )
        try:
            data = self._encoder.encode(state)
        except (TypeError, ValueError) as error:
            raise UnmappableState(f"cannot encode {cls.__qualname__}: {error}") from error
        if self.compressor:
            data = self.compressor.compress(data)
        if self.cipher:
            data = self.cipher.encrypt(data)
        return StoredEvent(
            originator_id=originator_id,
            originator_version=originator_version,
            topic=get_topic(cls),
            state=data,
        )

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        cls = resolve_topic(stored_event.topic)
        try:
            data = stored_event.state
            if self.cipher:
                data = self.cipher.decrypt(data)
            if self.compressor:
                data = self.compressor.decompress(data)
            state = self._decode_typed(cls, event_schema(cls), data)
            if issubclass(cls, CanSnapshotAggregate):
                aggregate_cls = resolve_topic(state["topic"])
                state["state"] = self._decode_typed(
                    aggregate_cls,
                    aggregate_schema(aggregate_cls),
                    bytes(state["state"]),
                    keep_version=True,
                )
        except Exception as error:
            raise MapperDeserialisationError(
                f"cannot decode stored event {stored_event.topic} of {stored_event.originator_id}"
                f" version {stored_event.originator_version}: {error}"
            ) from error
        convert_id = find_id_convertor(cls, cast(Hashable, type(stored_event.originator_id)))
        state["originator_id"] = convert_id(stored_event.originator_id)
        state["originator_version"] = stored_event.originator_version
        domain_event = object.__new__(cls)
        object.__setattr__(domain_event, "__dict__", state)
        return cast(DomainEventProtocol[UUID], domain_event)

    def _decode_typed(
        self, cls: type, schema: _Schema, data: bytes, *, keep_version: bool = False
    ) -> dict[str, Any]:
        """Decode typed; a state from an older class version is upcast first, then typed.

        An event's state leaves without `class_version`; a snapshotted aggregate's keeps it
        (set to the current version), since `Snapshot.mutate` reads it to decide on upcasts.
        """
        current: int = getattr(cls, "class_version", 1)
        state = schema.decode(data)
        written: int = state.pop("class_version", 1)
        if written < current:
            untyped: dict[str, Any] = self.transcoder.decode(data)
            untyped.pop("class_version", None)
            for version in range(written, current):
                upcast: Callable[[dict[str, Any]], None] = getattr(
                    cls, f"upcast_v{version}_v{version + 1}"
                )
                upcast(untyped)
            raw_state = state.get("state")
            if issubclass(cls, CanSnapshotAggregate):
                untyped.pop("state", None)
            state = schema.convert(untyped)
            if raw_state is not None and issubclass(cls, CanSnapshotAggregate):
                state["state"] = raw_state
        if keep_version and current > 1:
            state["class_version"] = current
        return state


def _check_fields(owner: str, state: dict[str, Any], names: frozenset[str]) -> None:
    unknown = state.keys() - names
    if unknown:
        raise UnmappableState(
            f"{owner} has attributes without type hints: {', '.join(sorted(unknown))}; "
            "annotate them on the class so that they decode typed"
        )
