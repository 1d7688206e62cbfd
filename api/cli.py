"""The `sabot` command line: one subcommand a module under `api/commands/`.

Each command module defines `register(subparsers)`, which adds its parser and sets `run` as
the parser's default `handler`. A handler returns the process exit code. Domain errors are
printed as one clear line (exit 2), never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from domain.errors import DomainError
from infra.signing import SigningKeyError


def build_parser() -> argparse.ArgumentParser:
    import api.commands as commands

    parser = argparse.ArgumentParser(prog="sabot", description="Event-sourced baccara tournaments.")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if module.name.startswith("_"):
            continue
        importlib.import_module(f"api.commands.{module.name}").register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except DomainError as error:
        print(f"sabot: {error.message} [{error.rule}]", file=sys.stderr)
        return 2
    except SigningKeyError as error:  # a writer without its key refuses to start
        print(f"sabot: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("sabot: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
