"""`@recorded(EventClass)`: an aggregate method that records one event, at the cost of one.

It reads as eventsourcing's `@event(EventClass)` and records the same event (the same class,
topic, fields and order), but the hot path does only what the event needs: calling the method
builds the event once from its keyword arguments (`Aggregate.trigger_event`), and the event's
`apply` calls the method's body with the event's fields, the parameter names read once when
the class is made. eventsourcing's decorator re-reads the call's signature, filters the
arguments against the event class, then filters the event's fields against the method again
on every call and every replay; its documentation allows an event class to define `apply`
itself and the aggregate to call `trigger_event`, which is all this does.

Arguments are keyword-only at the call (`self._card_dealt(coup=..., card=...)`), as every
event field is named.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from eventsourcing.domain import Aggregate

P = ParamSpec("P")
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

        def apply(event: Aggregate.Event, aggregate: Any) -> None:
            values = event.__dict__
            call(aggregate, **{name: values[name] for name in names})

        setattr(event_class, "apply", apply)  # noqa: B010 (the class's own method, set once)

        def record(aggregate: A, /, *args: P.args, **kwargs: P.kwargs) -> None:
            if args:
                raise TypeError(f"{body.__qualname__} takes its event's fields by name")
            aggregate.trigger_event(event_class, **kwargs)

        record.__name__, record.__qualname__ = body.__name__, body.__qualname__
        record.__doc__ = body.__doc__
        return record

    return decorate
