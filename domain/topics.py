"""The names the record knows the aggregates' classes by: their topics, fixed for ever.

eventsourcing stores each event with its class's topic (`module:Class.Event`), and an
aggregate's creation event and snapshots name the aggregate's class the same way; the topics
are hashed into the chain. They were fixed when the record began, so they do not follow the
code when it moves: `keep_topics(Table, "domain.table_aggregate")` gives the aggregate and
each of its event classes the topic it was first recorded under (eventsourcing reads a
class's `TOPIC`) and lets those topics resolve to the classes where they live now.
"""

from __future__ import annotations

from eventsourcing.domain import Aggregate
from eventsourcing.utils import register_topic


def keep_topics(aggregate: type[Aggregate], module: str) -> None:
    """Record `aggregate` and its event classes under `module`, their module when the record
    began."""
    for cls in (aggregate, *_event_classes(aggregate)):
        topic = f"{module}:{cls.__qualname__}"
        setattr(cls, "TOPIC", topic)  # noqa: B010 (eventsourcing reads the class's own TOPIC)
        register_topic(topic, cls)


def _event_classes(aggregate: type[Aggregate]) -> list[type]:
    return [value for value in vars(aggregate).values()
            if isinstance(value, type) and value.__qualname__.startswith(
                f"{aggregate.__qualname__}.")]
