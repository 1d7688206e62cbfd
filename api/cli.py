"""The `sabot` command line: one subcommand a module under `api/commands/`.

Each command module defines `register(subparsers)`, which adds its parser and sets `run` as
the parser's default `handler`. A handler returns the process exit code. Domain errors are
printed as one clear line (exit 2), never as a traceback.

Only the command being run is imported and built in full; the others are listed by their
summary (`api.commands.SUMMARIES`), so `sabot --help` starts as fast as argparse itself.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

import api.commands as commands


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the arguments `argv`, only the command they name is built in full
    (the others by their summary alone); without, every command in full."""
    chosen = None if argv is None else next((a for a in argv if not a.startswith("-")), "")
    parser = argparse.ArgumentParser(prog="sabot", description="Event-sourced baccara tournaments.")
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
    from domain.errors import DomainError
    from infra.errors import SettingsError
    from infra.signing import SigningKeyError

    try:
        code: int = args.handler(args)
    except DomainError as error:
        print(f"sabot: {error.message} [{error.rule}]", file=sys.stderr)
        return 2
    except (SigningKeyError, SettingsError) as error:  # e.g. a writer without its key
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sabot: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
