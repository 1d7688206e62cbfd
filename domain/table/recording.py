"""`@recorded(EventClass)`: an aggregate method that records one event, at the cost of one.

It reads as eventsourcing's `@event(EventClass)` and records the same event (the same class,
topic, fields and order), but the hot path does only what the event needs: calling the method
builds the event once from its keyword arguments, calls the method's body with them, then
moves the aggregate's version on and keeps the event pending, as `Aggregate.trigger_event`
and `mutate` do, without `mutate`'s checks that the event is the aggregate's next: it was
made so. The event is filled field by field in its class's order (as eventsourcing's mapper
fills one it reads back), not through the frozen dataclass's `__init__`, which sets each
field through `object.__setattr__` and costs three times as much; its `__post_init__` checks
only that the aggregate's id is a UUID, which an aggregate's id is. The event's `apply`
(replays: `mutate` still checks each stored event) calls the same body with the event's
fields, the parameter names read once when the class is made.

eventsourcing's decorator re-reads the call's signature, filters the
arguments against the event class, then filters the event's fields against the method again
on every call and every replay; its documentation allows an event class to define `apply`
itself (`apply`) and the aggregate to trigger its events, which is all this does.

Arguments are keyword-only at the call (`self._card_dealt(coup=..., card=...)`), as every
event field is named.

`fold(aggregate, events)` replays stored events, each through its own `mutate` (which checks
it is the aggregate's next): eventsourcing's default projector asserts each event against a
runtime-checkable `Protocol` first, about 25 µs an event, more than applying it. Repositories
take it as their `projector_func`, as eventsourcing's documentation provides.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any, Concatenate, ParamSpec, TypeVar

from eventsourcing.domain import Aggregate

P = ParamSpec("P")
ENVELOPE = ("originator_id", "originator_version", "timestamp")
"""The fields every event begins with, set by the aggregate recording it."""
A = TypeVar("A", bound=Aggregate)


def recorded(
    event_class: type[Aggregate.Event],
) -> Callable[[Callable[Concatenate[A, P], None]], Callable[Concatenate[A, P], None]]:
    """Make the decorated method record `event_class`, and `event_class` apply the method."""

    def decorate(body: Callable[Concatenate[A, P], None]) -> Callable[Concatenate[A, P], None]:
        names = tuple(inspect.signature(body).parameters)[1:]
        fields = getattr(event_class, "__dataclass_fields__", {})
        missing = [name for name in names if name not in fields]
        if missing:
            raise TypeError(f"{event_class.__qualname__} has no field {', '.join(missing)} "
                            f"for {body.__qualname__}")

        call: Callable[..., None] = body
        given = tuple(fields)[len(ENVELOPE):]  # the fields a call gives, in the class's order
        takes_all = set(names) == set(given)

        def apply(event: Aggregate.Event, aggregate: Any) -> None:
            values = event.__dict__
            call(aggregate, **{name: values[name] for name in names})

        setattr(event_class, "apply", apply)  # noqa: B010 (the class's own method, set once)

        def record(aggregate: A, /, *args: P.args, **kwargs: P.kwargs) -> None:
            if args:
                raise TypeError(f"{body.__qualname__} takes its event's fields by name")
            version = aggregate.version + 1
            timestamp = event_class.create_timestamp()
            if len(kwargs) == len(given):  # every field given: filled as the dataclass would
                new = object.__new__(event_class)
                values = new.__dict__
                values["originator_id"] = aggregate.id
                values["originator_version"] = version
                values["timestamp"] = timestamp
                try:
                    for name in given:
                        values[name] = kwargs[name]
                except KeyError as missing:
                    raise TypeError(f"{body.__qualname__} gives no {missing}") from None
                if takes_all:
                    call(aggregate, **kwargs)
                else:
                    apply(new, aggregate)
            else:  # fields left to their defaults: the dataclass fills them
                new = event_class(originator_id=aggregate.id, originator_version=version,
                                  timestamp=timestamp, **kwargs)
                apply(new, aggregate)
            aggregate.version = version
            aggregate.modified_on = timestamp
            aggregate.pending_events.append(new)

        record.__name__, record.__qualname__ = body.__name__, body.__qualname__
        record.__doc__ = body.__doc__
        return record

    return decorate


def fold(aggregate: Any, events: Iterable[Any]) -> Any:
    """`aggregate` (None: from its creation) with `events` applied in order."""
    for domain_event in events:
        aggregate = domain_event.mutate(aggregate)
    return aggregate
