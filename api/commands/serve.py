"""`sabot serve`: the HTTP API (`api.app`) under uvicorn.

On the embedded default (no broker named), it also runs one `sabot worker` on the embedded
broker, whose director plays the tournaments of the store, so that one command on one
machine runs a whole tournament; `--no-worker` leaves that to `sabot worker` processes
started separately (production).
"""

from __future__ import annotations

import argparse
import os
from contextlib import nullcontext

from api.commands._common import add_database
from api.commands.worker import running_worker
from infra.settings import HOME, absolute_database_url, resolve_database_url


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("serve", help="run the HTTP API")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--broker", metavar="URL",
                        help="Redis URL for live channels shared by several API processes "
                             "(default: $SABOT_BROKER_URL; in memory when none)")
    parser.add_argument("--no-worker", dest="worker", action="store_false",
                        help="do not start the embedded worker and director")
    add_database(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from api.app import create_app

    app = create_app(args.database, broker_url=args.broker)
    broker = args.broker if args.broker is not None else os.environ.get("SABOT_BROKER_URL", "")
    database = absolute_database_url(resolve_database_url(args.database))
    with running_worker("", database, HOME / "serve-worker.log") if args.worker and not broker \
            else nullcontext():
        uvicorn.run(app, host=args.host, port=args.port, log_level="info",
                    proxy_headers=False, timeout_graceful_shutdown=5)  # live streams never end
    return 0
