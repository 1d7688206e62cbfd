"""What the commands share: the `--database` option, opening the service, progress output."""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def add_database(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", metavar="URL",
                        help="sqlite:///path.db or postgresql://user@host:port/db "
                             "(default: $SABOT_DATABASE_URL, else .sabot/sabot.db)")


def add_seed(parser: argparse.ArgumentParser, what: str) -> None:
    """`--seed HEX`, parsed to bytes; without it, 16 random bytes."""
    parser.add_argument("--seed", type=_seed, default=None,
                        help=f"hex seed: the same seed plays the same {what}")


def port(text: str) -> int:
    """A TCP port number, 1 to 65535 (argparse's `type`)."""
    try:
        number = int(text)
    except ValueError:
        number = 0
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return number


def seed_or_random(seed: bytes | None) -> bytes:
    return seed if seed is not None else secrets.token_bytes(16)


def _seed(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise argparse.ArgumentTypeError("must be hexadecimal") from None


@contextmanager
def progress(label: str, total: int, *, quiet: bool = False) -> Iterator[Progress]:
    """A progress bar on standard error (hidden with --json or when quiet)."""
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), disable=quiet, transient=False,
                   console=None if quiet else _stderr_console())
    with bar:
        bar.add_task(label, total=total)
        yield bar


def _stderr_console() -> Console:

    return Console(file=sys.stderr)
