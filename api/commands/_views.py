"""What the reading commands share: the views of a store brought to its head, a TABLE argument,
and printing (JSON, CSV or text). Store errors and views that cannot be brought up to date come
out as one line and exit code 2."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
from eventsourcing.persistence import PersistenceError

from infra.errors import StoreError
from infra.settings import resolve_database_url
from infra.store.opening import open_store
from projections.registry import VIEWS
from projections.runner import Runner
from projections.view import ProjectionFailed

EXIT_STORE = 2


class ViewsUnavailable(Exception):
    """The store could not be opened or read, or a view could not be brought up to date: the
    command prints it and exits 2."""


@contextmanager
def views(database: str | None) -> Iterator[Runner]:
    """A runner over every view of the existing store at `database` (default store if None)."""
    try:
        with open_store(resolve_database_url(database), create=False) as store:
            yield Runner(store, VIEWS)
    except (StoreError, PersistenceError, ProjectionFailed) as error:
        raise ViewsUnavailable(str(error).splitlines()[0] if str(error) else repr(error)) from None


def reading(body: Callable[[Runner], int], database: str | None,
            names: tuple[str, ...]) -> int:
    """Bring the views `names` to the head of the store, then run `body` on them."""
    try:
        with views(database) as runner:
            for name in names:
                runner.catch_up(name)
            return body(runner)
    except ViewsUnavailable as error:
        print(f"sabot: {error}", file=sys.stderr)
        return EXIT_STORE


def print_json(value: Any) -> None:
    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")


def add_output(parser: argparse.ArgumentParser, *, csv: bool = False) -> None:
    """`--json`, and with `csv` the choice of `--json` or `--csv` (`args.csv`)."""
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--json", action="store_true", help="print JSON")
    if csv:
        choice.add_argument("--csv", action="store_true", help="print CSV (RFC 4180)")
