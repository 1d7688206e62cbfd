"""The `sabot` command line: one subcommand a module under `api/commands/`.

Each command module defines `register(subparsers)`, which adds its parser and sets `run` as
the parser's default `handler`. A handler returns the process exit code:

| exit | meaning                                                                        |
|------|--------------------------------------------------------------------------------|
| 0    | done                                                                           |
| 1    | refused: a rule of the game, an unknown table, a failed verification           |
| 2    | usage, settings, or a service that does not answer (PostgreSQL, Redis, a port) |
| 70   | a bug: an error nobody foresaw (one line; `--debug` shows the traceback)       |
| 130  | interrupted (Ctrl-C)                                                           |
| 141  | standard output closed early (`sabot ... \\| head`): nothing more is printed    |

Every failure is one line on standard error, naming the service and its URL (password
redacted) when a server is at fault; no traceback without `--debug`.

Only the command being run is imported and built in full; the others are listed by their
summary (`api.commands.SUMMARIES`), so `sabot --help` starts as fast as argparse itself.

A `sabot` process passes the GIL every `SWITCH_INTERVAL`, not CPython's 5 ms: its threads that
wait on the network (the notices' sender and listener, the views' follower and each of its
round trips, a read waiting for a position) take it back within 1 ms of their answer instead of
up to 5 ms behind a thread that computes (a director's bots, a page). A read of one's own
write on the other replica (`?at=`) waits for a chain of such hand-offs: in the quick topology
benchmark (every command read back, four runs each) its p50 went from 16.5-22.4 to 11.3-19.1
ms, its p95 from 38.5-63.3 to 27.9-37.1 ms.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

import api.commands as commands

EXIT_REFUSED = 1
EXIT_SERVICE = 2
EXIT_BUG = 70
EXIT_INTERRUPTED = 130
EXIT_PIPE = 141
SWITCH_INTERVAL = 0.001  # seconds a thread holds the GIL while another waits for it


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments `argv`, only the command they name is built in full
    (the others by their summary alone); without, every command in full."""
    chosen = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    parser = argparse.ArgumentParser(prog="sabot", description="Event-sourced baccara tournaments.")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of a failure instead of one line")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in _command_modules():
        if chosen is not None and name != chosen and name in commands.SUMMARIES:
            subparsers.add_parser(name, help=commands.SUMMARIES[name])
            continue
        importlib.import_module(f"api.commands.{name}").register(subparsers)
    return parser


def _command_modules() -> list[str]:
    """The modules of `api.commands`, by name (a directory listing: `pkgutil` costs more to
    import than the rest of `sabot --help`)."""
    folder = os.path.dirname(commands.__file__ or "")
    return sorted(entry[:-3] for entry in os.listdir(folder)
                  if entry.endswith(".py") and not entry.startswith("_"))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(sys.argv[1:] if argv is None else argv).parse_args(argv)
    if argv is None:  # a process of its own: PostgreSQL's pg_stat_activity names it
        os.environ.setdefault("PGAPPNAME", f"sabot {args.command}")
        sys.setswitchinterval(SWITCH_INTERVAL)
    from domain.errors import DomainError

    try:
        code: int = args.handler(args)
        sys.stdout.flush()
    except DomainError as error:
        print(f"sabot: {error.message} [{error.rule}]", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        print("sabot: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        return EXIT_PIPE
    except Exception as error:
        if args.debug:
            raise
        code, line = failure(error, args)
        print(f"sabot: {line}", file=sys.stderr)
        return code
    return code


def failure(error: Exception, args: argparse.Namespace) -> tuple[int, str]:
    """The exit code and the one line of an error that escaped a command."""
    from eventsourcing.persistence import PersistenceError
    from kombu.exceptions import OperationalError as BrokerError
    from redis import RedisError

    from infra.errors import SettingsError, StoreError, VaultError
    from infra.settings import redact_url, resolve_database_url
    from infra.store.signing import SigningKeyError

    text = _first_line(error)
    if isinstance(error, StoreError | SettingsError | SigningKeyError | VaultError):
        return EXIT_SERVICE, text
    if isinstance(error, PersistenceError):
        url = redact_url(resolve_database_url(getattr(args, "database", None)))
        return EXIT_SERVICE, f"the store at {url} failed: {text}"
    if isinstance(error, RedisError | BrokerError):
        broker = getattr(args, "broker", None) or os.environ.get("SABOT_BROKER_URL", "")
        return EXIT_SERVICE, f"the broker at {redact_url(broker) or '(embedded)'} failed: {text}"
    if isinstance(error, OSError):
        return EXIT_SERVICE, text
    return EXIT_BUG, (f"unexpected {type(error).__name__}: {text} "
                      "(run `sabot --debug ...` for the traceback)")


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


if __name__ == "__main__":
    sys.exit(main())
