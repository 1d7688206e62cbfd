"""An answer kept in the transaction of the command it answers (the HTTP API's answer for an
`Idempotency-Key`, `api.idempotency`): no transaction of its own, and no round trip of its own
on PostgreSQL, where its statement travels in the recorder's pipeline with the chain's rows and
the COMMIT (`infra.store.recorders`).

`save(..., answer=KeptAnswer(...))` hands it down: once the events have their notification
ids, the recorder runs `answer.statement(notification_ids)` (a template for
`Database.execute`, and its parameters) in the insert's transaction; the statement returns a
row when it kept the answer. Once the transaction commits, `answer.committed(kept)` hears
whether it did. A save that records nothing, fails or rolls back never calls `committed`.
Each layer turns what it knows into what the layer below gives (`given`): the API its answer
from the service's `Recorded`, the service that from the notification ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
U = TypeVar("U")

Statement = tuple[str, Sequence[Any]]


@dataclass(frozen=True)
class KeptAnswer(Generic[T]):
    """The statement keeping an answer made of a `T`, and who hears whether it was kept."""

    statement: Callable[[T], Statement]
    committed: Callable[[bool], None]

    def given(self, made: Callable[[U], T]) -> KeptAnswer[U]:
        """The same answer, kept from a `U` that `made` turns into the `T` it is made of."""
        return KeptAnswer(lambda given: self.statement(made(given)), self.committed)
